package ondisk

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// CompactionMarkerName is the garbage collector's marker in a ledger
// directory's current/: while it compacts entry log O, the file holds O's
// id in lower-case hexadecimal and a newline, replaced atomically
// (docs/format.md, "Compaction marker").
const CompactionMarkerName = "compacting"

// EncodeCompactionMarker returns the marker's bytes for log id.
func EncodeCompactionMarker(id int64) []byte { return []byte(strconv.FormatInt(id, 16) + "\n") }

// ReadCompactionMarker reads the compaction marker of current (a ledger
// directory's current/): the id of the log being compacted, ok false
// without a marker. Bytes that are not a log id are an error matching
// entrylog.ErrCorruption naming the file: the marker is written
// atomically, so they are damage.
func ReadCompactionMarker(fs vfs.FS, current string) (id int64, ok bool, err error) {
	path := filepath.Join(current, CompactionMarkerName)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, errors.Wrapf(err, "bookie: opening %s", path)
	}
	defer f.Close()
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	id, perr := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 16, 64)
	if perr != nil || id < 0 || id > entrylog.MaxLogID {
		return 0, false, errors.Wrapf(entrylog.ErrCorruption, "bookie: %s holds %q, not an entry log id", path, buf[:n])
	}
	return id, true, nil
}

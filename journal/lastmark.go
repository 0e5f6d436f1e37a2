package journal

import (
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// LastMarkFileName returns the name of the lastMark file of journal index
// (from 0) among count journals: "lastMark" when there is one journal,
// "lastMark.<index>" when there are several, as upstream names them. The
// file lives in every ledger directory's "current" subdirectory.
func LastMarkFileName(index, count int) string {
	if count == 1 {
		return "lastMark"
	}
	return "lastMark." + strconv.Itoa(index)
}

// LastMarkPath returns the path of a lastMark file in a ledger directory.
func LastMarkPath(ledgerDir, name string) string {
	return filepath.Join(ledgerDir, currentDir, name)
}

// ReadLastMark reads the lastMark file name from every ledger directory and
// returns the greatest mark, as upstream does: the checkpoint wrote the same
// mark to every directory, and a directory that missed the last one holds
// an older mark. A missing file is skipped silently (a first start); a file
// shorter than 16 bytes or one that cannot be read is skipped and reported
// in problems, for a warning: upstream skips it too, and an older mark (the
// zero mark at worst) only replays more. Bytes after the first 16 are
// ignored, as upstream ignores them.
func ReadLastMark(fs vfs.FS, ledgerDirs []string, name string) (mark LogMark, problems []error) {
	for _, dir := range ledgerDirs {
		path := LastMarkPath(dir, name)
		m, err := readLastMarkFile(fs, path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				problems = append(problems, err)
			}
			continue
		}
		if mark.Less(m) {
			mark = m
		}
	}
	return mark, problems
}

func readLastMarkFile(fs vfs.FS, path string) (LogMark, error) {
	f, err := fs.Open(path)
	if err != nil {
		return LogMark{}, err
	}
	defer f.Close()
	var b [logMarkSize]byte
	n, err := f.ReadAt(b[:], 0)
	if n < logMarkSize {
		if err == nil || err == io.EOF {
			return LogMark{}, errors.Newf("journal: %s holds %d bytes, a last log mark is %d", path, n, logMarkSize)
		}
		return LogMark{}, errors.Wrapf(err, "journal: reading %s", path)
	}
	return decodeLogMark(b[:]), nil
}

// writeLastMark writes m to the lastMark file name of every ledger
// directory, each replaced atomically and synced (a temporary file, synced,
// renamed over the old one, the directory synced), so that a crash leaves
// either the old mark or the new one. It returns how many directories hold
// the new mark and the errors of the others.
func writeLastMark(fs vfs.FS, ledgerDirs []string, name string, m LogMark) (written int, err error) {
	data := appendLogMark(nil, m)
	var errs []error
	for _, dir := range ledgerDirs {
		path := LastMarkPath(dir, name)
		werr := fs.MkdirAll(filepath.Dir(path), 0o755)
		if werr == nil {
			werr = vfs.ReplaceFile(fs, path, path+".tmp", data)
		}
		if werr != nil {
			errs = append(errs, ioError(werr, "journal: writing "+path))
			continue
		}
		written++
	}
	return written, errors.Join(errs...)
}

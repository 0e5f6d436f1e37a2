package journal

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// FuzzReplay feeds arbitrary bytes to Replay as a journal file, with a
// synced-length file when synced >= 0: it must deliver records that lie in
// the file in increasing order, or stop with a torn tail or an error
// matching ErrCorruption, never panic nor allocate more than the file.
func FuzzReplay(f *testing.F) {
	var seed []byte
	seed = encodeHeader(V6)
	seed = appendMasterKeyRecord(seed, 7, []byte("key"))
	seed = appendEntryRecord(seed, 7, 0, []byte("payload"))
	seed = appendPadding(seed, int64(len(seed)), 512)
	seed = appendFenceRecord(seed, 7)
	seed = appendExplicitLACRecord(seed, 7, []byte("lac"))
	f.Add(seed, int64(len(seed)))
	f.Add(seed, int64(-1))
	f.Add(seed[:len(seed)-3], int64(512))
	f.Add(append(seed, make([]byte, 1024)...), int64(-1))
	f.Add([]byte{}, int64(-1))
	// As the writer leaves a file: records, padding, then the zeros of
	// its pre-allocation; the synced length at the end of the records.
	pre := appendZeros(slices.Clone(seed), 4096-len(seed))
	f.Add(pre, int64(len(seed)))
	// A record written into the zeros and torn by a power loss: its
	// length there, its payload's end still zeros.
	torn := appendEntryRecord(slices.Clone(seed), 7, 1, []byte("torn payload"))
	torn = appendZeros(torn[:len(torn)-6], 4096-len(torn)+6)
	f.Add(torn, int64(len(seed)))
	// Half a length field written into the zeros.
	half := appendEntryRecord(slices.Clone(seed), 7, 1, []byte("x"))
	half = appendZeros(half[:len(seed)+2], 4096-len(seed)-2)
	f.Add(half, int64(len(seed)))
	v4 := appendEntryRecord(encodeHeader(V4), 1, 2, []byte("x"))
	f.Add(v4, int64(len(v4)))
	f.Fuzz(func(t *testing.T, data []byte, synced int64) {
		fs := vfs.NewMem()
		dir := CurrentDir("j")
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, fs, filepath.Join(dir, FileName(1)), data)
		if synced >= 0 {
			writeTestFile(t, fs, filepath.Join(dir, SyncedFileName(1)), appendSyncedMark(nil, synced))
		}
		last := int64(-1)
		res, err := Replay(fs, "j", LogMark{}, func(r *Record) error {
			if r.Pos.Offset <= last || r.End.Offset > int64(len(data)) || r.Pos.FileID != 1 {
				t.Fatalf("record at %s..%s after %d in a %d-byte file", r.Pos, r.End, last, len(data))
			}
			last = r.Pos.Offset
			return nil
		})
		if err != nil && !errors.Is(err, ErrCorruption) {
			t.Fatalf("replay error that is not corruption: %v", err)
		}
		for _, tt := range res.TornTails {
			if tt.Offset >= tt.Size || tt.Size != int64(len(data)) {
				t.Fatalf("torn tail %s of a %d-byte file", tt, len(data))
			}
		}
	})
}

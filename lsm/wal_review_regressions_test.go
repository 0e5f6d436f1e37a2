package lsm

import (
	"github.com/bookie-index/bookie-index/vfs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/stretchr/testify/require"
)

// TestEmptyNewerWALKeepsTornTailTolerated: a crash inside Open, after
// createWAL and before the LogAndApply that makes the replayed WAL obsolete,
// left the torn WAL followed by a newer, empty WAL, and the next Open took
// the torn tail for damage in a WAL "synced in full" (found in review).
func TestEmptyNewerWALKeepsTornTailTolerated(t *testing.T) {
	fs, n := killedDB(t)
	wals := filesOf(t, fs, ".log")
	path := wals[len(wals)-1]
	data := readFile(t, fs, path)
	// A torn append beyond the synced mark: a few non-zero bytes of a
	// record header that never completed.
	data = append(data, 0x11, 0x22, 0x33, 0x44, 0x55)
	writeWholeFile(t, fs, path, data)

	// Sanity: alone, the torn tail is tolerated.
	fs2 := fs.CrashClone(vfs.CrashOptions{KeepUnsyncedTail: true})
	d, err := Open("db", smallOptions(fs2))
	require.NoError(t, err)
	require.NoError(t, d.Close())

	// What a crash in open() between createWAL and LogAndApply leaves.
	_, num, _ := manifest.ParseFileName(filepath.Base(path))
	writeWholeFile(t, fs, manifest.FilePath("db", manifest.FileKindLog, num+10), nil)
	writeWholeFile(t, fs, manifest.FilePath("db", manifest.FileKindSyncedLength, num+10), nil)
	d, err = Open("db", smallOptions(fs))
	require.NoError(t, err, "a crash during recovery must not make the next open refuse")
	for i := range n {
		_, err := d.Get([]byte(matrixKey(i)))
		require.NoError(t, err)
	}
	require.NoError(t, d.Close())
}

// TestHoleBeyondSyncedLengthIsATornTail: after a power loss, unsynced pages
// of the newest WAL can reach the disk out of order: a hole (zeros) beyond
// the synced mark followed by a later block that did reach the disk. No
// acknowledged-synced byte is damaged, yet Open called it corruption and
// refused (found in review).
func TestHoleBeyondSyncedLengthIsATornTail(t *testing.T) {
	fs := vfs.NewMem()
	o := quietOptions(fs, &logBuffer{})
	o.WriteBufferSize = 4 << 20
	d, err := Open("db", o)
	require.NoError(t, err)
	var b Batch
	for i := range 1500 {
		b.Reset()
		b.Set([]byte(matrixKey(i)), []byte(matrixValue(i)))
		wo := Sync
		if i >= 20 {
			wo = NoSync
		}
		require.NoError(t, d.Apply(&b, wo))
	}
	killed := fs.CrashClone(vfs.CrashOptions{KeepUnsyncedTail: true})
	require.NoError(t, d.Close())
	wals := filesOf(t, killed, ".log")
	path := wals[len(wals)-1]
	data := readFile(t, killed, path)
	_, num, _ := manifest.ParseFileName(filepath.Base(path))
	sl, ok, err := manifest.ReadSyncedLength(killed, "db", num)
	require.NoError(t, err)
	require.True(t, ok)
	syncedLen := int(sl)
	require.Greater(t, len(data), syncedLen+3*32<<10, "need unsynced blocks")
	// The first unsynced full block never reached the disk; later ones did.
	start := (syncedLen/(32<<10) + 1) * (32 << 10)
	for i := start; i < start+32<<10; i++ {
		data[i] = 0
	}
	writeWholeFile(t, killed, path, data)
	o.FS = killed
	d, err = Open("db", o)
	require.NoError(t, err, "damage beyond the synced mark is a torn tail")
	for i := range 20 {
		_, err := d.Get([]byte(matrixKey(i)))
		require.NoError(t, err)
	}
	require.NoError(t, d.Close())
}

// TestNoSpaceDuringOpenKeepsTornTailTolerated: the same without a crash:
// Open on a full disk. The recovery's LogAndApply failed with ENOSPC, Open
// left the new, empty WAL in place, and once space returned every Open
// refused the torn WAL as corruption (found in review).
func TestNoSpaceDuringOpenKeepsTornTailTolerated(t *testing.T) {
	fs, _ := killedDB(t)
	wals := filesOf(t, fs, ".log")
	path := wals[len(wals)-1]
	data := append(readFile(t, fs, path), 0x11, 0x22, 0x33, 0x44, 0x55)
	writeWholeFile(t, fs, path, data)

	sawWAL := false
	inj := vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpCreate && strings.HasSuffix(op.Path, ".log") {
			sawWAL = true
		}
		if sawWAL && (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync) && strings.Contains(op.Path, "MANIFEST") {
			return syscall.ENOSPC
		}
		return nil
	})
	_, err := Open("db", smallOptions(vfs.NewErrorFS(fs, inj)))
	require.Error(t, err)
	t.Logf("open on a full disk: %v", err)
	t.Logf("WALs left: %v", filesOf(t, fs, ".log"))
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err, "space returned: the open must succeed")
	require.NoError(t, d.Close())
}

package vfs

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSyncDir: a creation is durable once SyncDir returns and not before;
// a failed Close of the directory does not fail it, a failed Sync does.
func TestSyncDir(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("d", 0o755))
	writeFile(t, fs, "d/f", "x", true)
	requireMissing(t, fs.CrashClone(CrashOptions{}), "d/f")
	require.NoError(t, SyncDir(fs, "d"))
	requireContents(t, fs.CrashClone(CrashOptions{}), "d/f", "x")

	err := SyncDir(fs, "missing")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "syncing directory missing")

	writeFile(t, fs, "d/g", "y", true)
	require.NoError(t, SyncDir(NewErrorFS(fs, OnOp(OpClose, "d")), "d"), "the sync succeeded: the changes are durable")
	requireContents(t, fs.CrashClone(CrashOptions{}), "d/g", "y")

	err = SyncDir(NewErrorFS(fs, OnOp(OpSync, "d")), "d")
	require.ErrorIs(t, err, ErrInjected)
	require.ErrorContains(t, err, "syncing directory d")
}

// TestReplaceFile fails each operation of a replacement in turn, and
// crashes after it: name holds the old bytes or the new ones, never
// anything else; a failure before the rename leaves no temporary file; a
// replacement that returned nil survives the crash.
func TestReplaceFile(t *testing.T) {
	setup := func() *MemFS {
		fs := NewMem()
		require.NoError(t, fs.MkdirAll("d", 0o755))
		writeFile(t, fs, "d/name", "old", true)
		syncDir(t, fs, "d")
		return fs
	}
	count := OnIndex(-1)
	require.NoError(t, ReplaceFile(NewErrorFS(setup(), count), "d/name", "d/name.tmp", []byte("new")))
	require.EqualValues(t, 8, count.Ops(), "create, write, sync, close, rename, open-dir, sync, close")
	for i := range count.Ops() {
		t.Run(fmt.Sprint("fail=", i), func(t *testing.T) {
			fs := setup()
			err := ReplaceFile(NewErrorFS(fs, OnIndex(i)), "d/name", "d/name.tmp", []byte("new"))
			got, rerr := readFile(fs, "d/name")
			require.NoError(t, rerr)
			if i < 5 { // up to the rename
				require.ErrorIs(t, err, ErrInjected)
				require.Equal(t, "old", got)
				requireMissing(t, fs, "d/name.tmp")
			}
			crashed, cerr := readFile(fs.CrashClone(CrashOptions{}), "d/name")
			require.NoError(t, cerr)
			require.Contains(t, []string{"old", "new"}, crashed)
			if err == nil {
				require.Equal(t, "new", crashed, "a replacement that returned nil is durable")
			}
		})
	}
}

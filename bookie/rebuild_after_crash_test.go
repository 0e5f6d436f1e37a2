package bookie

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/rebuild"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestRebuildAfterCrash: entries a crash kept out of the index (their
// checkpoint died after the entry-log sync) come back with a rebuild; a
// torn tail is reported, not fatal.
func TestRebuildAfterCrash(t *testing.T) {
	root := t.TempDir()
	opts := osOptions(root, 1)
	s, err := Open(opts)
	require.NoError(t, err)
	for e := int64(0); e < 50; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	for e := int64(50); e < 80; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	s.Dirs()[0].hooks.Store(&testHooks{afterEntryLogFlush: func() error { return errCrash }})
	require.ErrorIs(t, s.Checkpoint(), errCrash)
	s.Dirs()[0].abandon()
	// A torn record at the end of the last log.
	logDir := filepath.Join(opts.LedgerDirs[0], "current")
	f, err := os.OpenFile(filepath.Join(logDir, "0.log"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0, 0, 1, 0, 0, 0})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	res, err := rebuild.LocationsIndex(rebuild.Options{LedgerDir: opts.LedgerDirs[0], IndexDir: opts.IndexDirs[0]})
	require.NoError(t, err)
	require.Len(t, res.TornLogs, 1)
	require.Contains(t, res.TornLogs[0], "0.log")
	s, err = Open(opts)
	require.NoError(t, err)
	defer s.Close()
	for e := int64(0); e < 80; e++ {
		requireEntry(t, s, 1, e, payload(1, e, 0))
	}
}

// TestRebuildOnOneFS rebuilds, on the in-memory FS, the index of a storage
// that crashed (logs and indexes at one instant) after a checkpoint's
// entry-log sync, with sort runs small enough to spill: the entries the
// index missed come back, and a second crash right after the rebuild keeps
// them (the rebuilt index is durable once the rebuild returns).
func TestRebuildOnOneFS(t *testing.T) {
	env := newTestEnv()
	env.tweak = func(o *Options) { o.LogSizeLimit = 8 << 10 }
	s := env.open(t)
	for e := int64(0); e < 50; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	for e := int64(50); e < 80; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	var crashed *vfs.MemFS
	s.Dirs()[0].hooks.Store(&testHooks{afterEntryLogFlush: func() error {
		crashed = env.crashClone(3)
		return errCrash
	}})
	require.ErrorIs(t, s.Checkpoint(), errCrash)
	env.restartOn(s, crashed)

	res, err := rebuild.LocationsIndex(rebuild.Options{
		LedgerDir: env.dirs[0], FS: env.mem, RunEntries: 16,
		Engine: &lsm.Options{TargetFileSizeBase: 64 << 10, BlockSize: 1 << 10},
	})
	require.NoError(t, err)
	require.Greater(t, res.Runs, 1)
	require.Equal(t, int64(80), res.Entries)
	require.NotEmpty(t, res.BackupPath)
	env.mem = env.crashClone(0)
	names, err := env.mem.List(filepath.Join(env.dirs[0], "current"))
	require.NoError(t, err)
	for _, name := range names {
		require.NotContains(t, name, "rebuild-", "temporary files are gone")
	}
	require.Contains(t, names, filepath.Base(res.BackupPath))
	s = env.open(t)
	for e := int64(0); e < 80; e++ {
		requireEntry(t, s, 1, e, payload(1, e, 0))
	}
	require.NoError(t, s.Close())
}

package bookie

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// osOptions returns storage options on the real file system under root.
func osOptions(root string, dirs int) *Options {
	o := &Options{
		FlushInterval:  -1,
		GCWaitTime:     -1,
		WriteCacheSize: int64(dirs) * 4 << 20,
		ReadCacheSize:  int64(dirs) << 20,
		LogSizeLimit:   32 << 10,
		Index: &entrylocation.Options{Engine: &lsm.Options{
			WriteBufferSize: 64 << 10, TargetFileSizeBase: 64 << 10, BlockSize: 4 << 10,
		}},
	}
	for i := range dirs {
		o.LedgerDirs = append(o.LedgerDirs, filepath.Join(root, "ledgers", string(rune('a'+i))))
		o.IndexDirs = append(o.IndexDirs, filepath.Join(root, "index", string(rune('a'+i))))
	}
	return o
}

// dumpLocations reads every key of the index at path.
func dumpLocations(t testing.TB, path string) map[[2]int64]int64 {
	t.Helper()
	db, err := lsm.Open(path, &lsm.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	m := map[[2]int64]int64{}
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		require.Len(t, k, 16)
		m[[2]int64{int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[8:]))}] = int64(binary.BigEndian.Uint64(v))
	}
	require.NoError(t, it.Close())
	return m
}

// writeRebuildWorkload writes entries over several checkpoints and logs:
// rewrites, a deleted ledger, a ledger deleted and written again, fenced
// ledgers with master keys. It returns the expected entries.
func writeRebuildWorkload(t *testing.T, s *Storage) model {
	m := model{}
	add := func(l, e int64, v int) {
		require.NoError(t, s.AddEntry(l, e, payload(l, e, v)))
		if m[l] == nil {
			m[l] = map[int64][]byte{}
		}
		m[l][e] = payload(l, e, v)
	}
	for l := int64(0); l < 5; l++ {
		require.NoError(t, s.SetMasterKey(l, []byte{'k', byte(l)}))
	}
	for round := range 4 {
		for l := int64(0); l < 8; l++ {
			for e := int64(round * 25); e < int64(round*25+25); e++ {
				add(l, e, 0)
			}
		}
		if round == 2 {
			for e := int64(0); e < 100; e += 7 {
				add(3, e, 1) // rewrites
			}
		}
		require.NoError(t, s.Checkpoint())
	}
	for l := int64(0); l < 5; l++ {
		_, err := s.SetFenced(l)
		require.NoError(t, err)
	}
	_, err := s.DeleteLedger(6)
	require.NoError(t, err)
	delete(m, 6)
	_, err = s.DeleteLedger(7)
	require.NoError(t, err)
	delete(m, 7)
	for e := int64(0); e < 10; e++ {
		add(7, e, 2)
	}
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	return m
}

// TestRebuild is upstream's LocationsIndexRebuildTest: write, shut down,
// rebuild, and every location is what the index held, every entry reads
// back, ledgers keep their metadata. Then again with tiny sort runs, so
// that the runs are spilled and merged.
func TestRebuild(t *testing.T) {
	root := t.TempDir()
	opts := osOptions(root, 2)
	s, err := Open(opts)
	require.NoError(t, err)
	want := writeRebuildWorkload(t, s)
	require.NoError(t, s.Close())

	for i, runEntries := range []int{0, 7, 1000} {
		var before []map[[2]int64]int64
		for d := range opts.LedgerDirs {
			before = append(before, dumpLocations(t, filepath.Join(opts.IndexDirs[d], "current", "locations")))
		}
		total := 0
		for d := range opts.LedgerDirs {
			var progress []RebuildProgress
			res, err := RebuildLocationsIndex(RebuildOptions{
				LedgerDir: opts.LedgerDirs[d], IndexDir: opts.IndexDirs[d],
				Engine:     &lsm.Options{TargetFileSizeBase: 64 << 10, BlockSize: 4 << 10},
				RunEntries: runEntries,
				Progress:   func(p RebuildProgress) { progress = append(progress, p) },
				Now:        func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, int(i)*1e6, time.UTC) },
			})
			require.NoError(t, err)
			require.Positive(t, res.Logs)
			require.Len(t, progress, res.Logs)
			require.Equal(t, res.Records, progress[len(progress)-1].Records)
			require.Equal(t, filepath.Join(opts.IndexDirs[d], "current", "locations.BACKUP-2026-01-02T03:04:05.00"+string(rune('0'+i))+"+0000"), res.BackupPath)
			require.Empty(t, res.TornLogs)
			require.Greater(t, res.Records, res.Indexed, "deleted ledgers' records are skipped")
			if runEntries == 7 {
				require.Greater(t, res.Runs, 1)
			} else {
				require.Zero(t, res.Runs)
			}
			after := dumpLocations(t, res.LocationsPath)
			require.Equal(t, before[d], after, "dir %d, runs of %d", d, runEntries)
			require.Equal(t, int64(len(after)), res.Entries)
			require.Equal(t, before[d], dumpLocations(t, res.BackupPath))
			total += len(after)
			// Ingested, not compacted: every table is in the last level.
			db, err := lsm.Open(res.LocationsPath, &lsm.Options{ReadOnly: true})
			require.NoError(t, err)
			m := db.Metrics()
			require.Equal(t, res.Tables, m.Levels[len(m.Levels)-1].Tables)
			require.NoError(t, db.Close())
			entries, err := os.ReadDir(filepath.Join(opts.IndexDirs[d], "current"))
			require.NoError(t, err)
			for _, e := range entries {
				require.NotContains(t, e.Name(), "rebuild-", "temporary files are gone")
			}
		}
		require.Equal(t, 6*100+10, total, "ledgers 0-5: 100 entries; ledger 7: 10; ledger 6 deleted")
	}

	s, err = Open(opts)
	require.NoError(t, err)
	defer s.Close()
	for l, es := range want {
		for e, p := range es {
			requireEntry(t, s, l, e, p)
		}
	}
	requireNoLedger(t, s, 6)
	requireNoEntry(t, s, 7, 10)
	requireEntry(t, s, 7, LastEntry, payload(7, 9, 2))
	requireEntry(t, s, 2, LastEntry, payload(2, 99, 0))
	info, ok, err := s.LedgerInfo(1)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, info.Fenced)
	require.Equal(t, []byte{'k', 1}, info.MasterKey)
}

// TestRebuildRefusesARunningBookie: the ledgers index is locked by the
// storage, so the rebuild fails before moving anything.
func TestRebuildRefusesARunningBookie(t *testing.T) {
	opts := osOptions(t.TempDir(), 1)
	s, err := Open(opts)
	require.NoError(t, err)
	require.NoError(t, s.AddEntry(1, 1, []byte("x")))
	require.NoError(t, s.Checkpoint())
	_, err = RebuildLocationsIndex(RebuildOptions{LedgerDir: opts.LedgerDirs[0], IndexDir: opts.IndexDirs[0]})
	require.ErrorContains(t, err, "is the bookie running?")
	require.NoError(t, s.Close())
	_, err = os.Stat(filepath.Join(opts.IndexDirs[0], "current", "locations"))
	require.NoError(t, err, "the index is where it was")
}

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

	res, err := RebuildLocationsIndex(RebuildOptions{LedgerDir: opts.LedgerDirs[0], IndexDir: opts.IndexDirs[0]})
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

	res, err := RebuildLocationsIndex(RebuildOptions{
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

func TestMergeRuns(t *testing.T) {
	fs := vfs.NewMem()
	dir := "/runs"
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	runs := [][]locationEntry{
		{{1, 1, 10}, {1, 2, 11}, {2, 0, 12}},
		{{1, 2, 30}, {1, -1, 31}, {3, 0, 32}},
		{},
		{{0, 5, 40}, {1, 1, 5}},
	}
	var paths []string
	for i, r := range runs {
		p := filepath.Join(dir, string(rune('a'+i)))
		require.NoError(t, writeRun(fs, p, sortRun(r)))
		paths = append(paths, p)
	}
	var got []locationEntry
	require.NoError(t, mergeRuns(fs, paths, func(e *locationEntry) error {
		got = append(got, *e)
		return nil
	}))
	require.Equal(t, []locationEntry{{0, 5, 40}, {1, 1, 10}, {1, 2, 30}, {1, -1, 31}, {2, 0, 12}, {3, 0, 32}}, got)
	require.Equal(t, []locationEntry{{1, 1, 9}}, sortRun([]locationEntry{{1, 1, 9}, {1, 1, 3}}))
}

package rebuild

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// storageOptions returns storage options on the real file system under
// root, as the storage's own tests' (storagetest.Dirs, logs of 32 KiB).
func storageOptions(root string, dirs int) *bookie.Options {
	ledgers, indexes := storagetest.Dirs(root, dirs)
	return &bookie.Options{LedgerDirs: ledgers, IndexDirs: indexes, FlushInterval: -1, GCWaitTime: -1, LogSizeLimit: 32 << 10,
		WriteCacheSize: int64(dirs) * 4 << 20, ReadCacheSize: int64(dirs) << 20, Index: &entrylocation.Options{Engine: storagetest.IndexEngine()}}
}

// TestRebuild is upstream's LocationsIndexRebuildTest: write, shut down,
// rebuild, and every location is what the index held, every entry reads
// back, ledgers keep their metadata. Then again with tiny sort runs, so
// that the runs are spilled and merged.
func TestRebuild(t *testing.T) {
	root := t.TempDir()
	opts := storageOptions(root, 2)
	s, err := bookie.Open(opts)
	require.NoError(t, err)
	want := storagetest.WriteWorkload(t, s)
	require.NoError(t, s.Close())

	for i, runEntries := range []int{0, 7, 1000} {
		var before []map[[2]int64]int64
		for d := range opts.LedgerDirs {
			before = append(before, storagetest.DumpLocations(t, filepath.Join(opts.IndexDirs[d], "current", "locations")))
		}
		total := 0
		for d := range opts.LedgerDirs {
			var progress []Progress
			res, err := LocationsIndex(Options{
				LedgerDir: opts.LedgerDirs[d], IndexDir: opts.IndexDirs[d],
				Engine:     &lsm.Options{TargetFileSizeBase: 64 << 10, BlockSize: 4 << 10},
				RunEntries: runEntries,
				Progress:   func(p Progress) { progress = append(progress, p) },
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
			after := storagetest.DumpLocations(t, res.LocationsPath)
			require.Equal(t, before[d], after, "dir %d, runs of %d", d, runEntries)
			require.Equal(t, int64(len(after)), res.Entries)
			require.Equal(t, before[d], storagetest.DumpLocations(t, res.BackupPath))
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

	s, err = bookie.Open(opts)
	require.NoError(t, err)
	defer s.Close()
	for l, es := range want {
		for e, p := range es {
			storagetest.RequireEntry(t, s, l, e, p)
		}
	}
	storagetest.RequireNoLedger(t, s, 6, bookie.ErrNoLedger)
	storagetest.RequireNoEntry(t, s, 7, 10)
	storagetest.RequireEntry(t, s, 7, bookie.LastEntry, storagetest.Payload(7, 9, 2))
	storagetest.RequireEntry(t, s, 2, bookie.LastEntry, storagetest.Payload(2, 99, 0))
	info, ok, err := s.LedgerInfo(1)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, info.Fenced)
	require.Equal(t, []byte{'k', 1}, info.MasterKey)
}

// TestRebuildRefusesARunningBookie: the ledgers index is locked by the
// storage, so the rebuild fails before moving anything.
func TestRebuildRefusesARunningBookie(t *testing.T) {
	opts := storageOptions(t.TempDir(), 1)
	s, err := bookie.Open(opts)
	require.NoError(t, err)
	require.NoError(t, s.AddEntry(1, 1, []byte("x")))
	require.NoError(t, s.Checkpoint())
	_, err = LocationsIndex(Options{LedgerDir: opts.LedgerDirs[0], IndexDir: opts.IndexDirs[0]})
	require.ErrorContains(t, err, "is the bookie running?")
	require.NoError(t, s.Close())
	_, err = os.Stat(filepath.Join(opts.IndexDirs[0], "current", "locations"))
	require.NoError(t, err, "the index is where it was")
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

// BenchmarkRebuild rebuilds the index of 200,000 entries (100 ledgers of
// 2,000 entries of 100 bytes, in several entry logs): scan, sort, write
// tables, ingest. Each iteration moves the previous index aside.
//
//	go test -run '^$' -bench Rebuild -benchtime 3x ./bookie/rebuild/
func BenchmarkRebuild(b *testing.B) {
	root := b.TempDir()
	o := storageOptions(root, 1)
	o.WriteCacheSize = 64 << 20
	o.LogSizeLimit = 8 << 20
	s, err := bookie.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	const ledgers, entries = 100, 2000
	p := make([]byte, 100)
	for e := range int64(entries) {
		for l := range int64(ledgers) {
			if err := s.AddEntry(l, e, p); err != nil {
				b.Fatal(err)
			}
		}
		if e%500 == 499 {
			if err := s.Checkpoint(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		res, err := LocationsIndex(Options{
			LedgerDir: o.LedgerDirs[0], IndexDir: o.IndexDirs[0],
			Now: func() time.Time { return time.Unix(int64(i), 0) },
		})
		if err != nil {
			b.Fatal(err)
		}
		if res.Entries != ledgers*entries {
			b.Fatalf("%d entries rebuilt, want %d", res.Entries, ledgers*entries)
		}
	}
	b.ReportMetric(float64(ledgers*entries*b.N)/b.Elapsed().Seconds(), "entries/s")
}

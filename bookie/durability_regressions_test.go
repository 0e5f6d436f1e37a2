package bookie

import (
	"errors"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/bookie/rebuild"
	"github.com/stretchr/testify/require"
)

// TestCompactionSkipsLogsOfAPendingCheckpoint: a failed checkpoint P wrote
// ledger 1's records (durable, not indexed) to log X, which also holds
// indexed records of ledger 9. Compaction of X skipped P's records (not
// current); a checkpoint that resumed P between two chunks indexed them in
// X, the check after the scan saw nothing pending, and X was removed while
// the index named it (found in review). A log a pending checkpoint names is
// now not compacted at all.
func TestCompactionSkipsLogsOfAPendingCheckpoint(t *testing.T) {
	env := newGCEnv()
	env.tweak = func(o *Options) {
		o.LogSizeLimit = 4 << 10
		o.GC.CompactionRateByEntries = -1
		o.ReadCacheSize = -1
	}
	s := env.open(t)
	d := s.Dirs()[0]
	for e := int64(0); e < 40; e++ {
		require.NoError(t, s.AddEntry(9, e, payload(9, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	for e := int64(0); e < 40; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	fail := true
	d.hooks.Store(&testHooks{afterEntryLogFlush: func() error {
		if fail {
			fail = false
			return errors.New("injected index failure")
		}
		return nil
	}})
	require.Error(t, s.Checkpoint())

	// The boundary log: lowest log holding records of the pending checkpoint.
	d.flushMu.Lock()
	target := int64(-1)
	for _, l := range d.pending.locs[:d.pending.written] {
		id := entrylog.LocationLogID(l.Location)
		if target < 0 || id < target {
			target = id
		}
	}
	d.flushMu.Unlock()
	require.NotEqual(t, target, d.entryLog.CurrentLogID(), "the boundary log must be rotated")

	resumed := false
	d.hooks.Store(&testHooks{gcStep: func(step string) error {
		if step == gcStepIndexed && !resumed {
			resumed = true
			// flushMu is held by copyChunk: this is the checkpoint that
			// takes flushMu right after the chunk.
			return d.checkpointLocked()
		}
		return nil
	}})
	done, err := d.compactLog(target, &throttler{}, time.Time{})
	require.NoError(t, err)
	require.False(t, done, "a log a pending checkpoint names is not compacted")
	require.False(t, resumed, "no chunk was copied")
	require.NoError(t, s.Checkpoint(), "the next checkpoint resumes the failed one")
	for e := int64(0); e < 40; e++ {
		requireEntry(t, s, 1, e, payload(1, e, 0))
	}
	require.NoError(t, s.Close())
}

// TestOpenRefusesHalfSwitchedMigration: a migration crashed in its switch
// step after renaming the RocksDB ledgers database to its backup and before
// renaming ledgers.migrating into place (the marker is durable). Open used to
// create an empty ledgers index there; every ledger read as absent and a GC
// cycle removed every rotated entry log (found in review).
func TestOpenRefusesHalfSwitchedMigration(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	writeInterleaved(t, s, 10, 40, 0)
	require.NoError(t, s.Close())

	cur := "/data/ledgers/current"
	fs := env.mem
	require.NoError(t, fs.Rename(cur+"/ledgers", cur+"/ledgers"+ondisk.MigrateNewSuffix)) // "built"
	require.NoError(t, fs.MkdirAll(cur+"/ledgers"+ondisk.RocksDBBackupSuffix, 0o755))     // the renamed RocksDB db
	f, err := fs.Create(cur + "/" + ondisk.MigrateMarker)
	require.NoError(t, err)
	_, err = f.Write([]byte(ondisk.MigrateReadyContent))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	pending, err := ondisk.MigrationPending(fs, "/data/ledgers")
	require.NoError(t, err)
	require.True(t, pending)

	s, err = Open(env.options())
	require.ErrorContains(t, err, "bookie-index migrate")
	if err == nil {
		_, before := logBytes(t, fs, env.dirs)
		runGC(t, s, GCRequest{Force: true})
		_, after := logBytes(t, fs, env.dirs)
		_, gerr := s.GetEntry(1, 0)
		_ = s.Close()
		t.Fatalf("Open served an interrupted migration: entry logs %d -> %d after one GC cycle; GetEntry(1,0): %v", before, after, gerr)
	}
}

// TestRebuildAfterFullPurgeKeepsOldLifeDeleted: ledger 1 is written,
// deleted, purged (its record is removed), then written again with fewer
// entries. Its new record used to get floor 0, so a rebuild of the locations
// index took the old life's records back (found in review); a ledger created
// without a record now takes the entry log's position as its floor.
func TestRebuildAfterFullPurgeKeepsOldLifeDeleted(t *testing.T) {
	root := t.TempDir()
	opts := osOptions(root, 1)
	s, err := Open(opts)
	require.NoError(t, err)
	for e := int64(0); e < 10; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	_, err = s.DeleteLedger(1)
	require.NoError(t, err)
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	for e := int64(0); e < 3; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 1)))
	}
	require.NoError(t, s.Checkpoint())
	requireNoEntry(t, s, 1, 5)
	require.NoError(t, s.Close())

	_, err = rebuild.LocationsIndex(rebuild.Options{LedgerDir: opts.LedgerDirs[0], IndexDir: opts.IndexDirs[0]})
	require.NoError(t, err)
	s, err = Open(opts)
	require.NoError(t, err)
	defer s.Close()
	requireEntry(t, s, 1, 0, payload(1, 0, 1))
	requireNoEntry(t, s, 1, 5) // the old life's entry 5 must stay deleted
}

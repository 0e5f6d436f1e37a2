package bookie

import (
	"math/rand"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/rebuild"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

// TestSimple is upstream's DbLedgerStorageTest.simple: add, read from each
// tier, last entry, delete.
func TestSimple(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	defer s.Close()

	exists, err := s.LedgerExists(4)
	require.NoError(t, err)
	require.False(t, exists)
	requireNoLedger(t, s, 4)
	require.NoError(t, s.SetMasterKey(4, []byte("key")))
	exists, err = s.LedgerExists(4)
	require.NoError(t, err)
	require.True(t, exists)
	requireNoEntry(t, s, 4, 2)
	_, _, err = s.GetLastEntry(4)
	require.ErrorIs(t, err, ErrNoEntry)
	require.ErrorContains(t, err, "Entry -1 not found in 4")

	for e := int64(1); e <= 3; e++ {
		require.NoError(t, s.AddEntry(4, e, payload(4, e, 0)))
	}
	requireEntry(t, s, 4, 2, payload(4, 2, 0)) // write cache
	requireEntry(t, s, 4, LastEntry, payload(4, 3, 0))
	requireNoEntry(t, s, 4, 4)
	require.Zero(t, location(t, s, 4, 2))

	require.NoError(t, s.Checkpoint())
	require.NotZero(t, location(t, s, 4, 2))
	requireEntry(t, s, 4, 2, payload(4, 2, 0)) // index + entry log
	requireEntry(t, s, 4, 2, payload(4, 2, 0)) // read cache
	last, p, err := s.GetLastEntry(4)
	require.NoError(t, err)
	require.Equal(t, int64(3), last)
	require.Equal(t, payload(4, 3, 0), p)
	m := s.Metrics()[0]
	require.Equal(t, int64(2), m.ReadCacheHits, "entry 2, and entry 3 read ahead")
	require.Positive(t, m.WriteCacheHits)
	require.Equal(t, int64(3), m.FlushEntries)
	require.Equal(t, int64(1), m.Ledgers)

	// Entry 5 in the cache, below... and an entry written out of order.
	require.NoError(t, s.AddEntry(4, 5, payload(4, 5, 0)))
	require.NoError(t, s.AddEntry(4, 0, payload(4, 0, 0)))
	requireEntry(t, s, 4, LastEntry, payload(4, 5, 0))

	existed, err := s.DeleteLedger(4)
	require.NoError(t, err)
	require.True(t, existed)
	exists, err = s.LedgerExists(4)
	require.NoError(t, err)
	require.False(t, exists)
	requireNoLedger(t, s, 4)
	require.NoError(t, s.Checkpoint())
	requireNoLedger(t, s, 4)
	waitFor(t, "the purge", func() bool { return s.Metrics()[0].PurgedLedgers == 1 })
	require.Zero(t, location(t, s, 4, 2))
	_, ok, err := s.LedgerInfo(4)
	require.NoError(t, err)
	require.False(t, ok, "the deleted ledger's record goes with the purge")

	existed, err = s.DeleteLedger(99)
	require.NoError(t, err)
	require.False(t, existed)
}

// TestRewritingEntries is upstream's testRewritingEntries: a second add of
// an entry replaces it, in every tier.
func TestRewritingEntries(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	defer s.Close()
	require.NoError(t, s.SetMasterKey(1, []byte("key")))
	_, err := s.GetEntry(1, LastEntry)
	require.ErrorIs(t, err, ErrNoEntry)

	require.NoError(t, s.AddEntry(1, 1, []byte("entry-1")))
	require.NoError(t, s.Checkpoint())
	first := location(t, s, 1, 1)
	requireEntry(t, s, 1, 1, []byte("entry-1")) // now in the read cache

	require.NoError(t, s.AddEntry(1, 1, []byte("new-entry-1")))
	requireEntry(t, s, 1, 1, []byte("new-entry-1"))
	require.NoError(t, s.Checkpoint())
	require.NotEqual(t, first, location(t, s, 1, 1), "the rewrite moved the location")
	requireEntry(t, s, 1, 1, []byte("new-entry-1"))
	requireEntry(t, s, 1, LastEntry, []byte("new-entry-1"))

	require.NoError(t, s.Close())
	s = env.open(t)
	requireEntry(t, s, 1, 1, []byte("new-entry-1"))
	require.NoError(t, s.Close())
}

// TestReadAheadSkipsStaleCopies: reading the first record of a log reads
// the next ones ahead, but not a copy the index no longer names.
func TestReadAheadSkipsStaleCopies(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	for e := int64(0); e < 10; e++ {
		require.NoError(t, s.AddEntry(7, e, payload(7, e, 0)))
	}
	require.NoError(t, s.Close())
	// Entry 5 again, in the next log.
	s = env.open(t)
	defer s.Close()
	require.NoError(t, s.AddEntry(7, 5, payload(7, 5, 1)))
	require.NoError(t, s.Checkpoint())
	require.NotEqual(t, entrylog.LocationLogID(location(t, s, 7, 0)), entrylog.LocationLogID(location(t, s, 7, 5)))
	// Reads 1-9 ahead, but not the first copy of 5.
	requireEntry(t, s, 7, 0, payload(7, 0, 0))
	m := s.Metrics()[0]
	require.Equal(t, int64(8), m.ReadAheadEntries)
	for e := int64(1); e < 10; e++ {
		v := 0
		if e == 5 {
			v = 1
		}
		requireEntry(t, s, 7, e, payload(7, e, v))
	}
	m = s.Metrics()[0]
	require.Equal(t, int64(8), m.ReadCacheHits)
	require.Equal(t, int64(2), m.ReadCacheMisses)
}

// TestAddEntriesAfterDelete is upstream's testAddEntriesAfterDelete: a
// ledger deleted and written again has only its new entries, before and
// after the purge, a restart and a crash.
func TestAddEntriesAfterDelete(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	for e := int64(0); e < 100; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	requireEntry(t, s, 1, 60, payload(1, 60, 0)) // fills the read cache
	_, err := s.DeleteLedger(1)
	require.NoError(t, err)
	for e := int64(0); e < 50; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 1)))
	}
	check := func(s *Storage) {
		t.Helper()
		for e := int64(0); e < 50; e++ {
			requireEntry(t, s, 1, e, payload(1, e, 1))
		}
		requireNoEntry(t, s, 1, 60)
		requireNoEntry(t, s, 1, 99)
		requireEntry(t, s, 1, LastEntry, payload(1, 49, 1))
	}
	check(s)
	require.NoError(t, s.Checkpoint())
	check(s)
	info, ok, err := s.LedgerInfo(1)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, info.Exists)
	require.False(t, info.PurgePending, "the checkpoint purged the old life before writing the new one")
	require.Positive(t, info.Floor)
	require.NoError(t, s.Close())
	s = env.open(t)
	check(s)
	s = env.crash(t, s, 0)
	check(s)

	// Deleted and written again, then a crash before a checkpoint: the
	// deletion is durable, the new entries were never acknowledged.
	_, err = s.DeleteLedger(1)
	require.NoError(t, err)
	require.NoError(t, s.AddEntry(1, 3, payload(1, 3, 2)))
	s = env.crash(t, s, 0)
	requireNoLedger(t, s, 1)
	require.NoError(t, s.AddEntry(1, 7, payload(1, 7, 3)))
	requireNoEntry(t, s, 1, 3)
	requireEntry(t, s, 1, LastEntry, payload(1, 7, 3))
	require.NoError(t, s.Checkpoint())
	requireNoEntry(t, s, 1, 3)
	requireNoEntry(t, s, 1, 0)
	requireEntry(t, s, 1, 7, payload(1, 7, 3))
	require.NoError(t, s.Close())
}

// TestCheckpointWithEmptyWriteCachePurges is upstream's
// testSingleLedgerDirectoryCheckpointTriggerRemovePendingDeletedLedgers: a
// checkpoint with nothing to write still purges the deleted ledgers.
func TestCheckpointWithEmptyWriteCachePurges(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	defer s.Close()
	require.NoError(t, s.AddEntry(1, 1, []byte("entry-1")))
	require.NoError(t, s.AddEntry(2, 1, []byte("entry-1")))
	require.NoError(t, s.Checkpoint())
	_, err := s.DeleteLedger(1)
	require.NoError(t, err)
	d := s.Dirs()[0]
	require.NotZero(t, location(t, s, 1, 1), "not purged before a checkpoint")
	require.True(t, d.writeCache.isEmpty())
	require.NoError(t, s.Checkpoint())
	waitFor(t, "the purge", func() bool { return location(t, s, 1, 1) == 0 })
	require.NotZero(t, location(t, s, 2, 1))
	require.Equal(t, int64(0), s.Metrics()[0].PendingPurgeLedgers)
}

// TestDeletionSurvivesRestart: a ledger deleted and not purged before a
// crash is purged after the restart, and never reads back.
func TestDeletionSurvivesRestart(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	for l := int64(1); l <= 3; l++ {
		for e := int64(0); e < 20; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
	}
	require.NoError(t, s.Checkpoint())
	_, err := s.DeleteLedger(2)
	require.NoError(t, err)
	s = env.crash(t, s, 0)
	requireNoLedger(t, s, 2)
	requireEntry(t, s, 1, 19, payload(1, 19, 0))
	waitFor(t, "the purge at open", func() bool { return location(t, s, 2, 5) == 0 })
	require.NoError(t, s.Close())
}

func TestLedgerMetadata(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	require.NoError(t, s.SetMasterKey(5, []byte("k5")))
	require.NoError(t, s.SetMasterKey(5, []byte("k5")))
	require.ErrorIs(t, s.SetMasterKey(5, []byte("other")), ErrWrongMasterKey)
	_, err := s.SetFenced(6)
	require.ErrorIs(t, err, ErrNoLedger)
	require.ErrorIs(t, s.SetExplicitLAC(6, []byte("lac")), ErrNoLedger)
	fenced, err := s.SetFenced(5)
	require.NoError(t, err)
	require.True(t, fenced)
	fenced, err = s.SetFenced(5)
	require.NoError(t, err)
	require.False(t, fenced)
	require.NoError(t, s.SetExplicitLAC(5, []byte{}))
	require.NoError(t, s.AddEntry(8, 0, nil))
	requireEntry(t, s, 8, 0, nil)
	// Written at the next checkpoint: a crash before it loses them.
	s = env.crash(t, s, 0)
	exists, err := s.LedgerExists(5)
	require.NoError(t, err)
	require.False(t, exists)

	require.NoError(t, s.SetMasterKey(5, []byte("k5")))
	_, err = s.SetFenced(5)
	require.NoError(t, err)
	require.NoError(t, s.SetExplicitLAC(5, []byte("lac")))
	require.NoError(t, s.AddEntry(8, 0, nil))
	require.NoError(t, s.Checkpoint())
	s = env.crash(t, s, 0)
	info, ok, err := s.LedgerInfo(5)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, LedgerInfo{Exists: true, Fenced: true, MasterKey: []byte("k5"), ExplicitLAC: []byte("lac")}, info)
	requireEntry(t, s, 8, 0, nil)
	require.NoError(t, s.Close())
}

func TestBadArguments(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	require.ErrorIs(t, s.AddEntry(-1, 0, nil), ErrInvalidArgument)
	require.ErrorIs(t, s.AddEntry(1, -1, nil), ErrInvalidArgument)
	require.ErrorIs(t, s.AddEntry(1, 0, make([]byte, 2<<20)), ErrInvalidArgument)
	_, err := s.GetEntry(-3, 0)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, s.AddEntry(1, 0, nil))
	_, err = s.GetEntry(1, -2)
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = s.DeleteLedger(-1)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorIs(t, s.UpdateEntriesLocations([]entrylocation.EntryLocation{{LedgerID: -1, EntryID: 0, Location: 5}}), ErrInvalidArgument)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.AddEntry(1, 0, nil), ErrClosed)
	_, err = s.GetEntry(1, 0)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.Checkpoint(), ErrClosed)
	require.ErrorIs(t, s.Close(), ErrClosed)
	_ = s.Metrics()

	for _, o := range []*Options{
		nil,
		{LedgerDirs: []string{"/a"}, IndexDirs: []string{"/a", "/b"}},
		{LedgerDirs: []string{"/a", "/a"}},
		{LedgerDirs: []string{"/a"}, WriteCacheSize: -1},
	} {
		_, err := Open(o)
		require.ErrorIs(t, err, ErrInvalidArgument)
	}
}

// TestOneFileSystem: Options.FS holds the entry logs and both indexes; an
// engine FS of another file system is refused, for the storage and for a
// rebuild; vfs.Default (which lsm.DefaultOptions fills in) gives way to FS,
// and the caller's engine options are left as they were.
func TestOneFileSystem(t *testing.T) {
	mem := vfs.NewMem()
	other := vfs.NewMem()
	engine := lsm.DefaultOptions()
	s, err := Open(&Options{LedgerDirs: []string{"/d"}, FS: mem, FlushInterval: -1, GCWaitTime: -1,
		Index: &entrylocation.Options{Engine: engine}, LedgersEngine: &lsm.Options{FS: mem}})
	require.NoError(t, err)
	require.NoError(t, s.AddEntry(1, 0, []byte("x")))
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Close())
	require.Equal(t, vfs.Default, engine.FS, "the caller's options are not changed")
	names, err := mem.List("/d/current")
	require.NoError(t, err)
	require.Equal(t, []string{"0.ledgers", "0.log", "LAYOUT", "lastId", "ledgers", "locations"}, names)

	for _, o := range []*Options{
		{Index: &entrylocation.Options{Engine: &lsm.Options{FS: other}}},
		{LedgersEngine: &lsm.Options{FS: other}},
	} {
		o.LedgerDirs, o.FS = []string{"/d"}, mem
		_, err := Open(o)
		require.ErrorIs(t, err, ErrInvalidArgument)
		require.ErrorContains(t, err, "set Options.FS")
	}
	_, err = rebuild.LocationsIndex(rebuild.Options{LedgerDir: "/d", FS: mem, Engine: &lsm.Options{FS: other}})
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = rebuild.LocationsIndex(rebuild.Options{LedgerDir: "/d", FS: mem, LedgersEngine: &lsm.Options{FS: other}})
	require.ErrorIs(t, err, ErrInvalidArgument)
}

// TestThrottleAndReject: with the write cache full and the checkpoint
// stuck, adds wait MaxThrottleTime and are rejected; once the checkpoint
// goes on, waiting adds get in.
func TestThrottleAndReject(t *testing.T) {
	env := newTestEnv()
	env.tweak = func(o *Options) {
		o.WriteCacheSize = 64 << 10 // two 32 KiB halves
		o.MaxThrottleTime = 300 * time.Millisecond
	}
	s := env.open(t)
	d := s.Dirs()[0]
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	d.hooks.Store(&testHooks{afterEntryLogFlush: func() error {
		entered <- struct{}{}
		<-release
		return nil
	}})
	big := make([]byte, 10<<10)
	e := int64(0)
	var err error
	for ; err == nil && e < 100; e++ {
		err = s.AddEntry(1, e, big)
	}
	require.ErrorIs(t, err, ErrRejected)
	require.Less(t, e, int64(10), "both halves full after 6 entries")
	<-entered // the triggered checkpoint is stuck
	start := time.Now()
	require.ErrorIs(t, s.AddEntry(1, 100, big), ErrRejected)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	m := s.Metrics()[0]
	require.GreaterOrEqual(t, m.RejectedWriteRequests, int64(2))
	require.GreaterOrEqual(t, m.ThrottledWrite.FailureCount, int64(2))

	// Unstick it: a writer waiting for room gets in.
	done := make(chan error)
	go func() { done <- s.AddEntry(2, 0, big) }()
	time.Sleep(20 * time.Millisecond)
	close(release)
	require.NoError(t, <-done)
	d.hooks.Store(nil)
	require.NoError(t, s.Checkpoint())
	for i := int64(0); i < e-1; i++ {
		requireEntry(t, s, 1, i, big)
	}
	requireEntry(t, s, 2, 0, big)
	require.NoError(t, s.Close())
}

// TestMultipleDirectories routes ledgers by id mod n and keeps each
// directory's files apart.
func TestMultipleDirectories(t *testing.T) {
	env := newTestEnv("/d0", "/d1", "/d2")
	s := env.open(t)
	for l := int64(0); l < 9; l++ {
		for e := int64(0); e < 30; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
	}
	require.NoError(t, s.Checkpoint())
	for i, d := range s.Dirs() {
		require.Equal(t, env.dirs[i]+"/current", d.LedgerDir())
		m := d.Metrics()
		require.Equal(t, int64(3), m.Ledgers, "dir %d", i)
		require.Equal(t, int64(90), m.FlushEntries, "dir %d", i)
		ids, err := entrylog.ListLogs(env.mem, d.LedgerDir())
		require.NoError(t, err)
		require.NotEmpty(t, ids)
	}
	_, err := s.DeleteLedger(4)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s = env.open(t)
	for l := int64(0); l < 9; l++ {
		if l == 4 {
			requireNoLedger(t, s, l)
			continue
		}
		d, _ := s.Dir(l)
		require.Equal(t, s.Dirs()[l%3], d)
		for e := int64(0); e < 30; e++ {
			requireEntry(t, s, l, e, payload(l, e, 0))
		}
	}
	require.NoError(t, s.Close())
}

package bookie

import (
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// testEnv is a storage's file system: one vfs.MemFS holds the entry logs
// and both indexes (locations, ledgers) of every directory, so that crash
// drops what none of them synced at one instant, as a power loss does. The
// storage sees it through an ErrorFS, whose faults setFault chooses.
type testEnv struct {
	mem  *vfs.MemFS
	dirs []string
	// tweak, if set, adjusts the options before each open.
	tweak func(o *Options)

	faultMu sync.Mutex
	fault   func(op vfs.Op) error // guarded by faultMu
}

func newTestEnv(dirs ...string) *testEnv {
	if len(dirs) == 0 {
		dirs = []string{"/data/ledgers"}
	}
	return &testEnv{mem: vfs.NewMem(), dirs: dirs}
}

// setFault makes fault decide, from now on, which operations of the
// storage's file system fail; nil: none. It runs under a lock, from
// whichever goroutine does the operation (the indexes' background work
// too).
func (e *testEnv) setFault(fault func(op vfs.Op) error) {
	e.faultMu.Lock()
	e.fault = fault
	e.faultMu.Unlock()
}

func (e *testEnv) maybeFail(op vfs.Op) error {
	e.faultMu.Lock()
	defer e.faultMu.Unlock()
	if e.fault == nil {
		return nil
	}
	return e.fault(op)
}

// options returns small, manual-checkpoint options on the env's FS.
func (e *testEnv) options() *Options {
	o := &Options{
		LedgerDirs:       e.dirs,
		FlushInterval:    -1,
		GCWaitTime:       -1,
		WriteCacheSize:   int64(len(e.dirs)) * 2 << 20,
		ReadCacheSize:    int64(len(e.dirs)) << 20,
		MaxThrottleTime:  2 * time.Second,
		LogSizeLimit:     64 << 10,
		FS:               vfs.NewErrorFS(e.mem, vfs.InjectorFunc(e.maybeFail)),
		Index:            &entrylocation.Options{Engine: storagetest.IndexEngine()},
		EnableStatistics: true,
	}
	if e.tweak != nil {
		e.tweak(o)
	}
	return o
}

func (e *testEnv) open(t testing.TB) *Storage {
	t.Helper()
	s, err := Open(e.options())
	require.NoError(t, err)
	return s
}

// testDiskCapacity is the size of the in-memory disk of the tests that
// fill it (env.mem.SetCapacity): room for a test storage many times over,
// small enough that a ballast of most of it costs little memory.
const testDiskCapacity = 16 << 20

// ballastPath is the file fillDisk sizes: what other programs hold on the
// storage's disk, outside its directories.
const ballastPath = "/ballast"

// fillDisk makes the env's disk (a MemFS with a capacity) used fraction
// used, as its DiskUsage reports it, by resizing a ballast file; what the
// storage writes afterwards adds to it (at 1, the storage's next writes
// fail with ENOSPC). It fails the test if the storage alone already uses
// more.
func (e *testEnv) fillDisk(t testing.TB, used float64) {
	t.Helper()
	var ballast int64
	if st, err := e.mem.Stat(ballastPath); err == nil {
		ballast = st.Size()
	}
	u, err := e.mem.DiskUsage("/")
	require.NoError(t, err)
	require.Less(t, u.Total, uint64(1)<<40, "fillDisk needs a disk with a capacity")
	others := int64(u.UsedBytes()) - ballast
	want := int64(used*float64(u.Total)) - others
	require.GreaterOrEqual(t, want, int64(0), "the storage alone uses %d of %d bytes, more than %v", others, u.Total, used)
	f, err := e.mem.Create(ballastPath)
	require.NoError(t, err)
	// Filling the disk whole races with the storage's background writes:
	// what they took first the ballast does without.
	if _, err = f.Write(make([]byte, want)); used < 1 || !vfs.IsNoSpace(err) {
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, vfs.SyncDir(e.mem, "/"))
}

// crashClone returns what a power loss now would leave of the whole
// storage: every file its synced bytes (with a seed, plus a random part of
// its unsynced appends: torn tails), every directory its synced names.
func (e *testEnv) crashClone(seed int64) *vfs.MemFS {
	if seed == 0 {
		return e.mem.CrashClone(vfs.CrashOptions{})
	}
	return e.mem.CrashClone(vfs.CrashOptions{Rand: newRand(seed), KeepUnsyncedTail: true})
}

// crash abandons s as a power loss would: entry logs and indexes keep, at
// the same instant, what they synced. It returns the storage reopened on
// what is left.
func (e *testEnv) crash(t testing.TB, s *Storage, seed int64) *Storage {
	t.Helper()
	clone := e.crashClone(seed)
	e.restartOn(s, clone)
	return e.open(t)
}

// restartOn abandons s (its files, on the old FS, are no longer looked at)
// and makes clone the env's FS, with no fault set.
func (e *testEnv) restartOn(s *Storage, clone *vfs.MemFS) {
	for _, d := range s.dirs {
		d.abandon()
	}
	e.setFault(nil)
	e.mem = clone
}

// The helpers shared with the offline tools' tests (storagetest).
var (
	payload        = storagetest.Payload
	requireEntry   = storagetest.RequireEntry
	requireNoEntry = storagetest.RequireNoEntry
	smallEngine    = storagetest.SmallEngine
	dumpLocations  = storagetest.DumpLocations
)

func requireNoLedger(t testing.TB, s *Storage, ledgerID int64) {
	t.Helper()
	storagetest.RequireNoLedger(t, s, ledgerID, ErrNoLedger)
}

// osOptions returns storage options on the real file system under root
// (storagetest.Dirs).
func osOptions(root string, dirs int) *Options {
	o := &Options{FlushInterval: -1, GCWaitTime: -1, LogSizeLimit: 32 << 10,
		WriteCacheSize: int64(dirs) * 4 << 20, ReadCacheSize: int64(dirs) << 20,
		Index: &entrylocation.Options{Engine: storagetest.IndexEngine()}}
	o.LedgerDirs, o.IndexDirs = storagetest.Dirs(root, dirs)
	return o
}

// location returns the index's location of an entry.
func location(t testing.TB, s *Storage, ledgerID, entryID int64) int64 {
	t.Helper()
	d, err := s.Dir(ledgerID)
	require.NoError(t, err)
	loc, err := d.locations.GetLocation(ledgerID, entryID)
	require.NoError(t, err)
	return loc
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(time.Millisecond)
	}
}

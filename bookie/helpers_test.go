package bookie

import (
	"fmt"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// testEnv is a storage's file systems: the entry logs on an entrylog.MemFS
// (which can crash), the indexes on an in-memory engine FS (whose writes
// are all synced, so closing it is what a crash leaves).
type testEnv struct {
	logFS   *entrylog.MemFS
	indexFS lsm.FS
	dirs    []string
	// tweak, if set, adjusts the options before each open.
	tweak func(o *Options)
}

func newTestEnv(dirs ...string) *testEnv {
	if len(dirs) == 0 {
		dirs = []string{"/data/ledgers"}
	}
	return &testEnv{logFS: entrylog.NewMemFS(), indexFS: lsm.NewMemFS(), dirs: dirs}
}

// options returns small, manual-checkpoint options on the env's FSs.
func (e *testEnv) options() *Options {
	o := &Options{
		LedgerDirs:      e.dirs,
		FlushInterval:   -1,
		GCWaitTime:      -1,
		WriteCacheSize:  int64(len(e.dirs)) * 2 << 20,
		ReadCacheSize:   int64(len(e.dirs)) << 20,
		MaxThrottleTime: 2 * time.Second,
		LogSizeLimit:    64 << 10,
		EntryLogFS:      e.logFS,
		Index: &entrylocation.Options{Engine: &lsm.Options{
			FS: e.indexFS, WriteBufferSize: 64 << 10, TargetFileSizeBase: 64 << 10, BlockSize: 4 << 10,
		}},
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

// crash abandons s as a power loss would: the entry logs keep what was
// synced (and, with a seed, torn tails), the indexes what was committed.
// It returns the storage reopened on what is left.
func (e *testEnv) crash(t testing.TB, s *Storage, seed int64) *Storage {
	t.Helper()
	var clone *entrylog.MemFS
	if seed != 0 {
		clone = e.logFS.CrashClone(newRand(seed))
	} else {
		clone = e.logFS.CrashClone(nil)
	}
	for _, d := range s.dirs {
		d.abandon()
	}
	e.logFS = clone
	return e.open(t)
}

func payload(ledgerID, entryID int64, version int) []byte {
	return fmt.Appendf(nil, "ledger %d entry %d version %d %s", ledgerID, entryID, version, make([]byte, (ledgerID*7+entryID)%300))
}

func requireEntry(t testing.TB, s *Storage, ledgerID, entryID int64, want []byte) {
	t.Helper()
	got, err := s.GetEntry(ledgerID, entryID)
	require.NoError(t, err, "entry %d of ledger %d", entryID, ledgerID)
	require.Equal(t, string(want), string(got), "entry %d of ledger %d", entryID, ledgerID)
}

func requireNoEntry(t testing.TB, s *Storage, ledgerID, entryID int64) {
	t.Helper()
	_, err := s.GetEntry(ledgerID, entryID)
	require.ErrorIs(t, err, ErrNoEntry, "entry %d of ledger %d", entryID, ledgerID)
}

func requireNoLedger(t testing.TB, s *Storage, ledgerID int64) {
	t.Helper()
	_, err := s.GetEntry(ledgerID, 0)
	require.ErrorIs(t, err, ErrNoLedger, "ledger %d", ledgerID)
	_, _, err = s.GetLastEntry(ledgerID)
	require.ErrorIs(t, err, ErrNoLedger, "ledger %d", ledgerID)
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

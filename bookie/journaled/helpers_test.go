package journaled

import (
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// testEnv is one vfs.MemFS holding the storage and the journals, so that
// a crash drops what neither synced at one instant, as a power loss does;
// the storage sees it through an ErrorFS whose faults setFault chooses.
type testEnv struct {
	mem         *vfs.MemFS
	ledgerDirs  []string
	journalDirs []string
	// tweak adjusts the options before each open.
	tweak func(o *Options)

	faultMu sync.Mutex
	fault   func(op vfs.Op) error
}

func newTestEnv(ledgerDirs, journalDirs int) *testEnv {
	e := &testEnv{mem: vfs.NewMem()}
	for i := range ledgerDirs {
		e.ledgerDirs = append(e.ledgerDirs, "/data/ledgers"+string(rune('0'+i)))
	}
	for i := range journalDirs {
		e.journalDirs = append(e.journalDirs, "/data/journal"+string(rune('0'+i)))
	}
	return e
}

func (e *testEnv) setFault(fault func(op vfs.Op) error) {
	e.faultMu.Lock()
	e.fault = fault
	e.faultMu.Unlock()
}

// maybeFail asks the fault function, outside faultMu (a fault may block
// one operation while others go on).
func (e *testEnv) maybeFail(op vfs.Op) error {
	e.faultMu.Lock()
	fault := e.fault
	e.faultMu.Unlock()
	if fault == nil {
		return nil
	}
	return fault(op)
}

// options are small, manual-checkpoint options on the env's FS, with
// group commit at once (no group wait: the tests wait for each add).
func (e *testEnv) options() Options {
	fs := vfs.NewErrorFS(e.mem, vfs.InjectorFunc(e.maybeFail))
	o := Options{
		Storage: &bookie.Options{
			LedgerDirs:      e.ledgerDirs,
			FlushInterval:   -1,
			GCWaitTime:      -1,
			WriteCacheSize:  int64(len(e.ledgerDirs)) * 2 << 20,
			ReadCacheSize:   int64(len(e.ledgerDirs)) << 20,
			MaxThrottleTime: 2 * time.Second,
			LogSizeLimit:    64 << 10,
			FS:              fs,
			Index:           &entrylocation.Options{Engine: storagetest.IndexEngine()},
		},
		Journal: journal.Options{
			JournalDirectories:  e.journalDirs,
			FlushWhenQueueEmpty: true,
			MaxFileSize:         16 << 10,
			// A crash image copies every file whole: 4 KiB chunks, not
			// the default 16 MiB.
			PreAllocSize:      4 << 10,
			MaxBackupJournals: -1,
		},
	}
	if e.tweak != nil {
		e.tweak(&o)
	}
	return o
}

func (e *testEnv) open(t testing.TB) *Storage {
	t.Helper()
	s, err := Open(e.options())
	require.NoError(t, err)
	return s
}

// crash makes a power-loss image of the env's FS the env's FS and closes
// s on the old one (what it does there is lost). With a seed, files keep
// a random part of their unsynced appends (torn tails).
func (e *testEnv) crash(t testing.TB, s *Storage, seed int64) {
	t.Helper()
	opts := vfs.CrashOptions{}
	if seed != 0 {
		opts = vfs.CrashOptions{KeepUnsyncedTail: true, Rand: newRand(seed)}
	}
	clone := e.mem.CrashClone(opts)
	_ = s.Close()
	e.setFault(nil)
	e.mem = clone
}

var (
	payload        = storagetest.Payload
	requireEntry   = storagetest.RequireEntry
	requireNoEntry = storagetest.RequireNoEntry
)

func requireNoLedger(t testing.TB, s *Storage, ledgerID int64) {
	t.Helper()
	storagetest.RequireNoLedger(t, s, ledgerID, bookie.ErrNoLedger)
}

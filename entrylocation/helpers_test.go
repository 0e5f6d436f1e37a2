package entrylocation

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// memOptions returns index options on an in-memory file system; synced
// writes cost nothing there, which keeps the tests fast.
func memOptions(fs lsm.FS) *Options {
	if fs == nil {
		fs = lsm.NewMemFS()
	}
	return &Options{Engine: &lsm.Options{FS: fs}}
}

// smallTableOptions makes the engine flush and compact often: 64 KiB
// memtables and tables, compactions from two L0 tables.
func smallTableOptions(fs lsm.FS) *Options {
	o := memOptions(fs)
	o.Engine.WriteBufferSize = 64 << 10
	o.Engine.TargetFileSizeBase = 64 << 10
	o.Engine.BlockSize = 4 << 10
	o.Engine.Level0FileNumCompactionTrigger = 2
	o.Engine.MaxBytesForLevelBase = 1 << 20
	return o
}

func openTest(t testing.TB, opts *Options) *Index {
	t.Helper()
	if opts == nil {
		opts = memOptions(nil)
	}
	ix, err := Open("/index", opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func requireLocation(t testing.TB, ix *Index, ledgerID, entryID, want int64) {
	t.Helper()
	got, err := ix.GetLocation(ledgerID, entryID)
	require.NoError(t, err)
	require.Equal(t, want, got, "location of (%d, %d)", ledgerID, entryID)
}

func requireLastEntry(t testing.TB, ix *Index, ledgerID, want int64) {
	t.Helper()
	got, err := ix.GetLastEntryInLedger(ledgerID)
	require.NoError(t, err, "last entry of %d", ledgerID)
	require.Equal(t, want, got, "last entry of %d", ledgerID)
}

func requireNoEntry(t testing.TB, ix *Index, ledgerID int64) {
	t.Helper()
	got, err := ix.GetLastEntryInLedger(ledgerID)
	require.ErrorIs(t, err, ErrNoEntry, "last entry of %d: got %d", ledgerID, got)
}

// blockingFS blocks Remove calls while armed, until released: the engine
// removes the obsolete WAL during the flush that starts a Compact, so an
// armed FS holds a Compact in progress for as long as a test needs.
type blockingFS struct {
	lsm.FS
	armed   atomic.Bool
	hitOnce sync.Once
	hit     chan struct{} // closed at the first blocked Remove
	release chan struct{} // closing it releases the blocked Removes
}

func newBlockingFS() *blockingFS {
	return &blockingFS{FS: lsm.NewMemFS(), hit: make(chan struct{}), release: make(chan struct{})}
}

func (fs *blockingFS) Remove(name string) error {
	if fs.armed.Load() {
		fs.hitOnce.Do(func() { close(fs.hit) })
		<-fs.release
	}
	return fs.FS.Remove(name)
}

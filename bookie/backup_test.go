package bookie

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

func backupPayload(ledger, entry int64) []byte {
	return []byte(fmt.Sprintf("ledger %d entry %d", ledger, entry))
}

// TestCheckpointIndexesDuringWrites: index checkpoints taken while a
// writer adds entries, restored with the entry logs copied afterwards,
// read back every entry added before the checkpoint, and of the later ones
// a prefix; the ledgers index comes back too (master key, fence).
func TestCheckpointIndexesDuringWrites(t *testing.T) {
	fs := vfs.NewMem()
	opts := func(ledgerDir, indexDir string) *Options {
		return &Options{FS: fs, LedgerDirs: []string{ledgerDir}, IndexDirs: []string{indexDir},
			FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 256 << 10, ReadCacheSize: 1 << 20}
	}
	st, err := Open(opts("ledgers", "indexes"))
	require.NoError(t, err)
	require.NoError(t, st.SetMasterKey(1, []byte("key")))
	_, err = st.SetFenced(1)
	require.NoError(t, err)

	// One writer: entry e of ledger e%3+1, in order, so the index of a
	// checkpoint must hold entries 0..n-1 and nothing else.
	var added atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := int64(0); ; e++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := st.AddEntry(e%3+1, e/3, backupPayload(e%3+1, e/3)); err != nil {
				writeErr = err
				return
			}
			added.Store(e + 1)
		}
	}()
	for added.Load() < 3000 {
		runtime.Gosched()
	}
	before := added.Load()
	res, err := st.CheckpointIndexes("backup")
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Equal(t, filepath.Join("backup", "0", "current"), res[0].Dir)
	close(stop)
	wg.Wait()
	require.NoError(t, writeErr)
	require.NoError(t, st.Close())

	// Restore: the entry logs (copied after the checkpoint: here, the
	// same files) with the checkpointed indexes.
	r, err := Open(opts("ledgers", filepath.Join("backup", "0")))
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	info, ok, err := r.LedgerInfo(1)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, info.Fenced)
	require.Equal(t, []byte("key"), info.MasterKey)
	var n int64
	for ; ; n++ {
		ledger, entry := n%3+1, n/3
		got, err := r.GetEntry(ledger, entry)
		if err != nil {
			break
		}
		require.Equal(t, backupPayload(ledger, entry), got)
	}
	require.GreaterOrEqual(t, n, before, "entries added before the checkpoint are in it")
	for e := n; e < n+30; e++ {
		_, err := r.GetEntry(e%3+1, e/3)
		require.Error(t, err, "entry %d after the first missing one %d: not a prefix", e, n)
	}
}

package lsm

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func entryKey(ledger, entry uint64) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], ledger)
	binary.BigEndian.PutUint64(k[8:], entry)
	return k[:]
}

// TestGetAllocatesNothing: a Get whose blocks are cached, through
// memtables and tables of several levels, allocates nothing.
func TestGetAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	d, err := Open("db", smallOptions(NewMemFS()))
	require.NoError(t, err)
	defer d.Close()
	var b Batch
	for round := uint64(0); round < 4; round++ {
		b.Reset()
		for l := uint64(0); l < 10; l++ {
			for e := round * 100; e < (round+1)*100; e++ {
				b.Set(entryKey(l, e), entryKey(0, e)[8:])
			}
		}
		require.NoError(t, d.Apply(&b, Sync))
		require.NoError(t, d.Flush())
	}
	b.Reset()
	b.Set(entryKey(3, 1000), entryKey(0, 1)[8:]) // in the memtable
	b.DeleteRange(entryKey(9, 0), entryKey(10, 0))
	require.NoError(t, d.Apply(&b, Sync))
	// AllocsPerRun counts every goroutine's allocations: let the compaction
	// the flushes triggered finish first (it failed under load otherwise).
	require.NoError(t, d.WaitForCompactions(context.Background()))
	dst := make([]byte, 0, 8)
	keys := [][]byte{entryKey(5, 250), entryKey(3, 1000), entryKey(9, 10), entryKey(7, 999999)}
	for _, k := range keys {
		_, _ = d.GetAppend(dst[:0], k, nil) // warm the cache
	}
	for _, k := range keys {
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = d.GetAppend(dst[:0], k, nil)
		})
		require.Zero(t, allocs, "Get(%x)", k)
	}
}

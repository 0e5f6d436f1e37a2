package entrylocation

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBatchCount ports KeyValueStorageTest.testBatch, with our Flush
// semantics: Flush empties the batch.
func TestBatchCount(t *testing.T) {
	opts := memOptions(nil)
	opts.MaxBatchOps = 5
	ix := openTest(t, opts)
	b := ix.NewBatch()
	require.Equal(t, 0, b.Count())

	require.NoError(t, b.AddLocation(1, 1, 1))
	require.NoError(t, b.AddLocation(1, 2, 2))
	require.Equal(t, 2, b.Count())
	requireLocation(t, ix, 1, 1, 0) // not committed yet

	require.NoError(t, b.AddLocation(1, 3, 3))
	require.NoError(t, b.AddLocation(1, 4, 4))
	require.NoError(t, b.AddLocation(1, 5, 5))
	require.Equal(t, 0, b.Count(), "reaching MaxBatchOps commits and empties the batch")
	for e := int64(1); e <= 5; e++ {
		requireLocation(t, ix, 1, e, e)
	}

	require.NoError(t, b.AddLocation(1, 6, 6))
	require.Equal(t, 1, b.Count())
	requireLocation(t, ix, 1, 6, 0)

	require.NoError(t, b.Flush())
	require.Equal(t, 0, b.Count(), "unlike upstream, Flush empties the batch")
	requireLocation(t, ix, 1, 6, 6)

	require.NoError(t, b.AddLocation(1, 7, 7))
	require.Equal(t, 1, b.Count())
	require.NoError(t, b.Close())
	require.Equal(t, 0, b.Count())
	requireLocation(t, ix, 1, 7, 0)

	require.ErrorIs(t, b.AddLocation(1, 8, 8), ErrClosed)
	require.ErrorIs(t, b.Flush(), ErrClosed)
	require.ErrorIs(t, b.Close(), ErrClosed)
	requireLastEntry(t, ix, 1, 6)
}

// TestBatchFlushDoesNotReapply checks the deliberate difference from
// upstream: a second Flush writes nothing, so it cannot undo a newer
// write of the same key.
func TestBatchFlushDoesNotReapply(t *testing.T) {
	ix := openTest(t, nil)
	b := ix.NewBatch()
	defer b.Close()
	require.NoError(t, b.AddLocation(3, 1, 5))
	require.NoError(t, b.Flush())
	require.NoError(t, ix.AddLocation(3, 1, 9))
	synced := ix.Metrics().Engine.SyncedBatches
	require.NoError(t, b.Flush())
	require.Equal(t, synced, ix.Metrics().Engine.SyncedBatches, "an empty Flush writes nothing")
	requireLocation(t, ix, 3, 1, 9)

	// The batch is reusable after a Flush; the last write of a key wins.
	require.NoError(t, b.AddLocation(3, 2, 1))
	require.NoError(t, b.AddLocation(3, 2, 2))
	require.NoError(t, b.Flush())
	requireLocation(t, ix, 3, 2, 2)
}

// TestBatchIsOneCommit checks that a batch below MaxBatchOps is one synced
// write, invisible until Flush.
func TestBatchIsOneCommit(t *testing.T) {
	ix := openTest(t, nil)
	b := ix.NewBatch()
	defer b.Close()
	for e := int64(0); e < 1000; e++ {
		require.NoError(t, b.AddLocation(e%7, e, e+1))
	}
	requireNoEntry(t, ix, 0)
	before := ix.Metrics().Engine
	require.NoError(t, b.Flush())
	after := ix.Metrics().Engine
	require.EqualValues(t, 1, after.SyncedBatches-before.SyncedBatches)
	require.EqualValues(t, 1000, after.KeysWritten-before.KeysWritten)
	requireLastEntry(t, ix, 0, 994)
	requireLastEntry(t, ix, 5, 999)
	requireLastEntry(t, ix, 6, 993)
}

func TestBatchesAreIndependent(t *testing.T) {
	ix := openTest(t, nil)
	b1, b2 := ix.NewBatch(), ix.NewBatch()
	require.NoError(t, b1.AddLocation(1, 1, 11))
	require.NoError(t, b2.AddLocation(2, 1, 21))
	require.NoError(t, b2.Flush())
	require.NoError(t, b1.Close())
	requireLocation(t, ix, 1, 1, 0)
	requireLocation(t, ix, 2, 1, 21)
	require.NoError(t, b2.Close())
}

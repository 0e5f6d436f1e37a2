package entrylocation

import (
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// Ports of BookKeeper's EntryLocationIndexTest.

func TestDeleteLedger(t *testing.T) {
	ix := openTest(t, nil)
	// Add some dummy indexes.
	require.NoError(t, ix.AddLocation(40312, 0, 1))
	require.NoError(t, ix.AddLocation(40313, 10, 2))
	require.NoError(t, ix.AddLocation(40320, 0, 3))

	// Add more indexes in a different batch.
	require.NoError(t, ix.AddLocation(40313, 11, 5))
	require.NoError(t, ix.AddLocation(40313, 12, 6))
	require.NoError(t, ix.AddLocation(40320, 1, 7))
	require.NoError(t, ix.AddLocation(40312, 3, 4))

	require.NoError(t, ix.Delete(40313))

	requireLocation(t, ix, 40312, 0, 1)
	requireLocation(t, ix, 40312, 3, 4)
	requireLocation(t, ix, 40320, 0, 3)
	requireLocation(t, ix, 40320, 1, 7)

	// The deleted ledger is still readable until the purge.
	requireLocation(t, ix, 40313, 10, 2)
	requireLocation(t, ix, 40313, 11, 5)
	requireLocation(t, ix, 40313, 12, 6)

	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())

	requireLocation(t, ix, 40313, 10, 0)
	requireLocation(t, ix, 40313, 11, 0)
	requireLocation(t, ix, 40313, 12, 0)
	// The others are untouched.
	requireLocation(t, ix, 40312, 0, 1)
	requireLocation(t, ix, 40312, 3, 4)
	requireLocation(t, ix, 40320, 0, 3)
	requireLocation(t, ix, 40320, 1, 7)
}

func TestDeleteBatchLedgers(t *testing.T) {
	ix := openTest(t, nil)
	const numLedgers, numEntriesPerLedger = 1000, 100

	location := int64(0)
	b := ix.NewBatch()
	for entryID := int64(0); entryID < numEntriesPerLedger; entryID++ {
		for ledgerID := int64(0); ledgerID < numLedgers; ledgerID++ {
			location++
			require.NoError(t, b.AddLocation(ledgerID, entryID, location))
		}
	}
	require.NoError(t, b.Flush())
	require.NoError(t, b.Close())

	expected := func(ledgerID, entryID int64) int64 { return entryID*numLedgers + ledgerID + 1 }
	// Under the race detector a lookup costs ~20µs: check a fifth.
	stride := int64(1)
	if raceEnabled {
		stride = 5
	}
	checkAll := func(deletedGone bool) {
		t.Helper()
		for entryID := int64(0); entryID < numEntriesPerLedger; entryID += stride {
			for ledgerID := int64(0); ledgerID < numLedgers; ledgerID++ {
				want := expected(ledgerID, entryID)
				if deletedGone && ledgerID%2 == 0 {
					want = 0
				}
				got, err := ix.GetLocation(ledgerID, entryID)
				require.NoError(t, err)
				if got != want {
					require.Equal(t, want, got, "location of (%d, %d)", ledgerID, entryID)
				}
			}
		}
	}
	checkAll(false)

	for ledgerID := int64(0); ledgerID < numLedgers; ledgerID += 2 {
		require.NoError(t, ix.Delete(ledgerID))
	}
	checkAll(false)

	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	checkAll(true)
}

func TestAddLedgerAfterDelete(t *testing.T) {
	ix := openTest(t, nil)
	require.NoError(t, ix.AddLocation(40312, 0, 1))
	require.NoError(t, ix.AddLocation(40313, 10, 2))
	require.NoError(t, ix.AddLocation(40320, 0, 3))

	require.NoError(t, ix.Delete(40313))

	// Locations added after the Delete are purged too.
	require.NoError(t, ix.AddLocation(40313, 11, 5))
	require.NoError(t, ix.AddLocation(40313, 12, 6))
	require.NoError(t, ix.AddLocation(40320, 1, 7))
	require.NoError(t, ix.AddLocation(40312, 3, 4))

	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())

	requireLocation(t, ix, 40313, 10, 0)
	requireLocation(t, ix, 40313, 11, 0)
	requireLocation(t, ix, 40313, 12, 0)
	requireLocation(t, ix, 40312, 0, 1)
	requireLocation(t, ix, 40312, 3, 4)
	requireLocation(t, ix, 40320, 0, 3)
	requireLocation(t, ix, 40320, 1, 7)

	// Locations added after the purge survive it, and the ledger is no
	// longer marked.
	require.NoError(t, ix.AddLocation(40313, 13, 8))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	requireLocation(t, ix, 40313, 13, 8)
	requireLastEntry(t, ix, 40313, 13)
}

// TestDeleteSpecialEntry is upstream's test of a ledger whose only key is
// entry -1. Here AddLocation refuses entry -1, so the key is written as an
// older version (or a tool) would have, into the engine; the purge must
// not fail on it, and it removes it with its ledger (upstream's range
// leaves it).
func TestDeleteSpecialEntry(t *testing.T) {
	ix := openTest(t, nil)
	require.ErrorIs(t, ix.AddLocation(40312, -1, 1), ErrInvalidArgument)
	var b lsm.Batch
	k, v := EncodeKey(40312, -1), EncodeLocation(1)
	b.Set(k[:], v[:])
	require.NoError(t, ix.DB().Apply(&b, lsm.Sync))
	require.NoError(t, ix.AddLocation(40313, 10, 2))
	require.NoError(t, ix.AddLocation(40320, 0, 3))
	require.NoError(t, ix.AddLocation(40313, 11, 5))
	require.NoError(t, ix.AddLocation(40313, 12, 6))
	require.NoError(t, ix.AddLocation(40320, 1, 7))
	// The negative key is not an entry of the ledger.
	requireNoEntry(t, ix, 40312)

	// Purging a ledger whose only key is entry -1 must not fail.
	require.NoError(t, ix.Delete(40312))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())

	require.NoError(t, ix.Delete(40313))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())

	requireLocation(t, ix, 40312, 10, 0)
	requireLocation(t, ix, 40313, 10, 0)
	requireLocation(t, ix, 40313, 11, 0)
	requireLocation(t, ix, 40320, 0, 3)
	requireLocation(t, ix, 40320, 1, 7)
	_, err := ix.DB().Get(k[:])
	require.ErrorIs(t, err, lsm.ErrNotFound, "the purge removes the negative key with its ledger")
}

func TestEntryIndexLookupLatencyStats(t *testing.T) {
	opts := memOptions(nil)
	opts.EnableStatistics = true
	ix := openTest(t, opts)
	require.NoError(t, ix.AddLocation(40313, 11, 5))

	// A successful lookup.
	requireLocation(t, ix, 40313, 11, 5)
	m := ix.Metrics().LookupEntryLocation
	require.EqualValues(t, 1, m.SuccessCount)
	require.EqualValues(t, 0, m.FailureCount)
	require.EqualValues(t, 1, m.SuccessLatency.Count)
	require.Greater(t, m.SuccessLatency.Mean().Nanoseconds(), int64(0))
	require.Greater(t, m.SuccessLatency.Quantile(0.5).Nanoseconds(), int64(0))

	// A miss counts as a failure.
	requireLocation(t, ix, 12345, 1, 0)
	m = ix.Metrics().LookupEntryLocation
	require.EqualValues(t, 1, m.SuccessCount)
	require.EqualValues(t, 1, m.FailureCount)
	require.EqualValues(t, 1, m.FailureLatency.Count)
	require.Greater(t, m.FailureLatency.Sum.Nanoseconds(), int64(0))
}

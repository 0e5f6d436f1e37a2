package entrylocation

import (
	"testing"

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

	// Upstream's locations start at 0; here 0 means absent and a write of
	// it is refused (docs/upstream.md), so they start at 1.
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

// TestDeleteSpecialEntry is upstream's regression test of a ledger whose
// only key is entry -1 (BookKeeper issue #2001): the index stores it, the
// purge of that ledger must not fail, and a later purge of another ledger
// is not affected. Here the purge also removes the key -1 (upstream's
// range, below (L, MaxInt64), leaves it).
func TestDeleteSpecialEntry(t *testing.T) {
	ix := openTest(t, nil)
	// Add some dummy indexes.
	require.NoError(t, ix.AddLocation(40312, -1, 1))
	require.NoError(t, ix.AddLocation(40313, 10, 2))
	require.NoError(t, ix.AddLocation(40320, 0, 3))

	// Add more indexes in a different batch.
	require.NoError(t, ix.AddLocation(40313, 11, 5))
	require.NoError(t, ix.AddLocation(40313, 12, 6))
	require.NoError(t, ix.AddLocation(40320, 1, 7))

	requireLocation(t, ix, 40312, -1, 1)
	// The key -1 sorts after every other entry of its ledger, where the
	// last-entry probe does not look.
	requireNoEntry(t, ix, 40312)

	// Purging a ledger whose only key is entry -1 must not fail.
	require.NoError(t, ix.Delete(40312))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())

	// Another purge is not affected.
	require.NoError(t, ix.Delete(40313))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	requireLocation(t, ix, 40312, 10, 0)

	requireLocation(t, ix, 40313, 10, 0)
	requireLocation(t, ix, 40313, 11, 0)
	requireLocation(t, ix, 40313, 12, 0)
	requireLocation(t, ix, 40320, 0, 3)
	requireLocation(t, ix, 40320, 1, 7)
	requireLastEntry(t, ix, 40320, 1)
	requireLocation(t, ix, 40312, -1, 0) // upstream: still 1
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

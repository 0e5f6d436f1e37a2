package entrylocation

import (
	"context"
	"math"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// TestIDBoundaries writes, reads, purges and rewrites the ledgers and
// entries at both ends of the id space, 0 and MaxInt64, from the memtable
// and from tables.
func TestIDBoundaries(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "memtable", true: "tables"}[compact], func(t *testing.T) {
			fs := lsm.NewMemFS()
			ix := openTest(t, memOptions(fs))
			const maxID = math.MaxInt64
			ledgers := []int64{0, 1, maxID - 1, maxID}
			loc := func(l, e int64) int64 { return int64(uint64(l)%1000*10+uint64(e)%10) + 1 }
			b := ix.NewBatch()
			for _, l := range ledgers {
				require.NoError(t, ix.AddLocation(l, 0, loc(l, 0)))
				require.NoError(t, b.AddLocation(l, maxID, loc(l, maxID)))
				require.NoError(t, ix.UpdateLocations([]EntryLocation{{l, maxID - 1, loc(l, maxID-1)}}))
			}
			require.NoError(t, b.Flush())
			if compact {
				require.NoError(t, ix.Compact(context.Background()))
			}
			for _, l := range ledgers {
				for _, e := range []int64{0, maxID - 1, maxID} {
					requireLocation(t, ix, l, e, loc(l, e))
				}
				requireLastEntry(t, ix, l, maxID)
			}

			// Delete and purge the ledgers at both ends: every entry goes,
			// MaxInt64 included; their neighbours keep theirs.
			require.NoError(t, ix.Delete(0))
			require.NoError(t, ix.Delete(maxID))
			requireNoEntry(t, ix, 0)
			requireNoEntry(t, ix, maxID)
			require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
			if compact {
				require.NoError(t, ix.Compact(context.Background()))
			}
			for _, l := range []int64{0, maxID} {
				for _, e := range []int64{0, maxID - 1, maxID} {
					requireLocation(t, ix, l, e, 0)
				}
				requireNoEntry(t, ix, l)
			}
			for _, l := range []int64{1, maxID - 1} {
				requireLocation(t, ix, l, maxID, loc(l, maxID))
				requireLastEntry(t, ix, l, maxID)
			}

			// Written again, a purged ledger has only its new entries: its
			// old entry MaxInt64 does not come back (upstream's purge
			// leaves it, and its probe hides it until then).
			for _, l := range []int64{0, maxID} {
				require.NoError(t, ix.AddLocation(l, 5, 99))
				requireLocation(t, ix, l, maxID, 0)
				requireLastEntry(t, ix, l, 5)
			}

			// After a reopen, the same.
			require.NoError(t, ix.Close())
			ix2, err := Open("/index", memOptions(fs))
			require.NoError(t, err)
			defer ix2.Close()
			for _, l := range []int64{0, maxID} {
				requireLocation(t, ix2, l, maxID, 0)
				requireLastEntry(t, ix2, l, 5)
			}
			requireLastEntry(t, ix2, maxID-1, maxID)
		})
	}
}

// TestNegativeLedgerIDsRefused checks every call that takes a ledger id:
// a negative one is an error naming it, and writes nothing.
func TestNegativeLedgerIDsRefused(t *testing.T) {
	ix := openTest(t, nil)
	b := ix.NewBatch()
	defer b.Close()
	for _, c := range []struct{ ledger, entry int64 }{{-1, 0}, {math.MinInt64, 0}, {-1, -1}, {-2, math.MaxInt64}} {
		calls := map[string]error{
			"GetLocation":          second(ix.GetLocation(c.ledger, c.entry)),
			"AddLocation":          ix.AddLocation(c.ledger, c.entry, 1),
			"Batch.AddLocation":    b.AddLocation(c.ledger, c.entry, 1),
			"UpdateLocations":      ix.UpdateLocations([]EntryLocation{{c.ledger, c.entry, 1}}),
			"GetLastEntryInLedger": second(ix.GetLastEntryInLedger(c.ledger)),
			"Delete":               ix.Delete(c.ledger),
		}
		for name, err := range calls {
			require.ErrorIs(t, err, ErrInvalidArgument, "%s(%d, %d)", name, c.ledger, c.entry)
			require.ErrorContains(t, err, "is negative", "%s(%d, %d)", name, c.ledger, c.entry)
		}
	}
	require.Zero(t, b.Count())
	require.EqualValues(t, 0, ix.Metrics().Engine.Batches)
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
}

// TestNegativeEntryIDs checks upstream's semantics of negative entry ids:
// every write and GetLocation takes them; they are stored under their
// unsigned words, after MaxInt64 within their ledger, where the last-entry
// probe does not look; and the purge removes them with their ledger
// (upstream's leaves them). From the memtable, from tables and after a
// reopen.
func TestNegativeEntryIDs(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "memtable", true: "tables"}[compact], func(t *testing.T) {
			fs := lsm.NewMemFS()
			ix := openTest(t, memOptions(fs))
			const maxID = math.MaxInt64
			negatives := []int64{-1, -2, math.MinInt64, math.MinInt64 + 1}
			b := ix.NewBatch()
			for _, l := range []int64{0, 7, maxID} {
				require.NoError(t, ix.AddLocation(l, -1, 11))
				require.NoError(t, b.AddLocation(l, -2, 12))
				require.NoError(t, ix.UpdateLocations([]EntryLocation{{l, math.MinInt64, 13}, {l, math.MinInt64 + 1, 14}}))
			}
			require.NoError(t, b.Flush())
			require.NoError(t, ix.AddLocation(7, 5, 15))
			require.NoError(t, ix.AddLocation(maxID, maxID, 16))
			if compact {
				require.NoError(t, ix.Compact(context.Background()))
			}
			check := func(ix *Index) {
				t.Helper()
				for _, l := range []int64{0, 7, maxID} {
					for i, e := range negatives {
						requireLocation(t, ix, l, e, int64(11+i))
					}
				}
				// Invisible to the probe: ledger 0 holds only negative
				// entry ids.
				requireNoEntry(t, ix, 0)
				requireLastEntry(t, ix, 7, 5)
				requireLastEntry(t, ix, maxID, maxID)
				requireNoEntry(t, ix, 8) // the next ledger's probe does not see them either
			}
			check(ix)

			// Stored as unsigned words: after (L, MaxInt64), before (L+1, 0).
			it, err := ix.DB().NewIter(nil)
			require.NoError(t, err)
			var keys [][2]int64
			for ok := it.First(); ok; ok = it.Next() {
				l, e, err := DecodeKey(it.Key())
				require.NoError(t, err)
				keys = append(keys, [2]int64{l, e})
			}
			require.NoError(t, it.Close())
			require.Equal(t, [][2]int64{
				{0, math.MinInt64}, {0, math.MinInt64 + 1}, {0, -2}, {0, -1},
				{7, 5}, {7, math.MinInt64}, {7, math.MinInt64 + 1}, {7, -2}, {7, -1},
				{maxID, maxID}, {maxID, math.MinInt64}, {maxID, math.MinInt64 + 1}, {maxID, -2}, {maxID, -1},
			}, keys)

			require.NoError(t, ix.Close())
			ix, err = Open("/index", memOptions(fs))
			require.NoError(t, err)
			t.Cleanup(func() { _ = ix.Close() })
			check(ix)

			// The purge removes them with their ledger; the others keep
			// theirs.
			require.NoError(t, ix.Delete(0))
			require.NoError(t, ix.Delete(maxID))
			require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
			if compact {
				require.NoError(t, ix.Compact(context.Background()))
			}
			for _, e := range append(negatives, 5, maxID) {
				requireLocation(t, ix, 0, e, 0)
				requireLocation(t, ix, maxID, e, 0)
			}
			for i, e := range negatives {
				requireLocation(t, ix, 7, e, int64(11+i))
			}
			requireLastEntry(t, ix, 7, 5)
		})
	}
}

package entrylocation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGetLocationAllocs checks that a lookup on a warm index allocates
// nothing, hit or miss, in the memtable or the tables, with or without
// statistics.
func TestGetLocationAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, stats := range []bool{false, true} {
		opts := memOptions(nil)
		opts.EnableStatistics = stats
		ix := openTest(t, opts)
		b := ix.NewBatch()
		for l := int64(0); l < 10; l++ {
			for e := int64(0); e < 1000; e++ {
				require.NoError(t, b.AddLocation(l, e, l*1000+e+1))
			}
		}
		require.NoError(t, b.Flush())
		require.NoError(t, ix.Compact(context.Background())) // into tables
		require.NoError(t, ix.AddLocation(20, 1, 5))         // and the memtable

		var sum int64
		lookup := func(l, e int64) func() {
			return func() {
				loc, err := ix.GetLocation(l, e)
				if err != nil {
					t.Fatal(err)
				}
				sum += loc
			}
		}
		for _, c := range []struct {
			name   string
			l, e   int64
			expect int64
		}{
			{"table hit", 3, 456, 3457},
			{"table miss", 3, 5000, 0},
			{"memtable hit", 20, 1, 5},
			{"absent ledger", 15, 1, 0},
		} {
			lookup(c.l, c.e)() // warm the cache
			requireLocation(t, ix, c.l, c.e, c.expect)
			allocs := testing.AllocsPerRun(1000, lookup(c.l, c.e))
			require.Zero(t, allocs, "%s (statistics %v)", c.name, stats)
		}
		require.Positive(t, sum)
	}
}

// TestGetLastEntryInLedgerAllocs checks that a floor lookup on a warm index
// allocates nothing when it finds an entry, in the tables or the memtable,
// and only its error for an empty ledger.
func TestGetLastEntryInLedgerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	ix := openTest(t, memOptions(nil))
	b := ix.NewBatch()
	for l := int64(0); l < 10; l++ {
		for e := int64(0); e < 1000; e++ {
			require.NoError(t, b.AddLocation(l, e, l*1000+e+1))
		}
	}
	require.NoError(t, b.Flush())
	require.NoError(t, ix.Compact(context.Background()))
	require.NoError(t, ix.AddLocation(20, 7, 5))
	for _, c := range []struct {
		name   string
		ledger int64
		want   int64
		found  bool
	}{
		{"tables", 3, 999, true},
		{"memtable", 20, 7, true},
		{"empty ledger", 15, 0, false},
	} {
		floor := func() {
			e, err := ix.GetLastEntryInLedger(c.ledger)
			if c.found && (err != nil || e != c.want) || !c.found && err == nil {
				t.Fatalf("%s: %d, %v", c.name, e, err)
			}
		}
		floor() // warm the cache and the iterator pool
		allocs := testing.AllocsPerRun(500, floor)
		if c.found {
			require.Zero(t, allocs, c.name)
		} else {
			// The error value carrying upstream's message is the one.
			require.LessOrEqual(t, allocs, 1.0, c.name)
		}
	}
}

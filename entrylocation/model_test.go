package entrylocation

import (
	"context"
	"flag"
	"math"
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

var (
	modelSteps = flag.Int("model-steps", 10000, "steps of the randomized model test")
	modelSeed  = flag.Int64("model-seed", 1, "seed of the randomized model test")
)

type entryID struct{ ledger, entry int64 }

// indexModel is the reference: a map of locations and the marked set.
type indexModel struct {
	locs   map[entryID]int64
	marked map[int64]bool
}

func (m *indexModel) set(l, e, loc int64) { m.locs[entryID{l, e}] = loc }

// purge deletes every location of every marked ledger.
func (m *indexModel) purge() {
	for k := range m.locs {
		if m.marked[k.ledger] {
			delete(m.locs, k)
		}
	}
	clear(m.marked)
}

// lastEntry is the greatest entry id >= 0 of ledger l: negative ones are
// stored after MaxInt64, where the probe does not look.
func (m *indexModel) lastEntry(l int64) (int64, bool) {
	if m.marked[l] {
		return 0, false
	}
	last, found := int64(-1), false
	for k := range m.locs {
		if k.ledger == l && k.entry >= 0 && k.entry > last {
			last, found = k.entry, true
		}
	}
	return last, found
}

// modelLedgerIDs are the ledgers of the model test: small ones, and the
// greatest ids, whose ranges end where a ledger id + 1 would overflow.
var modelLedgerIDs = []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, math.MaxInt64 - 1, math.MaxInt64}

func modelLedger(rng *rand.Rand) int64 { return modelLedgerIDs[rng.Intn(len(modelLedgerIDs))] }

func modelEntry(rng *rand.Rand) int64 {
	switch rng.Intn(25) {
	case 0:
		return 0
	case 1:
		return math.MaxInt64
	case 2:
		return math.MaxInt64 - 1
	case 3: // negative entry ids are stored as upstream stores them
		return -1 - rng.Int63n(2)
	case 4:
		return math.MinInt64 + rng.Int63n(2)
	default:
		return rng.Int63n(40)
	}
}

// badLedger returns a negative ledger id, which every call refuses.
func badLedger(rng *rand.Rand) int64 {
	if rng.Intn(2) == 0 {
		return -1
	}
	return math.MinInt64 + rng.Int63n(3)
}

// TestModel runs random adds, batches, updates, deletes, purges, reopens
// and compactions against the index and a map, checking lookups and last
// entries as it goes and everything at the end.
func TestModel(t *testing.T) {
	rng := rand.New(rand.NewSource(*modelSeed))
	fs := lsm.NewMemFS()
	newOpts := func() *Options {
		o := smallTableOptions(fs)
		o.MaxBatchOps = 7
		return o
	}
	ix, err := Open("/index", newOpts())
	require.NoError(t, err)
	defer func() { _ = ix.Close() }()
	m := &indexModel{locs: map[entryID]int64{}, marked: map[int64]bool{}}
	b := ix.NewBatch()
	var pending []EntryLocation
	applyPending := func() {
		for _, p := range pending {
			m.set(p.LedgerID, p.EntryID, p.Location)
		}
		pending = pending[:0]
	}
	nextLoc := int64(0)
	newLoc := func() int64 { nextLoc++; return nextLoc }

	checkGet := func(l, e int64) {
		got, err := ix.GetLocation(l, e)
		require.NoError(t, err)
		require.Equal(t, m.locs[entryID{l, e}], got, "location of (%d, %d)", l, e)
	}
	checkLast := func(l int64) {
		want, ok := m.lastEntry(l)
		got, err := ix.GetLastEntryInLedger(l)
		if !ok {
			require.ErrorIs(t, err, ErrNoEntry, "ledger %d: got %d", l, got)
			return
		}
		require.NoError(t, err, "ledger %d", l)
		require.Equal(t, want, got, "last entry of %d", l)
	}
	checkAll := func() {
		for k := range m.locs {
			checkGet(k.ledger, k.entry)
		}
		for _, l := range modelLedgerIDs {
			checkLast(l)
			checkGet(l, rng.Int63n(40))
		}
	}

	steps := *modelSteps
	if raceEnabled {
		steps /= 4 // the race detector makes each step ~5x slower
	}
	for step := 0; step < steps; step++ {
		l := modelLedger(rng)
		switch op := rng.Intn(100); {
		case op < 15:
			e, loc := modelEntry(rng), newLoc()
			require.NoError(t, ix.AddLocation(l, e, loc))
			m.set(l, e, loc)
		case op < 40:
			e, loc := modelEntry(rng), newLoc()
			require.NoError(t, b.AddLocation(l, e, loc))
			pending = append(pending, EntryLocation{l, e, loc})
			if len(pending) == 7 {
				applyPending() // auto commit at MaxBatchOps
			}
			require.Equal(t, len(pending), b.Count())
		case op < 45:
			require.NoError(t, b.Flush())
			applyPending()
		case op < 47:
			require.NoError(t, b.Close())
			pending = pending[:0]
			b = ix.NewBatch()
		case op < 52:
			var locs []EntryLocation
			for range rng.Intn(20) {
				locs = append(locs, EntryLocation{modelLedger(rng), modelEntry(rng), newLoc()})
			}
			require.NoError(t, ix.UpdateLocations(locs))
			for _, p := range locs {
				m.set(p.LedgerID, p.EntryID, p.Location)
			}
		case op < 57:
			require.NoError(t, ix.Delete(l))
			m.marked[l] = true
		case op < 61:
			require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
			m.purge()
		case op < 62:
			// Reopen: the batch goes with the old index, and the marks are
			// forgotten.
			require.NoError(t, b.Close())
			pending = pending[:0]
			require.NoError(t, ix.Close())
			ix, err = Open("/index", newOpts())
			require.NoError(t, err)
			b = ix.NewBatch()
			clear(m.marked)
			checkAll()
		case op < 63:
			require.NoError(t, ix.Compact(context.Background()))
		case op < 65:
			// Negative ledger ids are refused and change nothing.
			l, e := badLedger(rng), modelEntry(rng)
			var err error
			switch rng.Intn(6) {
			case 0:
				err = ix.AddLocation(l, e, newLoc())
			case 1:
				err = b.AddLocation(l, e, newLoc())
			case 2:
				err = ix.UpdateLocations([]EntryLocation{{0, 0, newLoc()}, {l, e, newLoc()}})
			case 3:
				_, err = ix.GetLastEntryInLedger(l)
			case 4:
				err = ix.Delete(l)
			default:
				_, err = ix.GetLocation(l, e)
			}
			require.ErrorIs(t, err, ErrInvalidArgument, "entry %d of ledger %d", e, l)
			require.Equal(t, len(pending), b.Count())
		case op < 80:
			checkGet(l, modelEntry(rng))
		default:
			checkLast(l)
		}
	}
	require.NoError(t, b.Flush())
	applyPending()
	checkAll()
	require.NoError(t, ix.Compact(context.Background()))
	checkAll()
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	m.purge()
	checkAll()
}

package entrylocation

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConcurrent runs readers, a batch writer, single writers, purges,
// metrics and compactions together, then closes the index under them.
// Run it with -race.
func TestConcurrent(t *testing.T) {
	opts := smallTableOptions(nil)
	opts.MaxBatchOps = 64
	ix, err := Open("/index", opts)
	require.NoError(t, err)

	// Stable ledgers 0-9: never written or deleted again.
	const stableLedgers, stableEntries = 10, 300
	stable := func(l, e int64) int64 { return l*10_000 + e + 1 }
	b := ix.NewBatch()
	for l := int64(0); l < stableLedgers; l++ {
		for e := int64(0); e < stableEntries; e++ {
			require.NoError(t, b.AddLocation(l, e, stable(l, e)))
		}
	}
	require.NoError(t, b.Flush())
	require.NoError(t, b.Close())

	var closing atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	// run calls step until Close; an error before Close fails the test,
	// one after Close must be ErrClosed.
	run := func(name string, seed int64, step func(rng *rand.Rand) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for {
				wasClosing := closing.Load()
				err := step(rng)
				if err == nil {
					if wasClosing {
						return // Close may wait for us: a call that started before it succeeds
					}
					continue
				}
				if !wasClosing && !closing.Load() || !errors.Is(err, ErrClosed) {
					errs <- errors.Join(errors.New(name), err)
				}
				return
			}
		}()
	}
	var reads atomic.Int64
	for r := range 2 {
		run("reader", int64(r), func(rng *rand.Rand) error {
			l, e := rng.Int63n(stableLedgers), rng.Int63n(stableEntries)
			loc, err := ix.GetLocation(l, e)
			if err != nil {
				return err
			}
			if loc != stable(l, e) {
				return errors.New("a stable location changed")
			}
			last, err := ix.GetLastEntryInLedger(l)
			if err != nil {
				return err
			}
			if last != stableEntries-1 {
				return errors.New("a stable last entry changed")
			}
			// Volatile ledgers: any location, no entry, or a last entry.
			if _, err := ix.GetLocation(100+rng.Int63n(20), rng.Int63n(100)); err != nil {
				return err
			}
			if _, err := ix.GetLastEntryInLedger(100 + rng.Int63n(20)); err != nil && !errors.Is(err, ErrNoEntry) {
				return err
			}
			reads.Add(1)
			return nil
		})
	}
	wb := ix.NewBatch()
	run("batch writer", 10, func(rng *rand.Rand) error {
		if err := wb.AddLocation(100+rng.Int63n(20), rng.Int63n(100), 1+rng.Int63n(1e9)); err != nil {
			return err
		}
		if rng.Intn(50) == 0 {
			return wb.Flush()
		}
		return nil
	})
	run("writer", 11, func(rng *rand.Rand) error {
		return ix.UpdateLocations([]EntryLocation{{100 + rng.Int63n(20), rng.Int63n(100), 1 + rng.Int63n(1e9)}})
	})
	run("purger", 12, func(rng *rand.Rand) error {
		if err := ix.Delete(100 + rng.Int63n(20)); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
		return ix.RemoveOffsetFromDeletedLedgers()
	})
	var compactions atomic.Int64
	run("compactor", 13, func(*rand.Rand) error {
		err := ix.Compact(context.Background())
		compactions.Add(1)
		return err
	})
	run("metrics", 14, func(*rand.Rand) error {
		m := ix.Metrics()
		if m.EntriesCount < 0 && !closing.Load() {
			return errors.New("EntriesCount < 0 before Close")
		}
		_ = ix.IsCompacting()
		time.Sleep(time.Millisecond)
		return nil
	})

	time.Sleep(300 * time.Millisecond)
	closing.Store(true)
	require.NoError(t, ix.Close())
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, reads.Load())
	require.Positive(t, compactions.Load())
	require.False(t, ix.IsCompacting())
	_ = wb.Close()

	// What was committed is all there after a reopen.
	ix, err = Open("/index", opts)
	require.NoError(t, err)
	defer ix.Close()
	for l := int64(0); l < stableLedgers; l++ {
		requireLastEntry(t, ix, l, stableEntries-1)
		requireLocation(t, ix, l, 17, stable(l, 17))
	}
}

package lsm

import (
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func convKey(i int) []byte { return []byte(fmt.Sprintf("k%06d", i)) }

// conversionOptions keep every table in L0 (no compaction drops the
// tombstones) and convert runs of at least n.
func conversionOptions(fs FS, n int) *Options {
	o := smallOptions(fs)
	o.WriteBufferSize = 16 << 20
	o.Level0FileNumCompactionTrigger = 8
	o.Level0SlowdownWritesTrigger = 20
	o.Level0StopWritesTrigger = 36
	o.MinTombstonesForRangeConversion = n
	o.BlockCacheSize = 64 << 20
	return o
}

// blocksTouched is what a seek costs in blocks, cached or not.
func blocksTouched(s *ReadStats) int64 { return s.DataReads + s.IndexReads + s.CacheHits }

// TestTombstoneConversionLargeRun: a seek over 100K point tombstones in a
// table inserts one range tombstone; later seeks, forward and backward,
// are at least 10x cheaper; a snapshot from before the deletions and
// writes made after the conversion see what they should.
func TestTombstoneConversionLargeRun(t *testing.T) {
	const n = 100_000
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverse=%v", reverse), func(t *testing.T) {
			fs := NewMemFS()
			d, err := Open("db", conversionOptions(fs, 64))
			require.NoError(t, err)
			defer d.Close()
			var b Batch
			for i := 0; i < n; i++ {
				b.Set(convKey(i), []byte("v"))
			}
			b.Set([]byte("a"), []byte("live"))
			b.Set([]byte("z"), []byte("live"))
			require.NoError(t, d.Apply(&b, NoSync))
			require.NoError(t, d.Flush())
			snap, err := d.NewSnapshot()
			require.NoError(t, err)
			defer snap.Close()
			b.Reset()
			for i := 0; i < n; i++ {
				b.Delete(convKey(i))
			}
			require.NoError(t, d.Apply(&b, NoSync))
			require.NoError(t, d.Flush())

			seek := func() (time.Duration, int64) {
				var stats ReadStats
				it, err := d.NewIter(&IterOptions{Stats: &stats})
				require.NoError(t, err)
				start := time.Now()
				var ok bool
				want := "z"
				if reverse {
					ok, want = it.SeekLT([]byte("z")), "a"
				} else {
					ok = it.SeekGE([]byte("k"))
				}
				elapsed := time.Since(start)
				require.True(t, ok)
				require.Equal(t, want, string(it.Key()))
				require.NoError(t, it.Close())
				return elapsed, blocksTouched(&stats)
			}
			first, firstBlocks := seek()
			require.EqualValues(t, 1, d.Metrics().ReadPathRangeTombstonesInserted)
			later, laterBlocks := seek()
			for i := 0; i < 2; i++ {
				e, blocks := seek()
				later, laterBlocks = min(later, e), min(laterBlocks, blocks)
			}
			t.Logf("first seek %v (%d blocks), later seeks %v (%d blocks)", first, firstBlocks, later, laterBlocks)
			require.EqualValues(t, 1, d.Metrics().ReadPathRangeTombstonesInserted, "the span is covered: no second insertion")
			require.GreaterOrEqual(t, firstBlocks, 10*laterBlocks)
			require.GreaterOrEqual(t, first, 10*later)

			// The snapshot still sees every key.
			it, err := d.NewIter(&IterOptions{Snapshot: snap})
			require.NoError(t, err)
			count := 0
			for ok := it.First(); ok; ok = it.Next() {
				count++
			}
			require.NoError(t, it.Close())
			require.Equal(t, n+2, count)
			requireGet(t, d, string(convKey(n/2)), "v", snap)
			requireGet(t, d, string(convKey(n/2)), "", nil)

			// A write after the conversion is visible, in both directions.
			b.Reset()
			b.Set(convKey(n/2), []byte("new"))
			require.NoError(t, d.Apply(&b, NoSync))
			requireGet(t, d, string(convKey(n/2)), "new", nil)
			require.Equal(t, []string{"a=live", string(convKey(n/2)) + "=new", "z=live"}, scan(t, d, nil, false))
			require.Equal(t, []string{"a=live", string(convKey(n/2)) + "=new", "z=live"}, scan(t, d, nil, true))
			// ... and after the tombstone is flushed with it.
			require.NoError(t, d.Flush())
			require.Equal(t, []string{"a=live", string(convKey(n/2)) + "=new", "z=live"}, scan(t, d, nil, false))
			requireGet(t, d, string(convKey(n/2)), "v", snap)
		})
	}
}

// convDB writes keys 0..n-1 and deletes those in deleted.
func convDB(t *testing.T, minRun, n int, deleted func(i int) bool) *DB {
	d, err := Open("db", conversionOptions(NewMemFS(), minRun))
	require.NoError(t, err)
	var b Batch
	for i := 0; i < n; i++ {
		b.Set(convKey(i), []byte("v"))
	}
	require.NoError(t, d.Apply(&b, NoSync))
	require.NoError(t, d.Flush())
	b.Reset()
	for i := 0; i < n; i++ {
		if deleted(i) {
			b.Delete(convKey(i))
		}
	}
	require.NoError(t, d.Apply(&b, NoSync))
	return d
}

func inserted(d *DB) int64  { return d.Metrics().ReadPathRangeTombstonesInserted }
func discarded(d *DB) int64 { return d.Metrics().ReadPathRangeTombstonesDiscarded }

// TestTombstoneConversionCases: thresholds, bounds, snapshots, direction
// changes and memtable switches.
func TestTombstoneConversionCases(t *testing.T) {
	t.Run("below threshold", func(t *testing.T) {
		// Runs of 3 between live keys, threshold 4.
		d := convDB(t, 4, 40, func(i int) bool { return i%4 != 0 })
		defer d.Close()
		require.Len(t, scan(t, d, nil, false), 10)
		require.Len(t, scan(t, d, nil, true), 10)
		require.Zero(t, inserted(d))
	})
	t.Run("runs between live keys", func(t *testing.T) {
		d := convDB(t, 3, 40, func(i int) bool { return i%4 != 0 })
		defer d.Close()
		require.Len(t, scan(t, d, nil, false), 10)
		require.EqualValues(t, 10, inserted(d), "9 runs between live keys and the one after the last")
		require.Len(t, scan(t, d, nil, true), 10)
		require.EqualValues(t, 10, inserted(d), "backward, the runs are covered already")
	})
	t.Run("off", func(t *testing.T) {
		d := convDB(t, 0, 40, func(i int) bool { return true })
		defer d.Close()
		require.Empty(t, scan(t, d, nil, false))
		require.Zero(t, inserted(d))
	})
	t.Run("upper bound", func(t *testing.T) {
		d := convDB(t, 3, 40, func(i int) bool { return i < 30 })
		defer d.Close()
		o := &IterOptions{LowerBound: convKey(5), UpperBound: convKey(20)}
		require.Empty(t, scan(t, d, o, false))
		require.EqualValues(t, 1, inserted(d))
		// [k5, k20) is deleted; k30.. stay.
		require.Len(t, scan(t, d, nil, false), 10)
		require.Len(t, scan(t, d, nil, true), 10)
		requireGet(t, d, string(convKey(30)), "v", nil)
	})
	t.Run("reverse lower bound", func(t *testing.T) {
		d := convDB(t, 3, 40, func(i int) bool { return i >= 10 })
		defer d.Close()
		o := &IterOptions{LowerBound: convKey(15), UpperBound: convKey(35)}
		require.Empty(t, scan(t, d, o, true))
		require.EqualValues(t, 1, inserted(d))
		require.Len(t, scan(t, d, nil, true), 10)
		require.Len(t, scan(t, d, nil, false), 10)
	})
	t.Run("tombstones newer than the snapshot do not count", func(t *testing.T) {
		fs := NewMemFS()
		d, err := Open("db", conversionOptions(fs, 3))
		require.NoError(t, err)
		defer d.Close()
		var b Batch
		for i := 0; i < 20; i++ {
			b.Set(convKey(i), []byte("v"))
		}
		require.NoError(t, d.Apply(&b, NoSync))
		snap, err := d.NewSnapshot()
		require.NoError(t, err)
		defer snap.Close()
		b.Reset()
		for i := 0; i < 20; i++ {
			b.Delete(convKey(i))
		}
		require.NoError(t, d.Apply(&b, NoSync))
		require.Len(t, scan(t, d, &IterOptions{Snapshot: snap}, false), 20)
		require.Len(t, scan(t, d, &IterOptions{Snapshot: snap}, true), 20)
		require.Zero(t, inserted(d))
		// Without the snapshot they do; the snapshot still sees its keys.
		require.Empty(t, scan(t, d, nil, false))
		require.EqualValues(t, 1, inserted(d))
		require.Len(t, scan(t, d, &IterOptions{Snapshot: snap}, false), 20)
		require.NoError(t, d.Flush())
		require.Len(t, scan(t, d, &IterOptions{Snapshot: snap}, true), 20)
	})
	t.Run("an iterator at an older snapshot does not convert", func(t *testing.T) {
		fs := NewMemFS()
		d, err := Open("db", conversionOptions(fs, 3))
		require.NoError(t, err)
		defer d.Close()
		var b Batch
		for i := 0; i < 20; i++ {
			b.Set(convKey(i), []byte("v"))
		}
		require.NoError(t, d.Apply(&b, NoSync))
		b.Reset()
		for i := 0; i < 20; i++ {
			b.Delete(convKey(i))
		}
		require.NoError(t, d.Apply(&b, NoSync))
		snap, err := d.NewSnapshot()
		require.NoError(t, err)
		defer snap.Close()
		b.Reset()
		b.Set(convKey(7), []byte("after"))
		require.NoError(t, d.Apply(&b, NoSync))
		// The snapshot's iterator sees 20 tombstones but is older than the
		// DB: its tombstone would sit in the mutable memtable below newer
		// entries of the sources under it, so it inserts none.
		require.Empty(t, scan(t, d, &IterOptions{Snapshot: snap}, false))
		require.EqualValues(t, 0, inserted(d))
		require.Equal(t, []string{string(convKey(7)) + "=after"}, scan(t, d, nil, false))
		requireGet(t, d, string(convKey(7)), "after", nil)
	})
	t.Run("direction changes", func(t *testing.T) {
		d := convDB(t, 3, 40, func(i int) bool { return i%10 != 0 })
		defer d.Close()
		it, err := d.NewIter(nil)
		require.NoError(t, err)
		require.True(t, it.SeekGE(convKey(10)))
		require.True(t, it.Next())
		require.Equal(t, string(convKey(20)), string(it.Key()))
		require.True(t, it.Prev())
		require.Equal(t, string(convKey(10)), string(it.Key()))
		require.True(t, it.Prev())
		require.Equal(t, string(convKey(0)), string(it.Key()))
		require.True(t, it.Next())
		require.True(t, it.Next())
		require.True(t, it.Next())
		require.Equal(t, string(convKey(30)), string(it.Key()))
		require.False(t, it.Next())
		require.NoError(t, it.Close())
		require.EqualValues(t, 4, inserted(d))
		require.Equal(t, []string{"k000000=v", "k000010=v", "k000020=v", "k000030=v"}, scan(t, d, nil, false))
		require.Equal(t, []string{"k000000=v", "k000010=v", "k000020=v", "k000030=v"}, scan(t, d, nil, true))
	})
	t.Run("memtable switch", func(t *testing.T) {
		d := convDB(t, 3, 40, func(i int) bool { return i >= 10 })
		defer d.Close()
		it, err := d.NewIter(nil)
		require.NoError(t, err)
		require.NoError(t, d.Flush())
		require.True(t, it.SeekGE(convKey(0)))
		require.False(t, it.SeekGE(convKey(10)))
		require.NoError(t, it.Close())
		require.Zero(t, inserted(d))
		require.EqualValues(t, 1, discarded(d))
		require.Len(t, scan(t, d, nil, false), 10)
		require.EqualValues(t, 1, inserted(d))
	})
	t.Run("range-deleted keys neither count nor end runs", func(t *testing.T) {
		d := convDB(t, 3, 40, func(i int) bool { return i < 2 || i >= 20 && i != 30 })
		defer d.Close()
		var b Batch
		b.DeleteRange(convKey(2), convKey(20))
		require.NoError(t, d.Apply(&b, NoSync))
		require.Equal(t, []string{"k000030=v"}, scan(t, d, nil, false))
		require.EqualValues(t, 2, inserted(d), "[k0, k30) and [k31, k39+)")
		require.Equal(t, []string{"k000030=v"}, scan(t, d, nil, true))
		require.EqualValues(t, 2, inserted(d))
		d2 := convDB(t, 3, 40, func(i int) bool { return i < 2 })
		defer d2.Close()
		b.Reset()
		b.DeleteRange(convKey(2), convKey(20))
		require.NoError(t, d2.Apply(&b, NoSync))
		require.Len(t, scan(t, d2, nil, false), 20)
		require.Zero(t, inserted(d2), "a run of two")
	})
}

// TestTombstoneConversionConcurrent runs iterators that convert (forward
// and backward, with and without snapshots) while writers set and delete
// runs of keys; each writer owns its keys, and at the end the DB holds
// exactly what the writers left. Run it with -race.
func TestTombstoneConversionConcurrent(t *testing.T) {
	seed := newTestRand(t).Int63()
	d, err := Open("db", func() *Options {
		o := smallOptions(NewMemFS())
		o.MinTombstonesForRangeConversion = 4
		return o
	}())
	require.NoError(t, err)
	const writers, keysPerWriter = 3, 300
	wkey := func(w, i int) []byte { return []byte(fmt.Sprintf("w%d-%04d", w, i)) }
	final := make([]map[string]bool, writers)
	stop := make(chan struct{})
	var readers, ws sync.WaitGroup
	for w := 0; w < writers; w++ {
		ws.Add(1)
		go func(w int, seed int64) {
			defer ws.Done()
			rng := rand.New(rand.NewSource(seed))
			live := map[string]bool{}
			for round := 0; round < 150; round++ {
				var b Batch
				lo := rng.Intn(keysPerWriter)
				hi := min(keysPerWriter, lo+1+rng.Intn(40))
				set := rng.Intn(2) == 0
				for i := lo; i < hi; i++ {
					k := wkey(w, i)
					if set {
						b.Set(k, []byte("v"))
						live[string(k)] = true
					} else {
						b.Delete(k)
						delete(live, string(k))
					}
				}
				if err := d.Apply(&b, NoSync); err != nil {
					t.Error(err)
					return
				}
			}
			final[w] = live
		}(w, seed+int64(w))
	}
	for r := 0; r < 4; r++ {
		readers.Add(1)
		go func(r int) {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var snap *Snapshot
				if r%2 == 1 {
					s, err := d.NewSnapshot()
					if err != nil {
						t.Error(err)
						return
					}
					snap = s
				}
				it, err := d.NewIter(&IterOptions{Snapshot: snap})
				if err != nil {
					t.Error(err)
					return
				}
				var keys []string
				if r < 2 {
					for ok := it.First(); ok; ok = it.Next() {
						keys = append(keys, string(it.Key()))
					}
				} else {
					for ok := it.Last(); ok; ok = it.Prev() {
						keys = append(keys, string(it.Key()))
					}
				}
				if err := it.Close(); err != nil {
					t.Error(err)
				}
				if snap != nil {
					// A second pass at the snapshot, after other
					// iterators converted, sees the same keys.
					it, _ := d.NewIter(&IterOptions{Snapshot: snap})
					var again []string
					if r < 2 {
						for ok := it.First(); ok; ok = it.Next() {
							again = append(again, string(it.Key()))
						}
					} else {
						for ok := it.Last(); ok; ok = it.Prev() {
							again = append(again, string(it.Key()))
						}
					}
					_ = it.Close()
					if fmt.Sprint(keys) != fmt.Sprint(again) {
						t.Errorf("snapshot read changed: %d keys, then %d", len(keys), len(again))
					}
					_ = snap.Close()
				}
			}
		}(r)
	}
	ws.Wait()
	close(stop)
	readers.Wait()
	var want []string
	for _, live := range final {
		for k := range live {
			want = append(want, k+"=v")
		}
	}
	sort.Strings(want)
	require.Equal(t, want, scan(t, d, nil, false))
	require.Equal(t, want, scan(t, d, nil, true))
	for _, k := range want {
		_, err := d.Get([]byte(k[:len(k)-2]))
		require.False(t, errors.Is(err, ErrNotFound), k)
	}
	t.Logf("inserted %d, discarded %d", inserted(d), discarded(d))
	require.NoError(t, d.Close())
}

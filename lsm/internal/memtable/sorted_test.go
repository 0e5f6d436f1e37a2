package memtable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// op is one operation for AddSorted.
type op struct {
	kind       base.Kind
	key, value []byte
}

// opList yields ops as a decoded batch does; failAt, if positive, makes
// the failAt-th Next return an error.
type opList struct {
	ops    []op
	i      int
	failAt int
}

func (l *opList) Next() (base.Kind, []byte, []byte, bool, error) {
	if l.failAt > 0 && l.i+1 == l.failAt {
		return 0, nil, nil, false, fmt.Errorf("decoding op %d", l.i)
	}
	if l.i == len(l.ops) {
		return 0, nil, nil, false, nil
	}
	o := l.ops[l.i]
	l.i++
	return o.kind, o.key, o.value, true, nil
}

// sortedOps are n point operations with increasing entry-location keys.
func sortedOps(rng *rand.Rand, n int) []op {
	ops := make([]op, n)
	for i := range ops {
		k := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(i/100)), uint64(i%100))
		kind := []base.Kind{base.KindSet, base.KindSet, base.KindDelete, base.KindMerge}[rng.Intn(4)]
		var v []byte
		if kind != base.KindDelete {
			v = binary.BigEndian.AppendUint64(nil, rng.Uint64())
		}
		ops[i] = op{kind, k, v}
	}
	return ops
}

// modelOf is the model a run of ops from seq makes.
func modelOf(ops []op, seq base.SeqNum) model {
	m := make(model, len(ops))
	for i, o := range ops {
		m[i] = entry{o.key, base.MakeTrailer(seq+base.SeqNum(i), o.kind), o.value}
	}
	return m
}

// TestAddSortedLinksARun: a sorted run lands whole in an empty memtable
// (built in a recycled arena), with the structure Add would build; later Adds (a search, since the
// splice is stale) go around it.
func TestAddSortedLinksARun(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	g := newKeyGen(rng)
	for _, n := range []int{0, 1, 2, 1000, scale(20000, 10)} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ops := sortedOps(rng, n)
			// In a recycled arena, full of the towers of an earlier list.
			m := New(n*80 + 1<<16)
			for i := 0; i < n; i++ {
				require.NoError(t, m.Add(base.SeqNum(i+1), base.KindSet, g.key(), bytes.Repeat([]byte{0xff}, 16)))
			}
			Poison(m)
			m = Recycle(m, n*80+1<<16)
			added, err := m.AddSorted(100, &opList{ops: ops})
			require.NoError(t, err)
			require.True(t, added)
			want := modelOf(ops, 100)
			checkList(t, want, m.points, g, 200)
			checkStructure(t, m.points)
			require.Equal(t, n, m.Count())
			for i, o := range ops {
				v, kind, found := m.Get(o.key, base.SeqNumMax)
				require.True(t, found, "op %d", i)
				require.Equal(t, o.kind, kind)
				require.Equal(t, string(o.value), string(v))
			}

			// Adds after the run, between its keys and around it.
			var b modelBuilder
			for _, e := range want {
				b.insert(e)
			}
			for i := 0; i < 300; i++ {
				e := entry{g.key(), base.MakeTrailer(base.SeqNum(1000+i), base.KindSet), []byte("x")}
				if i%3 == 0 && n > 0 {
					e.key = slices.Clone(want[rng.Intn(n)].key) // a newer version of a run key
				}
				if b.insert(e) {
					require.NoError(t, m.points.Add(e.key, e.trailer, e.value))
				}
			}
			checkList(t, b.sorted(), m.points, g, 200)
			checkStructure(t, m.points)
		})
	}
}

// TestAddSortedRefuses: a run that is not sorted by strictly increasing
// user key, holds a range deletion, meets a non-empty memtable or does not
// fit is refused with nothing added and the arena as it was; one that fails
// to decode returns the error. The memtable then takes Adds normally.
func TestAddSortedRefuses(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	g := newKeyGen(rng)
	base3 := sortedOps(rng, 3000)
	cases := map[string]func() ([]op, int){
		"descending pair": func() ([]op, int) {
			ops := slices.Clone(base3)
			ops[1500], ops[1501] = ops[1501], ops[1500]
			return ops, 0
		},
		"duplicate key": func() ([]op, int) {
			ops := slices.Clone(base3)
			ops[2999].key = ops[2998].key
			return ops, 0
		},
		"range deletion": func() ([]op, int) {
			ops := slices.Clone(base3)
			ops[10] = op{base.KindRangeDelete, ops[10].key, append(slices.Clone(ops[10].key), 0)}
			return ops, 0
		},
		"decoding error": func() ([]op, int) { return base3, 2000 },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			ops, failAt := mk()
			m := New(1 << 20)
			used := m.ApproximateSize()
			added, err := m.AddSorted(1, &opList{ops: ops, failAt: failAt})
			require.Equal(t, failAt > 0, err != nil, "error: %v", err)
			require.False(t, added)
			require.True(t, m.Empty())
			require.Equal(t, used, m.ApproximateSize())
			checkList(t, nil, m.points, g, 20)

			// One by one, as the engine then adds them.
			var b modelBuilder
			for i, o := range ops {
				if o.kind == base.KindRangeDelete {
					continue
				}
				e := entry{o.key, base.MakeTrailer(base.SeqNum(i+1), o.kind), o.value}
				b.insert(e)
				require.NoError(t, m.Add(base.SeqNum(i+1), o.kind, o.key, o.value))
			}
			checkList(t, b.sorted(), m.points, g, 100)
			checkStructure(t, m.points)
		})
	}

	t.Run("not after the last entry", func(t *testing.T) {
		m := New(1 << 20)
		require.NoError(t, m.Add(1, base.KindSet, base3[1500].key, nil))
		added, err := m.AddSorted(2, &opList{ops: base3})
		require.NoError(t, err)
		require.False(t, added)
		added, err = m.AddSorted(2, &opList{ops: base3[1500:]}) // its first key is the last entry's
		require.NoError(t, err)
		require.False(t, added)
		require.Equal(t, 1, m.Count())
	})

	t.Run("arena full", func(t *testing.T) {
		m := New(3000 * 30) // room for about half the run
		used := m.ApproximateSize()
		added, err := m.AddSorted(1, &opList{ops: base3})
		require.NoError(t, err)
		require.False(t, added)
		require.Equal(t, used, m.ApproximateSize())
		for i, o := range base3[:100] {
			require.NoError(t, m.Add(base.SeqNum(i+1), o.kind, o.key, o.value))
		}
		checkList(t, modelOf(base3[:100], 1), m.points, g, 50)
		checkStructure(t, m.points)
	})
}

// TestAddSortedAppends: runs that sort after the list's last entry are
// appended, whatever the list holds (an Add'ed entry, earlier runs, range
// tombstones in the other list), with the structure Add would build.
func TestAddSortedAppends(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	g := newKeyGen(rng)
	ops := sortedOps(rng, 20000)
	m := New(1 << 22)
	require.NoError(t, m.Add(1, base.KindRangeDelete, []byte("\x00"), []byte("\xff")))
	require.NoError(t, m.Add(2, base.KindSet, ops[0].key, []byte("v")))
	var b modelBuilder
	b.insert(entry{ops[0].key, base.MakeTrailer(2, base.KindSet), []byte("v")})
	seq := base.SeqNum(3)
	for i := 1; i < len(ops); {
		n := min(1+rng.Intn(3000), len(ops)-i)
		run := ops[i : i+n]
		added, err := m.AddSorted(seq, &opList{ops: run})
		require.NoError(t, err)
		require.True(t, added, "run of %d from op %d", n, i)
		for _, e := range modelOf(run, seq) {
			b.insert(e)
		}
		seq += base.SeqNum(n)
		i += n
		checkStructure(t, m.points)
	}
	checkList(t, b.sorted(), m.points, g, 500)
	require.Equal(t, len(ops)+1, m.Count())
}

// TestAddSortedPublishesAtOnce: readers racing AddSorted see the list
// without the run or with all of it, never part of it — into an empty list
// and after a first run.
func TestAddSortedPublishesAtOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n = 5000
	for round := 0; round < scale(20, 5); round++ {
		ops := sortedOps(rng, 2*n)
		m := New(2*n*80 + 1<<12)
		before := 0
		if round%2 == 1 {
			added, err := m.AddSorted(1, &opList{ops: ops[:n]})
			require.NoError(t, err)
			require.True(t, added)
			before = n
		}
		run := ops[before : before+n]
		var done atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for r := 0; r < 2; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var it Iterator
				for !done.Load() {
					m.InitPointIter(&it)
					count := 0
					for ok := it.First(); ok; ok = it.Next() {
						count++
					}
					if count != before && count != before+n {
						errs <- fmt.Errorf("a scan saw %d entries, want %d or %d", count, before, before+n)
						return
					}
					// A seek of the run's last key finds it once a later
					// scan saw the run.
					found := it.SeekGE(run[n-1].key, base.SeekTrailer(base.SeqNumMax))
					count2 := 0
					for ok := it.First(); ok; ok = it.Next() {
						count2++
					}
					if count == before+n && !found || found && count2 != before+n {
						errs <- fmt.Errorf("seek found=%t between scans of %d and %d entries", found, count, count2)
						return
					}
				}
			}()
		}
		added, err := m.AddSorted(base.SeqNum(before+1), &opList{ops: run})
		require.NoError(t, err)
		require.True(t, added)
		done.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// TestPrepareSortedIsInvisibleUntilPublished: a prepared run is in the
// arena but unreachable — Count, Get and iterators see the memtable as it
// was — until PublishSorted; a discarded run leaves the arena as it was,
// and the next run (published) reads as if the discarded one never was.
func TestPrepareSortedIsInvisibleUntilPublished(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	ops := sortedOps(rng, 3000)
	first, second := ops[:1000], ops[1000:]
	m := New(len(ops)*80 + 1<<16)
	added, err := m.AddSorted(1, &opList{ops: first})
	require.NoError(t, err)
	require.True(t, added)
	size := m.ApproximateSize()

	countIter := func() int {
		it := m.NewPointIter()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		return n
	}
	// Discarded: invisible, then gone.
	var run SortedRun
	prepared, err := m.PrepareSorted(1001, &opList{ops: second}, &run)
	require.NoError(t, err)
	require.True(t, prepared)
	require.Greater(t, m.ApproximateSize(), size)
	require.Equal(t, len(first), m.Count())
	require.Equal(t, len(first), countIter())
	_, _, found := m.Get(second[0].key, base.SeqNumMax)
	require.False(t, found, "a prepared run is visible")
	m.DiscardSorted(&run)
	require.Equal(t, size, m.ApproximateSize())
	require.Equal(t, len(first), countIter())

	// Prepared again from other values, published: the list holds it.
	again := slices.Clone(second)
	for i := range again {
		again[i].kind, again[i].value = base.KindSet, []byte{byte(i)}
	}
	prepared, err = m.PrepareSorted(5001, &opList{ops: again}, &run)
	require.NoError(t, err)
	require.True(t, prepared)
	require.Equal(t, len(first), countIter())
	m.PublishSorted(&run)
	require.Equal(t, len(ops), m.Count())
	checkList(t, append(modelOf(first, 1), modelOf(again, 5001)...), m.points, newKeyGen(rng), 100)
	checkStructure(t, m.points)

	// Refused runs keep nothing (one out of order, one that fails to decode).
	size = m.ApproximateSize()
	prepared, err = m.PrepareSorted(9001, &opList{ops: first}, &run)
	require.NoError(t, err)
	require.False(t, prepared)
	tail := sortedOps(rng, 4000)[3500:]
	prepared, err = m.PrepareSorted(9001, &opList{ops: tail, failAt: 10}, &run)
	require.Error(t, err)
	require.False(t, prepared)
	require.Equal(t, size, m.ApproximateSize())
	require.Equal(t, len(ops), countIter())
}

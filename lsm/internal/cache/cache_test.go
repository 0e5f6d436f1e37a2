package cache

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{Capacity: -1}, "Capacity"},
		{Options{Capacity: 1 << 20, NumShardBits: MaxNumShardBits + 1}, "NumShardBits"},
		{Options{Capacity: 1 << 20, HighPriorityPoolRatio: 1.5}, "HighPriorityPoolRatio"},
		{Options{Capacity: 1 << 20, HighPriorityPoolRatio: math.NaN()}, "HighPriorityPoolRatio"},
		{Options{Capacity: 1 << 20, FullAdmitOneIn: -1}, "FullAdmitOneIn"},
		{Options{Capacity: 1 << 20, FullAdmitOneIn: MaxFullAdmitOneIn + 1}, "FullAdmitOneIn"},
		{Options{Capacity: 1 << 20, FullAdmitOneIn: 1 << 32}, "FullAdmitOneIn"},
	} {
		_, err := New(tc.opts)
		require.Error(t, err, "%+v", tc.opts)
		require.Contains(t, err.Error(), tc.field)
	}

	// Zero fields mean their defaults; negative ones the settings whose
	// zero is real (one shard, no high-priority share).
	c := newTestCache(t, Options{Capacity: 64 << 20})
	require.Equal(t, 64, c.Metrics().NumShards)
	require.Equal(t, DefaultHighPriorityPoolRatio, c.opts.HighPriorityPoolRatio)
	c = newTestCache(t, Options{Capacity: 1 << 20, NumShardBits: OneShard, HighPriorityPoolRatio: -1})
	require.Equal(t, 1, c.Metrics().NumShards)
	require.Zero(t, c.opts.HighPriorityPoolRatio)
	c = newTestCache(t, Options{Capacity: 1 << 20, HighPriorityPoolRatio: 1})
	require.Equal(t, 2, c.Metrics().NumShards)

	require.Equal(t, 6, DefaultNumShardBits(205<<20))
	require.Equal(t, 6, DefaultNumShardBits(32<<20))
	require.Equal(t, 5, DefaultNumShardBits(32<<20-1))
	require.Equal(t, 1, DefaultNumShardBits(1<<20))
	require.Equal(t, 0, DefaultNumShardBits(0))
}

func TestKindAndPriorityStrings(t *testing.T) {
	require.Equal(t, "data", KindData.String())
	require.Equal(t, "index", KindIndex.String())
	require.Equal(t, "filter", KindFilter.String())
	require.Equal(t, "top-level", KindTopLevel.String())
	require.Equal(t, "kind(9)", Kind(9).String())
	require.Equal(t, "high", PriorityHigh.String())
	require.Equal(t, "low", PriorityLow.String())
}

func TestInvalidArguments(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20, NumShardBits: OneShard})
	_, err := c.insertBytes(1, 0, NumKinds, PriorityLow, []byte("x"))
	require.ErrorContains(t, err, "kind")
	_, err = c.insertBytes(1, 0, KindData, Priority(7), []byte("x"))
	require.ErrorContains(t, err, "priority")
	_, _, err = c.getOrLoadBytes(1, 0, KindData, PriorityLow, nil)
	require.ErrorContains(t, err, "load")
	_, _, err = c.getOrLoadBytes(1, 0, Kind(200), PriorityLow, func() ([]byte, error) { return nil, nil })
	require.ErrorContains(t, err, "kind")
	// Lookup has no error result: a bad kind is counted as data.
	_, ok := c.Lookup(1, 0, Kind(200))
	require.False(t, ok)
	require.Equal(t, int64(1), c.Metrics().Kinds[KindData].Misses)
	// Releasing the zero handle is harmless.
	Handle{}.Release()
	require.Nil(t, Handle{}.Value())
	require.False(t, Handle{}.Valid())
}

func TestLRUOrder(t *testing.T) {
	// Room for exactly four 100-byte values in one shard.
	c := newTestCache(t, Options{Capacity: 4 * charge(100), NumShardBits: OneShard})
	for off := uint64(0); off < 4; off++ {
		mustInsert(t, c, 1, off, KindData, PriorityLow, valueFor(1, off, 100))
	}
	_, low := shardOrder(&c.shards[0])
	require.Equal(t, []key{{1, 3}, {1, 2}, {1, 1}, {1, 0}}, low)

	// A hit makes (1,0) the most recently used; (1,1) is now the oldest.
	h, ok := c.Lookup(1, 0, KindData)
	require.True(t, ok)
	require.Equal(t, valueFor(1, 0, 100), h.Value())
	h.Release()
	mustInsert(t, c, 1, 4, KindData, PriorityLow, valueFor(1, 4, 100))
	_, low = shardOrder(&c.shards[0])
	require.Equal(t, []key{{1, 4}, {1, 0}, {1, 3}, {1, 2}}, low)

	// A bigger value (two allocation units, charged a little less than
	// two 100-byte values) evicts as many old entries as it needs: two.
	big := 2 * int(sizeFor(100))
	mustInsert(t, c, 1, 5, KindData, PriorityLow, valueFor(1, 5, big))
	_, low = shardOrder(&c.shards[0])
	require.Equal(t, []key{{1, 5}, {1, 4}, {1, 0}}, low)

	m := c.Metrics()
	require.Equal(t, int64(3), m.Entries)
	require.Equal(t, charge(big)+2*charge(100), m.Usage)
	require.Equal(t, int64(3), m.Kinds[KindData].Evictions)
	require.Equal(t, int64(6), m.Kinds[KindData].Inserts)
	require.Equal(t, int64(1), m.Kinds[KindData].Hits)
	require.Equal(t, int64(5*100+big), m.Kinds[KindData].BytesInserted)
	require.Equal(t, int64(0), m.EntryPinnedUsage)
	checkInvariants(t, c, true)
}

// TestHitInNewestQuarterDoesNotMove: a hit moves an entry to the front
// only if more than a quarter of the list was pushed in front of it since
// its own push; entries in the newest quarter stay where they are.
func TestHitInNewestQuarterDoesNotMove(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 100 * charge(100), NumShardBits: OneShard})
	for off := uint64(0); off < 8; off++ {
		mustInsert(t, c, 1, off, KindData, PriorityLow, valueFor(1, off, 100))
	}
	order := func() []key { _, low := shardOrder(&c.shards[0]); return low }
	before := order()
	require.Equal(t, key{1, 7}, before[0])

	// (1,6) had one push in front of it, fewer than 8/4: it stays.
	hit := func(c *Cache, id, offset uint64, kind Kind) bool {
		h, ok := c.Lookup(id, offset, kind)
		if ok {
			require.Equal(t, valueFor(id, offset, 100), h.Value())
		}
		h.Release()
		return ok
	}
	require.True(t, hit(c, 1, 6, KindData))
	require.Equal(t, before, order())
	// (1,5) had two, not fewer than 8/4: it moves to the front, as does
	// the oldest entry.
	require.True(t, hit(c, 1, 5, KindData))
	require.Equal(t, key{1, 5}, order()[0])
	require.True(t, hit(c, 1, 0, KindData))
	require.Equal(t, []key{{1, 0}, {1, 5}, {1, 7}, {1, 6}, {1, 4}, {1, 3}, {1, 2}, {1, 1}}, order())

	// A demoted high-priority entry is moved back into the pool by a hit,
	// however recent: the rule only keeps entries on the list they belong to.
	c2 := newTestCache(t, Options{Capacity: 8 * charge(100), NumShardBits: OneShard, HighPriorityPoolRatio: 0.25})
	for off := uint64(0); off < 3; off++ {
		mustInsert(t, c2, 1, off, KindIndex, PriorityHigh, valueFor(1, off, 100))
	}
	high, low := shardOrder(&c2.shards[0])
	require.Equal(t, []key{{1, 2}, {1, 1}}, high)
	require.Equal(t, []key{{1, 0}}, low)
	require.True(t, hit(c2, 1, 0, KindIndex))
	high, low = shardOrder(&c2.shards[0])
	require.Equal(t, []key{{1, 0}, {1, 2}}, high)
	require.Equal(t, []key{{1, 1}}, low)

	require.False(t, hit(c, 9, 9, KindData))
	m := c.Metrics()
	require.Equal(t, int64(3), m.Kinds[KindData].Hits)
	require.Equal(t, int64(1), m.Kinds[KindData].Misses)
	require.Equal(t, int64(0), m.EntryPinnedUsage)
	checkInvariants(t, c, true)
}

func TestCapacityPerShard(t *testing.T) {
	const shards = 8
	perShard := 10 * charge(50)
	c := newTestCache(t, Options{Capacity: shards * perShard, NumShardBits: 3})
	for off := uint64(0); off < 2000; off++ {
		mustInsert(t, c, 7, off*4096, KindData, PriorityLow, valueFor(7, off, 50))
	}
	m := c.Metrics()
	require.Equal(t, shards, m.NumShards)
	for i := range c.shards {
		s := &c.shards[i]
		require.Equal(t, perShard, s.capacity)
		require.Equal(t, perShard, s.usageLocked(), "shard %d should be exactly full", i)
	}
	require.Equal(t, int64(shards*10), m.Entries)
	checkInvariants(t, c, true)
}

func TestHighPriorityPoolProtectsIndexFromScan(t *testing.T) {
	// One shard of 20 entries; the pool may hold half of it.
	c := newTestCache(t, Options{Capacity: 20 * charge(100), NumShardBits: OneShard, HighPriorityPoolRatio: 0.5})
	const indexID, dataID = 1, 2
	for off := uint64(0); off < 8; off++ {
		mustInsert(t, c, indexID, off, KindIndex, PriorityHigh, valueFor(indexID, off, 100))
	}
	// A scan of many data blocks, each read once.
	for off := uint64(0); off < 1000; off++ {
		h, hit, err := c.getOrLoadBytes(dataID, off, KindData, PriorityLow, func() ([]byte, error) {
			return valueFor(dataID, off, 100), nil
		})
		require.NoError(t, err)
		require.False(t, hit)
		h.Release()
	}
	for off := uint64(0); off < 8; off++ {
		h, ok := c.Lookup(indexID, off, KindIndex)
		require.True(t, ok, "index partition %d flushed by the scan", off)
		require.Equal(t, valueFor(indexID, off, 100), h.Value())
		h.Release()
	}
	m := c.Metrics()
	require.Equal(t, int64(8), m.Kinds[KindIndex].Hits)
	require.Equal(t, int64(0), m.Kinds[KindIndex].Evictions)
	require.Equal(t, int64(1000-12), m.Kinds[KindData].Evictions)

	// Without the pool's protection (all low priority), the scan flushes them.
	c = newTestCache(t, Options{Capacity: 20 * charge(100), NumShardBits: OneShard})
	for off := uint64(0); off < 8; off++ {
		mustInsert(t, c, indexID, off, KindIndex, PriorityLow, valueFor(indexID, off, 100))
	}
	for off := uint64(0); off < 1000; off++ {
		mustInsert(t, c, dataID, off, KindData, PriorityLow, valueFor(dataID, off, 100))
	}
	for off := uint64(0); off < 8; off++ {
		require.False(t, cached(c, indexID, off))
	}
}

func TestHighPriorityPoolOverflowDemotes(t *testing.T) {
	// Pool of 4 entries within a shard of 10.
	c := newTestCache(t, Options{Capacity: 10 * charge(100), NumShardBits: OneShard, HighPriorityPoolRatio: 0.4})
	for off := uint64(0); off < 6; off++ {
		mustInsert(t, c, 1, off, KindFilter, PriorityHigh, valueFor(1, off, 100))
	}
	high, low := shardOrder(&c.shards[0])
	require.Equal(t, []key{{1, 5}, {1, 4}, {1, 3}, {1, 2}}, high)
	require.Equal(t, []key{{1, 1}, {1, 0}}, low, "the oldest pool entries are demoted")
	// A hit on a demoted high-priority entry brings it back into the pool.
	h, ok := c.Lookup(1, 0, KindFilter)
	require.True(t, ok)
	h.Release()
	high, low = shardOrder(&c.shards[0])
	require.Equal(t, []key{{1, 0}, {1, 5}, {1, 4}, {1, 3}}, high)
	require.Equal(t, []key{{1, 2}, {1, 1}}, low)
	// A high-priority value larger than the whole pool goes to the low list
	// instead of demoting the pool.
	mustInsert(t, c, 1, 99, KindFilter, PriorityHigh, valueFor(1, 99, 5*int(sizeFor(100))))
	high, low = shardOrder(&c.shards[0])
	require.Equal(t, []key{{1, 0}, {1, 5}, {1, 4}, {1, 3}}, high)
	require.Equal(t, []key{{1, 99}, {1, 2}}, low, "(1,1) was evicted to make room")
	checkInvariants(t, c, true)
}

func TestReferencedEntriesSurviveEviction(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 4 * charge(100), NumShardBits: OneShard})
	h0, err := c.insertBytes(1, 0, KindData, PriorityLow, valueFor(1, 0, 100))
	require.NoError(t, err)
	h1, ok := func() (Handle, bool) {
		mustInsert(t, c, 1, 1, KindData, PriorityLow, valueFor(1, 1, 100))
		return c.Lookup(1, 1, KindData)
	}()
	require.True(t, ok)
	require.Equal(t, 2*charge(100), c.Metrics().EntryPinnedUsage)

	for off := uint64(2); off < 50; off++ {
		mustInsert(t, c, 1, off, KindData, PriorityLow, valueFor(1, off, 100))
	}
	require.True(t, cached(c, 1, 0))
	require.True(t, cached(c, 1, 1))
	require.Equal(t, valueFor(1, 0, 100), h0.Value())
	require.Equal(t, valueFor(1, 1, 100), h1.Value())
	m := c.Metrics()
	require.Equal(t, 4*charge(100), m.Usage)
	require.Equal(t, 2*charge(100), m.EntryPinnedUsage)

	// A second handle on the same entry: one release does not unpin it.
	h0b, ok := c.Lookup(1, 0, KindData)
	require.True(t, ok)
	h0.Release()
	require.Equal(t, 2*charge(100), c.Metrics().EntryPinnedUsage)
	h0b.Release()
	h1.Release()
	require.Equal(t, int64(0), c.Metrics().EntryPinnedUsage)
	checkInvariants(t, c, true)

	// Released, they are evicted like any other entry.
	for off := uint64(100); off < 104; off++ {
		mustInsert(t, c, 1, off, KindData, PriorityLow, valueFor(1, off, 100))
	}
	require.False(t, cached(c, 1, 0))
	require.False(t, cached(c, 1, 1))
}

func TestPinnedEntriesMayOvershootCapacity(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 2 * charge(100), NumShardBits: OneShard})
	var hs []Handle
	for off := uint64(0); off < 3; off++ {
		h, err := c.insertBytes(1, off, KindData, PriorityLow, valueFor(1, off, 100))
		require.NoError(t, err)
		hs = append(hs, h)
	}
	m := c.Metrics()
	require.Equal(t, 3*charge(100), m.Usage, "without the strict limit, pinned entries overshoot")
	require.Equal(t, int64(3), m.Entries)
	for _, h := range hs {
		h.Release()
	}
	// The next insert brings the shard back within capacity.
	mustInsert(t, c, 1, 10, KindData, PriorityLow, valueFor(1, 10, 100))
	require.Equal(t, 2*charge(100), c.Metrics().Usage)
	checkInvariants(t, c, true)
}

func TestStrictCapacityLimit(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 3 * charge(100), NumShardBits: OneShard, StrictCapacityLimit: true})
	var hs []Handle
	for off := uint64(0); off < 2; off++ {
		h, err := c.insertBytes(1, off, KindIndex, PriorityLow, valueFor(1, off, 100))
		require.NoError(t, err)
		hs = append(hs, h)
	}
	mustInsert(t, c, 1, 2, KindData, PriorityLow, valueFor(1, 2, 100)) // unreferenced

	// Fits once (1,2) is evicted.
	mustInsert(t, c, 1, 3, KindData, PriorityLow, valueFor(1, 3, 100))
	require.False(t, cached(c, 1, 2))

	// Needs two slots; only one can be freed: refused, and nothing evicted.
	h, err := c.insertBytes(1, 4, KindData, PriorityLow, valueFor(1, 4, 100+int(charge(100))))
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrFull))
	require.Contains(t, err.Error(), "capacity")
	require.Contains(t, err.Error(), "usage")
	require.False(t, h.Valid())
	require.True(t, cached(c, 1, 3), "a refused insert must not evict")

	// GetOrLoad of the same value still returns it, detached.
	want := valueFor(1, 4, 100+int(charge(100)))
	h, hit, err := c.getOrLoadBytes(1, 4, KindData, PriorityLow, func() ([]byte, error) { return want, nil })
	require.NoError(t, err)
	require.False(t, hit)
	require.Equal(t, want, h.Value())
	h.Release()
	require.False(t, cached(c, 1, 4))
	require.True(t, cached(c, 1, 3))

	m := c.Metrics()
	require.Equal(t, int64(2), m.StrictRejects)
	require.Equal(t, int64(0), m.OversizedRejects)
	require.LessOrEqual(t, m.Usage, m.Capacity)

	for _, h := range hs {
		h.Release()
	}
	// With the pins gone, it fits.
	mustInsert(t, c, 1, 4, KindData, PriorityLow, want)
	checkInvariants(t, c, true)
}

func TestOversizedValueIsNotInsertedAndEvictsNothing(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			const shardBits = 2
			capacity := int64(4) * 16 * charge(1000) // 16 blocks per shard
			c := newTestCache(t, Options{Capacity: capacity, NumShardBits: shardBits, StrictCapacityLimit: strict})
			// Fill every shard.
			for off := uint64(0); off < 400; off++ {
				mustInsert(t, c, 1, off, KindData, PriorityLow, valueFor(1, off, 1000))
			}
			before := cachedKeys(c)
			mBefore := c.Metrics()
			require.Equal(t, int64(4*16), mBefore.Entries)

			// One byte more than fits a shard: refused, in every shard.
			big := make([]byte, largestFitting(capacity/4)+1)
			for off := uint64(0); off < 16; off++ {
				h, err := c.insertBytes(2, off, KindFilter, PriorityHigh, big)
				require.NoError(t, err)
				require.True(t, h.Valid())
				require.Len(t, h.Value(), len(big))
				h.Release()

				h, hit, err := c.getOrLoadBytes(3, off, KindFilter, PriorityHigh, func() ([]byte, error) { return big, nil })
				require.NoError(t, err)
				require.False(t, hit)
				require.Len(t, h.Value(), len(big))
				h.Release()
			}
			require.Equal(t, before, cachedKeys(c), "an oversized value evicted something")
			m := c.Metrics()
			require.Equal(t, int64(32), m.OversizedRejects)
			require.Equal(t, int64(0), m.StrictRejects)
			require.Equal(t, mBefore.Usage, m.Usage)
			require.Equal(t, mBefore.Kinds[KindData].Evictions, m.Kinds[KindData].Evictions)
			require.Equal(t, int64(0), m.Kinds[KindFilter].Inserts)
			require.Equal(t, int64(16), m.Kinds[KindFilter].Misses)

			// Exactly a shard's capacity is not oversized: it is cached.
			mustInsert(t, c, 4, 0, KindFilter, PriorityLow, big[:len(big)-1])
			require.True(t, cached(c, 4, 0))
			checkInvariants(t, c, true)
		})
	}
}

// TestOversizedFilterEvictsNothing replays the benchmark's cache
// (docs/benchmarks.md): 205 MiB in 64 shards
// (3.2 MiB each) full of 64 KiB data blocks (the entry location index's
// block size), and every Get reading an 8.7 MiB
// full filter through the cache. Before, each read evicted the whole shard;
// here no read evicts anything and the cache stays full.
func TestOversizedFilterEvictsNothing(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 205 << 20})
	require.Equal(t, 64, c.Metrics().NumShards)
	block := make([]byte, 64<<10) // shared: the test checks placement, not bytes
	id := c.NewID()
	var n uint64
	for c.Metrics().Usage < 190<<20 {
		for i := 0; i < 100; i++ {
			mustInsert(t, c, id, n*uint64(len(block)), KindData, PriorityLow, block)
			n++
		}
	}
	before := c.Metrics()
	beforeKeys := cachedKeys(c)

	filter := make([]byte, 8_700_000)
	filterID := c.NewID()
	loads := 0
	for i := 0; i < 100; i++ {
		h, hit, err := c.getOrLoadBytes(filterID, 0, KindFilter, PriorityHigh, func() ([]byte, error) {
			loads++
			return filter, nil
		})
		require.NoError(t, err)
		require.False(t, hit)
		require.Len(t, h.Value(), len(filter))
		h.Release()
	}
	after := c.Metrics()
	require.Equal(t, 100, loads, "the cache alone cannot keep it: the table reader pins it")
	require.Equal(t, int64(100), after.OversizedRejects)
	require.Equal(t, before.Entries, after.Entries)
	require.Equal(t, before.Usage, after.Usage)
	require.Equal(t, before.Kinds[KindData].Evictions, after.Kinds[KindData].Evictions)

	require.Equal(t, beforeKeys, cachedKeys(c), "the filter reads evicted data blocks")

	// The reader's side of the policy: pin the filter and charge it.
	c.AddPinned(int64(len(filter)))
	require.Equal(t, int64(len(filter)), c.Metrics().PinnedUsage)
	// Lookups of the cached data blocks keep hitting.
	for k := range beforeKeys {
		h, ok := c.Lookup(k.id, k.offset, KindData)
		require.True(t, ok)
		h.Release()
	}
}

func TestAddPinnedShrinksEffectiveCapacity(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 10 * charge(100), NumShardBits: OneShard})
	for off := uint64(0); off < 10; off++ {
		mustInsert(t, c, 1, off, KindData, PriorityLow, valueFor(1, off, 100))
	}
	require.Equal(t, int64(10), c.Metrics().Entries)

	c.AddPinned(4 * charge(100))
	m := c.Metrics()
	require.Equal(t, 4*charge(100), m.PinnedUsage)
	require.Equal(t, int64(10), m.Entries, "AddPinned applies lazily, on the next insert")

	mustInsert(t, c, 1, 10, KindData, PriorityLow, valueFor(1, 10, 100))
	m = c.Metrics()
	require.Equal(t, int64(6), m.Entries)
	require.Equal(t, 6*charge(100), m.Usage)
	for off := uint64(0); off < 5; off++ {
		require.False(t, cached(c, 1, off))
	}

	// A value that fitted before is now oversized.
	h, err := c.insertBytes(2, 0, KindData, PriorityLow, valueFor(2, 0, int(7*charge(100))-EntryOverhead))
	require.NoError(t, err)
	h.Release()
	require.False(t, cached(c, 2, 0))
	require.Equal(t, int64(1), c.Metrics().OversizedRejects)
	require.Equal(t, int64(6), c.Metrics().Entries)

	// Pinning more than the capacity leaves nothing; un-pinning restores it.
	c.AddPinned(100 * charge(100))
	h, err = c.insertBytes(2, 1, KindData, PriorityLow, valueFor(2, 1, 100))
	require.NoError(t, err)
	require.Equal(t, valueFor(2, 1, 100), h.Value())
	h.Release()
	require.False(t, cached(c, 2, 1))
	c.AddPinned(-104 * charge(100))
	require.Equal(t, int64(0), c.Metrics().PinnedUsage)
	mustInsert(t, c, 2, 2, KindData, PriorityLow, valueFor(2, 2, int(7*charge(100))-EntryOverhead))
	require.True(t, cached(c, 2, 2))
	checkInvariants(t, c, true)

	// A negative total (a caller bug) counts as zero, not as extra room.
	c.AddPinned(-5 * charge(100))
	require.Equal(t, -5*charge(100), c.Metrics().PinnedUsage)
	h, err = c.insertBytes(2, 3, KindData, PriorityLow, valueFor(2, 3, int(10*charge(100))-EntryOverhead+1))
	require.NoError(t, err)
	h.Release()
	require.False(t, cached(c, 2, 3), "oversized for the configured capacity")
	c.AddPinned(5 * charge(100))
}

func TestEvictFile(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 4 << 20, NumShardBits: 2}) // room for all 200 (4 KiB each with invariants)
	a, b := c.NewID(), c.NewID()
	require.NotEqual(t, a, b)
	for off := uint64(0); off < 100; off++ {
		mustInsert(t, c, a, off*4096, KindData, PriorityLow, valueFor(a, off, 10))
		mustInsert(t, c, b, off*4096, KindIndex, PriorityHigh, valueFor(b, off, 10))
	}
	held, ok := c.Lookup(a, 0, KindData)
	require.True(t, ok)

	c.EvictFile(a)
	for off := uint64(0); off < 100; off++ {
		require.False(t, cached(c, a, off*4096))
		require.True(t, cached(c, b, off*4096))
	}
	m := c.Metrics()
	require.Equal(t, int64(100), m.Entries)
	require.Equal(t, int64(0), m.EntryPinnedUsage, "a removed entry no longer counts as pinned")
	require.Equal(t, int64(0), m.Kinds[KindData].Evictions)
	require.Equal(t, valueFor(a, 0, 10), held.Value(), "handles outlive EvictFile")
	held.Release()
	c.EvictFile(a) // idempotent
	c.EvictFile(b)
	require.Equal(t, int64(0), c.Metrics().Entries)
	require.Equal(t, int64(0), c.Metrics().Usage)
	for i := range c.shards {
		require.Empty(t, c.shards[i].files)
	}
	checkInvariants(t, c, true)
}

func TestInsertReplacesKeepingOldHandles(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20, NumShardBits: OneShard})
	old, err := c.insertBytes(1, 0, KindData, PriorityLow, []byte("old"))
	require.NoError(t, err)
	mustInsert(t, c, 1, 0, KindData, PriorityHigh, []byte("newer"))
	require.Equal(t, []byte("old"), old.Value())
	h, ok := c.Lookup(1, 0, KindData)
	require.True(t, ok)
	require.Equal(t, []byte("newer"), h.Value())
	h.Release()
	m := c.Metrics()
	require.Equal(t, int64(1), m.Entries)
	require.Equal(t, charge(5), m.Usage)
	require.Equal(t, int64(0), m.EntryPinnedUsage, "the replaced entry is no longer cached")
	old.Release()
	checkInvariants(t, c, true)
}

func TestCapacityZeroDisablesCaching(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 0})
	h, err := c.insertBytes(1, 0, KindData, PriorityLow, []byte("abc"))
	require.NoError(t, err)
	require.Equal(t, []byte("abc"), h.Value())
	h.Release()
	_, ok := c.Lookup(1, 0, KindData)
	require.False(t, ok)
	loads := 0
	for i := 0; i < 3; i++ {
		h, hit, err := c.getOrLoadBytes(1, 0, KindData, PriorityLow, func() ([]byte, error) {
			loads++
			return []byte("abc"), nil
		})
		require.NoError(t, err)
		require.False(t, hit)
		require.Equal(t, []byte("abc"), h.Value())
		h.Release()
	}
	require.Equal(t, 3, loads)
	c.EvictFile(1)
	c.AddPinned(10)
	m := c.Metrics()
	require.Equal(t, int64(0), m.Entries)
	require.Equal(t, int64(0), m.Usage)
	require.Equal(t, int64(0), m.OversizedRejects, "a disabled cache does not count rejects")
	require.Equal(t, int64(4), m.Kinds[KindData].Misses)
	require.Equal(t, int64(0), m.Kinds[KindData].Inserts)
}

func TestLookupHitAllocatesNothing(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 64 << 20})
	for off := uint64(0); off < 100; off++ {
		mustInsert(t, c, 1, off, KindIndex, PriorityHigh, valueFor(1, off, 100))
	}
	off := uint64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		h, ok := c.Lookup(1, off%100, KindIndex)
		if !ok {
			panic("miss")
		}
		h.Release()
		off++
	})
	require.Zero(t, allocs)
	// GetOrLoad's hit path too.
	load := func() ([]byte, error) { return nil, errors.New("unexpected load") }
	allocs = testing.AllocsPerRun(1000, func() {
		h, hit, err := c.getOrLoadBytes(1, off%100, KindIndex, PriorityHigh, load)
		if err != nil || !hit {
			panic("miss")
		}
		h.Release()
		off++
	})
	require.Zero(t, allocs)
}

func TestNewIDUnique(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20})
	seen := make(map[uint64]bool)
	for i := 0; i < 1000; i++ {
		id := c.NewID()
		require.NotZero(t, id)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestShardHashSpreadsOffsets(t *testing.T) {
	// Offsets of 4 KiB blocks of a few files must spread over the 64 shards
	// like uniform random choices, not pile into the shards their low bits
	// would pick. Chi-square with 63 degrees of freedom: mean 63, and
	// above 120 with probability about 1e-5.
	c := newTestCache(t, Options{Capacity: 1 << 30, NumShardBits: 6})
	counts := make(map[*shard]float64)
	const files, blocks = 4, 16384
	for id := uint64(1); id <= files; id++ {
		for off := uint64(0); off < blocks; off++ {
			counts[c.shardFor(key{id: id, offset: off * 4096})]++
		}
	}
	require.Len(t, counts, 64)
	expected := float64(files*blocks) / 64
	chiSquare := 0.0
	for _, n := range counts {
		chiSquare += (n - expected) * (n - expected) / expected
	}
	require.Less(t, chiSquare, 120.0)
}

func TestEntryOverheadCoversEntry(t *testing.T) {
	// EntryOverhead's documentation counts a 104-byte entry plus up to
	// about 56 bytes of map slot; keep it honest if entry grows.
	require.LessOrEqual(t, unsafe.Sizeof(entry{}), uintptr(104))
	require.GreaterOrEqual(t, EntryOverhead, 104+56)
}

func TestShardSizeMatchesMaxNumShardBitsComment(t *testing.T) {
	// MaxNumShardBits' comment assumes shards of about 500 bytes.
	require.LessOrEqual(t, unsafe.Sizeof(shard{}), uintptr(600))
}

// TestEvictedBlockFreedOnLastRelease: an evicted block stays valid while a
// handle holds it, its memory counts as allocated until the last release,
// and goes back to the allocator then; an unreferenced block is freed as
// it is evicted.
func TestEvictedBlockFreedOnLastRelease(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 4 * charge(3000), NumShardBits: OneShard})
	held, err := c.insertBytes(1, 0, KindData, PriorityLow, valueFor(1, 0, 3000))
	require.NoError(t, err)
	held2, ok := c.Lookup(1, 0, KindData)
	require.True(t, ok)
	c.EvictFile(1)
	for off := uint64(1); off <= 8; off++ { // evicts the unreferenced ones as it goes
		mustInsert(t, c, 2, off, KindData, PriorityLow, valueFor(2, off, 3000))
	}
	m := c.Metrics()
	require.Equal(t, int64(4), m.Entries)
	require.Equal(t, 5*sizeFor(3000), m.AllocatedBytes, "four cached blocks and the evicted one still held")
	require.Equal(t, valueFor(1, 0, 3000), held.Value())
	held.Release()
	require.Equal(t, 5*sizeFor(3000), c.Metrics().AllocatedBytes, "one handle is left")
	require.Equal(t, valueFor(1, 0, 3000), held2.Value())
	held2.Release()
	require.Equal(t, 4*sizeFor(3000), c.Metrics().AllocatedBytes, "freed by the last release")
	require.NoError(t, c.Close())
	m = c.Metrics()
	require.Zero(t, m.AllocatedBytes)
	require.Zero(t, m.MappedBytes)
}

// TestCloseReportsUnreleasedHandles: Close frees every cached block; one
// still referenced stays valid, is reported, and is freed by its release.
func TestCloseReportsUnreleasedHandles(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20})
	for off := uint64(0); off < 10; off++ {
		mustInsert(t, c, 1, off, KindData, PriorityLow, valueFor(1, off, 2000))
	}
	h, ok := c.Lookup(1, 3, KindData)
	require.True(t, ok)
	err := c.Close()
	require.ErrorContains(t, err, "1 buffers")
	require.Equal(t, valueFor(1, 3, 2000), h.Value())
	require.Equal(t, sizeFor(2000), c.Metrics().AllocatedBytes)
	h.Release()
	m := c.Metrics()
	require.Zero(t, m.AllocatedBytes)
	require.Zero(t, m.MappedBytes)
}

// TestInsertRacingCloseIsNotKept: a block inserted once Close has begun
// emptying the shards (a read racing its DB's Close) is handed back
// detached — not cached, freed by its release — so Close's wait for racing
// reads ends instead of reporting it as leaked.
func TestInsertRacingCloseIsNotKept(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20})
	c.closed.Store(true) // as Close does before it empties the shards
	h, err := c.insertBytes(1, 0, KindData, PriorityLow, valueFor(1, 0, 2000))
	require.NoError(t, err)
	require.Equal(t, valueFor(1, 0, 2000), h.Value())
	require.False(t, cached(c, 1, 0))
	h.Release()
	require.Zero(t, c.Metrics().AllocatedBytes)
	require.NoError(t, c.Close())
}

package cache

import (
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var longTests = flag.Bool("long", false, "run the randomized and concurrency tests much longer")

var modelSeed = flag.Int64("seed", 1, "seed of the randomized model test")

// modelEntry is an entry of shardModel.
type modelEntry struct {
	k      key
	value  []byte
	charge int64
	kind   Kind
	pri    Priority
	inHigh bool
	refs   int    // outside references
	stamp  uint64 // its list's push count when last pushed
}

// shardModel is a deliberately simple, slice-based model of one shard with
// the documented policies: two LRU lists, a high-priority pool with
// demotion, eviction from the low list then the pool skipping referenced
// entries, lazily applied pinned capacity, oversized and strict refusals.
type shardModel struct {
	total, pinned          int64 // Options.Capacity and the AddPinned sum
	ratio                  float64
	strict                 bool
	capacity, highCapacity int64         // as last applied
	high, low              []*modelEntry // most recently used first
	highPushes, lowPushes  uint64        // entries pushed to each list's front so far
	metrics                Metrics
}

func (m *shardModel) bytes(l []*modelEntry) int64 {
	var n int64
	for _, e := range l {
		n += e.charge
	}
	return n
}

func (m *shardModel) usage() int64 { return m.bytes(m.high) + m.bytes(m.low) }

func (m *shardModel) find(k key) *modelEntry {
	for _, e := range append(slices.Clone(m.high), m.low...) {
		if e.k == k {
			return e
		}
	}
	return nil
}

func (m *shardModel) unlink(e *modelEntry) {
	if e.inHigh {
		m.high = slices.DeleteFunc(m.high, func(x *modelEntry) bool { return x == e })
	} else {
		m.low = slices.DeleteFunc(m.low, func(x *modelEntry) bool { return x == e })
	}
}

func (m *shardModel) push(e *modelEntry) {
	e.inHigh = e.pri == PriorityHigh && e.charge <= m.highCapacity
	if !e.inHigh {
		m.pushLow(e)
		return
	}
	m.highPushes++
	e.stamp = m.highPushes
	m.high = append([]*modelEntry{e}, m.high...)
	m.demote()
}

func (m *shardModel) pushLow(e *modelEntry) {
	m.lowPushes++
	e.stamp = m.lowPushes
	m.low = append([]*modelEntry{e}, m.low...)
}

func (m *shardModel) demote() {
	for m.bytes(m.high) > m.highCapacity && len(m.high) > 0 {
		e := m.high[len(m.high)-1]
		m.high = m.high[:len(m.high)-1]
		e.inHigh = false
		m.pushLow(e)
	}
}

func (m *shardModel) applyCapacity() {
	c := max(m.total-m.pinned, 0)
	if c != m.capacity {
		m.capacity = c
		m.highCapacity = int64(float64(c) * m.ratio)
		m.demote()
	}
}

func (m *shardModel) pinnedCharge() int64 {
	var n int64
	for _, e := range append(slices.Clone(m.high), m.low...) {
		if e.refs > 0 {
			n += e.charge
		}
	}
	return n
}

// insert returns the entry (cached or detached) and the outcome.
func (m *shardModel) insert(k key, kind Kind, pri Priority, value []byte) (*modelEntry, insertOutcome) {
	if m.total == 0 {
		if old := m.find(k); old != nil {
			m.unlink(old)
		}
		return nil, outcomeOversized
	}
	m.applyCapacity()
	if old := m.find(k); old != nil {
		m.unlink(old)
	}
	e := &modelEntry{k: k, value: value, charge: charge(len(value)), kind: kind, pri: pri, refs: 1}
	if e.charge > m.capacity {
		m.metrics.OversizedRejects++
		return nil, outcomeOversized
	}
	if m.strict && m.pinnedCharge()+e.charge > m.capacity {
		m.metrics.StrictRejects++
		return nil, outcomeStrictReject
	}
	for _, inHigh := range []bool{false, true} {
		l := m.low
		if inHigh {
			l = m.high
		}
		for i := len(l) - 1; i >= 0 && m.usage()+e.charge > m.capacity; i-- {
			if l[i].refs == 0 {
				m.metrics.Kinds[l[i].kind].Evictions++
				m.unlink(l[i])
			}
		}
	}
	m.push(e)
	m.metrics.Kinds[kind].Inserts++
	m.metrics.Kinds[kind].BytesInserted += int64(len(value))
	return e, outcomeCached
}

func (m *shardModel) lookup(k key, kind Kind) *modelEntry {
	e := m.find(k)
	if e == nil {
		m.metrics.Kinds[kind].Misses++
		return nil
	}
	m.metrics.Kinds[kind].Hits++
	e.refs++
	// A hit leaves an entry that is on its priority's list and among the
	// newest quarter of it (fewer than len/4 pushes since its own) where
	// it is; any other hit moves it to the front.
	if e.inHigh == (e.pri == PriorityHigh) {
		pushes, n := m.lowPushes, len(m.low)
		if e.inHigh {
			pushes, n = m.highPushes, len(m.high)
		}
		if pushes-e.stamp < uint64(n/4) {
			return e
		}
	}
	m.unlink(e)
	m.push(e)
	return e
}

func (m *shardModel) evictFile(id uint64) {
	for _, e := range append(slices.Clone(m.high), m.low...) {
		if e.k.id == id {
			m.unlink(e)
		}
	}
}

func keysOf(l []*modelEntry) []key {
	var keys []key
	for _, e := range l {
		keys = append(keys, e.k)
	}
	return keys
}

// heldHandle is a handle the randomized test has not released yet.
type heldHandle struct {
	h    Handle
	me   *modelEntry // nil for a detached value
	want []byte
}

// TestRandomizedAgainstModel drives a one-shard cache and shardModel with
// the same random operations and compares LRU order, usage, pinned bytes
// and counters after every one.
func TestRandomizedAgainstModel(t *testing.T) {
	runs, ops := 20, 3000
	if *longTests {
		runs, ops = 100, 50000
	}
	for run := 0; run < runs; run++ {
		seed := *modelSeed + int64(run)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runModel(t, rand.New(rand.NewSource(seed)), ops)
		})
	}
}

func runModel(t *testing.T, rng *rand.Rand, ops int) {
	opts := Options{
		Capacity:              []int64{0, 8000, 20000, 50000}[rng.Intn(4)],
		NumShardBits:          OneShard,
		HighPriorityPoolRatio: []float64{0.1, 0.5, 1}[rng.Intn(3)],
		StrictCapacityLimit:   rng.Intn(2) == 0,
	}
	c := newTestCache(t, opts)
	m := &shardModel{total: opts.Capacity, ratio: opts.HighPriorityPoolRatio, strict: opts.StrictCapacityLimit}
	m.applyCapacity()
	var held []heldHandle
	version := 0
	newValue := func(k key) []byte {
		version++
		v := valueFor(k.id, k.offset, rng.Intn(5000))
		if len(v) > 0 {
			v[0] = byte(version)
		}
		return v
	}
	hold := func(h Handle, me *modelEntry, want []byte) {
		require.Equal(t, want, h.Value())
		if rng.Intn(3) == 0 {
			held = append(held, heldHandle{h, me, want})
			return
		}
		h.Release()
		if me != nil {
			me.refs--
		}
	}

	for op := 0; op < ops; op++ {
		k := key{id: uint64(1 + rng.Intn(3)), offset: uint64(rng.Intn(12))}
		kind := Kind(rng.Intn(int(NumKinds)))
		pri := Priority(rng.Intn(2))
		var desc string
		switch r := rng.Intn(100); {
		case r < 30:
			desc = fmt.Sprintf("Insert(%v, %v, %v)", k, kind, pri)
			v := newValue(k)
			h, err := c.insertBytes(k.id, k.offset, kind, pri, v)
			me, outcome := m.insert(k, kind, pri, v)
			if outcome == outcomeStrictReject {
				require.True(t, errors.Is(err, ErrFull), "%s: %v", desc, err)
				require.False(t, h.Valid())
				break
			}
			require.NoError(t, err, desc)
			hold(h, me, v)
		case r < 40:
			desc = fmt.Sprintf("Lookup+Release(%v)", k)
			h, ok := c.Lookup(k.id, k.offset, kind)
			me := m.lookup(k, kind)
			require.Equal(t, me != nil, ok, desc)
			if ok {
				require.Equal(t, me.value, h.Value(), desc)
				h.Release()
				me.refs--
			}
		case r < 55:
			desc = fmt.Sprintf("Lookup(%v)", k)
			h, ok := c.Lookup(k.id, k.offset, kind)
			me := m.lookup(k, kind)
			require.Equal(t, me != nil, ok, desc)
			if ok {
				hold(h, me, me.value)
			}
		case r < 75:
			desc = fmt.Sprintf("GetOrLoad(%v, %v, %v)", k, kind, pri)
			v := newValue(k)
			loaded := false
			h, hit, err := c.getOrLoadBytes(k.id, k.offset, kind, pri, func() ([]byte, error) {
				loaded = true
				return v, nil
			})
			require.NoError(t, err, desc)
			me := m.lookup(k, kind)
			require.Equal(t, me != nil, hit, desc)
			require.Equal(t, !hit, loaded, desc)
			if hit {
				hold(h, me, me.value)
				break
			}
			me, _ = m.insert(k, kind, pri, v) // strict rejects come back detached
			hold(h, me, v)
		case r < 90:
			if len(held) == 0 {
				continue
			}
			i := rng.Intn(len(held))
			desc = fmt.Sprintf("Release(%v)", held[i].h.e.key)
			require.Equal(t, held[i].want, held[i].h.Value(), "%s: value changed while held", desc)
			held[i].h.Release()
			if held[i].me != nil {
				held[i].me.refs--
			}
			held = slices.Delete(held, i, i+1)
		case r < 95:
			desc = fmt.Sprintf("EvictFile(%d)", k.id)
			c.EvictFile(k.id)
			m.evictFile(k.id)
		default:
			delta := rng.Int63n(15000) - 7000
			if m.pinned+delta < 0 {
				delta = -m.pinned
			}
			desc = fmt.Sprintf("AddPinned(%d)", delta)
			c.AddPinned(delta)
			m.pinned += delta
		}

		high, low := shardOrder(&c.shards[0])
		if !slices.Equal(keysOf(m.high), high) || !slices.Equal(keysOf(m.low), low) {
			require.Equal(t, keysOf(m.high), high, "after op %d %s: pool order", op, desc)
			require.Equal(t, keysOf(m.low), low, "after op %d %s: low-priority order", op, desc)
		}
		got := c.Metrics()
		want := m.metrics
		want.Capacity, want.NumShards, want.PinnedUsage = opts.Capacity, 1, m.pinned
		want.Usage = m.usage()
		want.Entries = int64(len(m.high) + len(m.low))
		want.EntryPinnedUsage = m.pinnedCharge()
		want.AllocatedBytes = m.allocated(held)
		want.MappedBytes = got.MappedBytes
		require.GreaterOrEqual(t, got.MappedBytes, got.AllocatedBytes)
		if got != want {
			require.Equal(t, want, got, "after op %d %s: metrics", op, desc)
		}
		checkInvariants(t, c, true)
	}
	for _, hh := range held {
		require.Equal(t, hh.want, hh.h.Value())
		hh.h.Release()
	}
	require.Zero(t, c.Metrics().EntryPinnedUsage)
	require.Equal(t, m.allocated(nil), c.Metrics().AllocatedBytes, "released blocks that left the cache are freed")
	require.NoError(t, c.Close())
	require.Zero(t, c.Metrics().MappedBytes)
}

// allocated is the memory the cache's blocks should hold: every cached
// entry, and every entry no longer cached (detached, evicted, replaced)
// that a held handle still references, once each.
func (m *shardModel) allocated(held []heldHandle) int64 {
	var n int64
	cached := map[*modelEntry]bool{}
	for _, e := range append(slices.Clone(m.high), m.low...) {
		cached[e] = true
		n += sizeFor(len(e.value))
	}
	counted := map[*entry]bool{}
	for _, hh := range held {
		if hh.me != nil && cached[hh.me] || counted[hh.h.e] {
			continue
		}
		counted[hh.h.e] = true
		n += sizeFor(len(hh.want))
	}
	return n
}

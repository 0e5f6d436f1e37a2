package cache

import (
	"fmt"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/manual"

	"github.com/stretchr/testify/require"
)

// listKeys returns the keys of l from most to least recently used.
func listKeys(l *list) []key {
	var keys []key
	for e := l.root.next; e != &l.root; e = e.next {
		keys = append(keys, e.key)
	}
	return keys
}

// shardOrder returns the keys of s's pool and low-priority list, most
// recently used first.
func shardOrder(s *shard) (high, low []key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return listKeys(&s.high), listKeys(&s.low)
}

// cachedKeys returns the set of keys cached in c.
func cachedKeys(c *Cache) map[key]bool {
	keys := make(map[key]bool)
	for i := range c.shards {
		high, low := shardOrder(&c.shards[i])
		for _, k := range append(high, low...) {
			keys[k] = true
		}
	}
	return keys
}

// checkInvariants verifies the internal consistency of every shard: lists,
// map, file lists, byte counts, pool bound and (when quiescent is true, i.e.
// no Release runs concurrently) the pinned-bytes counter. It uses plain
// comparisons rather than require in its loops: the randomized test calls
// it after every operation.
func checkInvariants(t testing.TB, c *Cache, quiescent bool) {
	t.Helper()
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		err := shardInvariantError(s, quiescent)
		s.mu.Unlock()
		if err != "" {
			t.Fatalf("shard %d: %s", i, err)
		}
	}
}

// shardInvariantError returns a description of the first broken invariant
// of s, or "".
func shardInvariantError(s *shard, quiescent bool) string {
	onList := make(map[*entry]bool, len(s.entries))
	var pinned int64
	for _, l := range []*list{&s.high, &s.low} {
		var bytes int64
		for e := l.root.next; e != &l.root; e = e.next {
			switch {
			case e.next.prev != e:
				return "broken list links"
			case e.inHighPool != (l == &s.high):
				return "wrong inHighPool flag"
			case onList[e]:
				return "entry on a list twice"
			case e.shard != s:
				return "entry names another shard"
			case e.charge() != charge(len(e.value())):
				return "wrong charge"
			case e.state.Load()&stateCached == 0:
				return "listed entry without the cached bit"
			case s.entries[e.key] != e:
				return "listed entry not in the map"
			case l == &s.high && e.pri != PriorityHigh:
				return "low-priority entry in the pool"
			}
			onList[e] = true
			bytes += e.charge()
			if e.state.Load() >= stateCached+stateRef {
				pinned += e.charge()
			}
		}
		if bytes != l.bytes {
			return fmt.Sprintf("list byte count %d, entries sum to %d", l.bytes, bytes)
		}
	}
	if len(s.entries) != len(onList) {
		return fmt.Sprintf("map has %d entries, lists %d", len(s.entries), len(onList))
	}
	if s.high.bytes > s.highCapacity {
		return fmt.Sprintf("pool holds %d bytes, capacity %d", s.high.bytes, s.highCapacity)
	}
	inFiles := 0
	for id, head := range s.files {
		if head == nil || head.filePrev != nil {
			return "bad file list head"
		}
		for e := head; e != nil; e = e.fileNext {
			switch {
			case e.key.id != id:
				return "entry on another file's list"
			case !onList[e]:
				return "file list holds an uncached entry"
			case e.fileNext != nil && e.fileNext.filePrev != e:
				return "broken file list links"
			}
			inFiles++
		}
	}
	if inFiles != len(s.entries) {
		return fmt.Sprintf("file lists hold %d entries, map %d", inFiles, len(s.entries))
	}
	if quiescent && s.trackPinned && pinned != s.entryPinned.Load() {
		return fmt.Sprintf("entryPinned %d, referenced entries sum to %d", s.entryPinned.Load(), pinned)
	}
	return ""
}

// newTestCache returns a cache with one shard (exact LRU order) of the
// given capacity.
func newTestCache(t testing.TB, opts Options) *Cache {
	t.Helper()
	c, err := New(opts)
	require.NoError(t, err)
	return c
}

// sizeFor is the memory a value of n bytes takes in the cache's allocator:
// n rounded up to its unit (values in these tests are far smaller than an
// arena, which would get mappings of their own).
func sizeFor(n int) int64 {
	u := int64(manual.UnitSize())
	return (int64(n) + u - 1) / u * u
}

// charge is the charge of a value of n bytes.
func charge(n int) int64 { return sizeFor(n) + EntryOverhead }

// largestFitting returns the longest value whose charge is at most ch.
func largestFitting(ch int64) int {
	u := int64(manual.UnitSize())
	return int((ch - EntryOverhead) / u * u)
}

// bufOf copies v into a buffer of the cache's allocator.
func (c *Cache) bufOf(v []byte) manual.Buf {
	b, err := c.Alloc(len(v))
	if err != nil {
		panic(err)
	}
	copy(b.Bytes(), v)
	return b
}

// insertBytes inserts a copy of v.
func (c *Cache) insertBytes(id, offset uint64, kind Kind, pri Priority, v []byte) (Handle, error) {
	return c.Insert(id, offset, kind, pri, c.bufOf(v))
}

// getOrLoadBytes is GetOrLoad with a load that returns ordinary bytes,
// copied into the cache's memory.
func (c *Cache) getOrLoadBytes(id, offset uint64, kind Kind, pri Priority, load func() ([]byte, error)) (Handle, bool, error) {
	if load == nil {
		return c.GetOrLoad(id, offset, kind, pri, nil)
	}
	return c.GetOrLoad(id, offset, kind, pri, func() (manual.Buf, error) {
		v, err := load()
		if err != nil {
			return manual.Buf{}, err
		}
		return c.bufOf(v), nil
	})
}

// valueFor returns n deterministic bytes for the block (id, offset) so that
// tests can check that a handle holds its own key's bytes.
func valueFor(id, offset uint64, n int) []byte {
	v := make([]byte, n)
	x := hashKey(key{id: id, offset: offset}) | 1
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[i] = byte(x)
	}
	return v
}

// mustInsert inserts and releases at once, failing the test on error.
func mustInsert(t testing.TB, c *Cache, id, offset uint64, kind Kind, pri Priority, value []byte) {
	t.Helper()
	h, err := c.insertBytes(id, offset, kind, pri, value)
	require.NoError(t, err)
	require.True(t, h.Valid())
	h.Release()
}

// cached reports whether (id, offset) is cached, without touching counters
// or LRU order.
func cached(c *Cache, id, offset uint64) bool {
	k := key{id: id, offset: offset}
	s := c.shardFor(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries[k] != nil
}

package cache

import (
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manual"
	"github.com/cockroachdb/errors"
)

// ErrFull marks the error Insert returns when StrictCapacityLimit is on and
// the value cannot fit beside the shard's referenced entries. Test with
// errors.Is(err, ErrFull).
var ErrFull = errors.New("cache: full")

// Cache is a sharded, byte-charged LRU cache of blocks keyed by (file id,
// offset). All methods are safe for concurrent use. See the package
// documentation for the policies.
type Cache struct {
	opts Options
	// shardShift turns a 64-bit key hash into a shard index: the top
	// NumShardBits bits (a shift by 64 yields 0 in Go, so one shard works).
	shardShift uint
	shards     []shard
	// alloc holds the memory of every block the cache hands out (package
	// manual), cached or not.
	alloc *manual.Allocator
	// pinned is the sum of AddPinned.
	pinned atomic.Int64
	// lastID is the last id NewID handed out.
	lastID atomic.Uint64
	// closed is set by Close before it empties the shards: a block
	// inserted afterwards (by a read racing its DB's Close) is handed back
	// detached, freed on its release, instead of staying in a cache
	// nobody will empty again.
	closed atomic.Bool
}

// New returns a cache configured by opts, or an error naming the invalid
// option.
func New(opts Options) (*Cache, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Cache{
		opts:       opts,
		shardShift: uint(64 - opts.NumShardBits),
		shards:     make([]shard, 1<<opts.NumShardBits),
		alloc:      manual.New(manual.Options{ArenaBytes: manual.ArenaBytesFor(opts.Capacity)}),
	}
	capacity := c.shardCapacity()
	for i := range c.shards {
		s := &c.shards[i]
		s.init(c.alloc, opts.StrictCapacityLimit)
		s.setCapacityLocked(capacity, opts.HighPriorityPoolRatio)
	}
	return c, nil
}

// NewID returns an id no other call on c has returned, for the blocks of
// one opened table file. Ids are never reused, so a block of a deleted
// table left in the cache (for instance by a load that finished after
// EvictFile) can never be mistaken for a block of another table.
func (c *Cache) NewID() uint64 { return c.lastID.Add(1) }

// hashKey mixes both halves of k into 64 well-distributed bits (the
// finalizer of MurmurHash3), so that the top bits used as the shard index
// depend on every bit of the id and the offset: block offsets of one file
// are far from uniform in their low bits.
func hashKey(k key) uint64 {
	h := k.offset ^ (k.id * 0x9e3779b97f4a7c15)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func (c *Cache) shardFor(k key) *shard {
	return &c.shards[hashKey(k)>>c.shardShift]
}

// shardCapacity is the effective capacity of each shard: what is left of
// Options.Capacity after the bytes pinned by table readers (AddPinned),
// split evenly among the shards.
func (c *Cache) shardCapacity() int64 {
	avail := c.opts.Capacity - max(c.pinned.Load(), 0)
	if avail <= 0 {
		return 0
	}
	return avail / int64(len(c.shards))
}

// Lookup returns a handle on the block (id, offset) and true, or the zero
// Handle and false if it is not cached. kind only selects the counters.
// The caller must Release the handle. A hit allocates nothing.
func (c *Cache) Lookup(id, offset uint64, kind Kind) (Handle, bool) {
	if e := c.hit(id, offset, kind, 1); e != nil {
		return Handle{e: e}, true
	}
	return Handle{}, false
}

// hit finds the block (id, offset), counts a hit or a miss for kind, makes
// a found entry recently used and adds refs outside references to it.
func (c *Cache) hit(id, offset uint64, kind Kind, refs int) *entry {
	k := key{id: id, offset: offset}
	s := c.shardFor(k)
	counters := &s.counters[kind.counterIndex()]
	s.mu.Lock()
	e := s.entries[k]
	if e == nil {
		counters.Misses++
	} else {
		counters.Hits++
		s.touchLocked(e)
		s.acquireLocked(e, refs)
	}
	s.mu.Unlock()
	return e
}

// Alloc returns a buffer of n bytes from the cache's memory, for a block to
// be read into and then inserted (Insert, or the load of GetOrLoad, which
// take it over) or used once and given back with Free. Its contents are
// undefined.
func (c *Cache) Alloc(n int) (manual.Buf, error) { return c.alloc.Alloc(n) }

// Free gives back a buffer from Alloc that was not handed to the cache.
func (c *Cache) Free(b manual.Buf) { c.alloc.Free(b) }

// Insert caches buf (from Alloc) as the block (id, offset), replacing any
// entry already there (whose outstanding handles stay valid), and returns a
// handle on it that the caller must Release. The cache takes buf over in
// every case, error included: the caller must not modify or free it
// afterwards.
//
// A value whose charge exceeds its shard's effective capacity is not cached
// and evicts nothing; Insert returns a detached handle on it and no error
// (see the package documentation). With StrictCapacityLimit, a value that
// would fit an empty shard but not beside the shard's referenced entries
// is refused with an error marked ErrFull and the zero Handle. With
// Capacity 0, Insert returns a detached handle and caches nothing.
func (c *Cache) Insert(id, offset uint64, kind Kind, pri Priority, buf manual.Buf) (Handle, error) {
	if err := checkKindAndPriority(kind, pri); err != nil {
		c.alloc.Free(buf)
		return Handle{}, err
	}
	k := key{id: id, offset: offset}
	s := c.shardFor(k)
	s.mu.Lock()
	e, outcome := c.insertLocked(s, k, kind, pri, buf)
	if outcome == outcomeStrictReject {
		err := base.Mark(errors.Newf(
			"cache: cannot insert %d-byte %s block of file %d at offset %d: "+
				"shard capacity %d, usage %d, of which %d referenced (strict capacity limit)",
			buf.Len(), kind, id, offset, s.capacity, s.usageLocked(), s.entryPinned.Load()), ErrFull)
		s.mu.Unlock()
		c.alloc.Free(buf)
		return Handle{}, err
	}
	s.mu.Unlock()
	return Handle{e: e}, nil
}

// insertLocked is Insert with the shard's lock held: it applies the current
// effective capacity and inserts. A disabled cache (Capacity 0) hands back a
// detached entry without counting it as a reject.
func (c *Cache) insertLocked(s *shard, k key, kind Kind, pri Priority, buf manual.Buf) (*entry, insertOutcome) {
	if c.opts.Capacity == 0 || c.closed.Load() {
		if old := s.entries[k]; old != nil {
			s.removeLocked(old)
		}
		return newDetachedEntry(s, k, kind, buf), outcomeOversized
	}
	s.setCapacityLocked(c.shardCapacity(), c.opts.HighPriorityPoolRatio)
	return s.insertLocked(k, kind, pri, buf, c.opts.StrictCapacityLimit)
}

func checkKindAndPriority(kind Kind, pri Priority) error {
	if kind >= NumKinds {
		return errors.Newf("cache: invalid block kind %d", errors.Safe(uint8(kind)))
	}
	if pri > PriorityHigh {
		return errors.Newf("cache: invalid priority %d", errors.Safe(uint8(pri)))
	}
	return nil
}

// EvictFile removes every block of file id from the cache, referenced or not
// (outstanding handles stay valid). Call it when a table file is deleted or
// its reader closed. It locks each shard once and costs O(shards + blocks
// of the file): each shard keeps a list of its entries per file.
func (c *Cache) EvictFile(id uint64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.evictFileLocked(id)
		s.mu.Unlock()
	}
}

// AddPinned adds delta (which may be negative) to the bytes pinned outside
// the shards by table readers: top-level index and filter blocks, and
// metadata blocks too large for a shard. They count against Capacity: each
// shard's effective capacity becomes max(0, Capacity-pinned)/NumShards.
// Shards apply a changed capacity on their next insert, so AddPinned is one
// atomic add; a shard already over its new capacity shrinks then. A negative
// total (more removed than added, a caller bug) counts as zero.
func (c *Cache) AddPinned(delta int64) { c.pinned.Add(delta) }

// Metrics returns the cache's counters and usage, summed over the shards.
func (c *Cache) Metrics() Metrics {
	am := c.alloc.Metrics()
	m := Metrics{
		Capacity:       c.opts.Capacity,
		PinnedUsage:    c.pinned.Load(),
		NumShards:      len(c.shards),
		AllocatedBytes: am.InUseBytes,
		MappedBytes:    am.MappedBytes,
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.addMetricsLocked(&m)
		s.mu.Unlock()
	}
	return m
}

// Close empties the cache and gives its memory back to the system. Blocks
// still referenced by handles stay valid, and their memory goes back when
// the last is released; Close then returns an error saying how many there
// were, since every reader should have finished (a missing Release is a
// leak). Nothing may use the cache afterwards but those releases.
func (c *Cache) Close() error {
	// Set before the shards are emptied, each under its lock: an insert
	// that takes a shard's lock after it was emptied sees it.
	c.closed.Store(true)
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for _, l := range [2]*list{&s.low, &s.high} {
			for !l.empty() {
				s.removeLocked(l.root.prev)
			}
		}
		s.mu.Unlock()
	}
	if base.InvariantsEnabled {
		// Every reader should be done, but one racing Close (a lookup
		// that passed its DB's closed check just before) may still hold
		// a handle for a moment. Wait for such reads, up to a second,
		// before the allocator reports what is left as leaked.
		for deadline := time.Now().Add(time.Second); c.alloc.Metrics().Buffers > 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	return errors.Wrap(c.alloc.Close(), "cache: close")
}

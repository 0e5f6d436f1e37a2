package cache

import "math/rand/v2"

// Admit reports whether a caller that missed the block (id, offset) should
// cache it once read: always while the block's shard has room, and one time
// in Options.FullAdmitOneIn once the shard is full.
//
// Why: when the blocks being read do not fit in the cache, every miss that
// is inserted evicts another block. When blocks were garbage-collected
// slices each insert cost a fresh buffer — at 64 KiB blocks the runtime's
// zeroing of it and the collection of the evicted one took about a fifth
// of a point lookup's CPU at a 64 MiB cache on the 50M-key bench; with
// blocks in the cache's own memory an insert costs the eviction's
// bookkeeping and the shard lock held for it. Under uniform access any set of blocks that fills
// the cache hits equally often, so caching a quarter of the misses keeps
// the hit rate once the cache is full; under skewed access a hot block is
// admitted after a few misses and then stays (the idea of TinyLFU's
// admission filter, in its simplest form). A caller that does not cache a
// block reads it into a buffer from Alloc and frees it after the one use. Only point lookups use this;
// iterators and metadata blocks always cache what they read.
func (c *Cache) Admit(id, offset uint64) bool {
	if c.opts.FullAdmitOneIn <= 1 {
		return true
	}
	s := c.shardFor(key{id: id, offset: offset})
	return !s.full.Load() || rand.Uint32N(uint32(c.opts.FullAdmitOneIn)) == 0
}

package cache

// Cached reports whether the handle's block is held by the cache. It is
// false for a detached handle: a value the cache refused (larger than a
// shard, the strict limit, or a disabled cache).
func (h Handle) Cached() bool { return h.e != nil && !h.e.detached() }

// MaxEntrySize is the largest value a shard of the configured size could
// hold: Capacity / 2^NumShardBits less the per-entry overhead. Table readers
// pin metadata blocks larger than this instead of re-reading them on every
// lookup. It deliberately ignores pinned bytes: judged against the shrinking
// effective capacity, ever more partitions would look oversized and be
// pinned, and pinned memory would grow without bound.
func (c *Cache) MaxEntrySize() int64 {
	return c.opts.Capacity/int64(len(c.shards)) - EntryOverhead
}

// Capacity returns the configured capacity in bytes.
func (c *Cache) Capacity() int64 { return c.opts.Capacity }

// PinnedUsage returns the bytes pinned outside the shards (AddPinned).
func (c *Cache) PinnedUsage() int64 { return max(c.pinned.Load(), 0) }

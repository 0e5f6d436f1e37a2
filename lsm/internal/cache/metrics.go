package cache

// KindMetrics are the counters of one kind of block.
type KindMetrics struct {
	// Hits counts lookups (Lookup or GetOrLoad) that found the block.
	Hits int64
	// Misses counts lookups that did not; every GetOrLoad caller that did
	// not hit counts one, including those that waited for another
	// caller's load.
	Misses int64
	// Inserts counts values that were cached (not those refused as
	// oversized or by the strict limit).
	Inserts int64
	// Evictions counts entries removed to make room for others (not
	// replacements and not EvictFile removals).
	Evictions int64
	// BytesInserted is the sum of len(value) of the cached values.
	BytesInserted int64
}

func (k *KindMetrics) add(o KindMetrics) {
	k.Hits += o.Hits
	k.Misses += o.Misses
	k.Inserts += o.Inserts
	k.Evictions += o.Evictions
	k.BytesInserted += o.BytesInserted
}

// Metrics is a point-in-time snapshot of a cache. Each shard is read under
// its own lock, one after the other, so the sums are not one atomic
// snapshot of the whole cache.
type Metrics struct {
	// Capacity is Options.Capacity.
	Capacity int64
	// Usage is the charge (len(value) + EntryOverhead) of every cached
	// entry. It may exceed Capacity - PinnedUsage when referenced entries
	// cannot be evicted and StrictCapacityLimit is off.
	Usage int64
	// PinnedUsage is the sum of AddPinned: bytes table readers hold
	// outside the shards. It is subtracted from Capacity before the rest
	// is split among the shards.
	PinnedUsage int64
	// EntryPinnedUsage is the charge of cached entries that have
	// unreleased handles (a part of Usage).
	EntryPinnedUsage int64
	// Entries is the number of cached entries.
	Entries int64
	// NumShards is the number of shards.
	NumShards int
	// OversizedRejects counts values not cached because their charge
	// exceeded their shard's effective capacity.
	OversizedRejects int64
	// StrictRejects counts values not cached because of
	// StrictCapacityLimit.
	StrictRejects int64
	// AllocatedBytes is the memory of the blocks the cache has handed
	// out and not yet taken back: cached entries (their Usage less the
	// per-entry overhead) and blocks still held by handles or in use for
	// one read.
	AllocatedBytes int64
	// MappedBytes is the memory the cache's allocator holds from the
	// system (package manual): AllocatedBytes and the free space between
	// blocks. It bounds what the cache adds to the process's resident
	// memory.
	MappedBytes int64
	// Kinds holds the counters of each kind of block, indexed by Kind.
	Kinds [NumKinds]KindMetrics
}

// Total returns the per-kind counters summed over all kinds.
func (m *Metrics) Total() KindMetrics {
	var t KindMetrics
	for _, k := range m.Kinds {
		t.add(k)
	}
	return t
}

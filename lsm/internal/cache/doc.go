// Package cache is the engine's block cache: a sharded, byte-charged LRU
// cache of table blocks keyed by (file id, offset), with reference-counted
// handles, a high-priority pool for index and filter partitions, and a
// policy for blocks too large for a shard.
//
// # Structure
//
// The cache is split into 2^NumShardBits shards (64 by default). A block
// belongs to the shard picked by the top bits of a 64-bit mix of its id and
// offset. Each shard has its own mutex, a map from key to entry, two LRU
// lists, a list of entries per file and its own counters, so cores working
// on different shards share no lock and no written cache line; Metrics sums
// the shards. Every entry is charged len(value) + EntryOverhead bytes.
//
// # Handles and reference counting
//
// Lookup, Insert and GetOrLoad return a Handle holding one reference; while
// the entry is cached the cache holds one more. Eviction drops only the
// cache's reference and never picks an entry with outside references, so a
// block in use stays cached until it is released (the shard's usage may
// then exceed its capacity, unless StrictCapacityLimit). Release is one
// atomic decrement, without the shard lock: new references are only taken
// under the lock, so a shard holding its lock can trust "no outside
// references" until it unlocks.
//
// # Memory
//
// Values live outside the Go heap, in memory of the cache's allocator
// (package manual), and the cache gives each back the moment nothing can
// read it: an entry's buffer is freed when its state — the cached bit and
// the count of handles, one atomic word — reaches zero. That happens in
// exactly one place for each entry: the removal (eviction, replacement,
// EvictFile, Close) of an entry without handles, or the Release of the last
// handle of an entry already removed (or detached). So a handle's Value
// stays valid, and its bytes unchanged, until that handle is released,
// even if the entry is evicted meanwhile; after Release the bytes may
// belong to another block at any moment. Readers hold a handle for every
// use of a block, however short: there is no access without one.
//
// A block is read straight into its buffer: GetOrLoad's load (or the
// caller of Insert) takes one from Alloc. Nothing of a cached block is on
// the heap, so the collector neither scans the cache nor waits to free
// what it evicts, and with GOGC=100 the process is no longer twice the
// cache's size. Buffers are charged at their allocated size (rounded to
// the allocator's unit), so Capacity bounds the memory the cached blocks
// take. Close gives every arena back to the system.
//
// # Priorities
//
// Within a shard, PriorityHigh entries (index and filter partitions) live in
// a high-priority pool of up to HighPriorityPoolRatio of the shard's
// capacity; when the pool overflows, its oldest entries are demoted to the
// front of the low-priority list. Eviction takes unreferenced entries from
// the tail of the low-priority list first, then from the tail of the pool.
// So a scan of data blocks, which are PriorityLow, cannot flush index and
// filter partitions while the pool has room for them. A hit moves an entry
// to the front of the list its own priority selects: a data block never
// enters the pool by being hit. The LRU order is approximate at the front:
// a hit on an entry that is on its own list and among the newest quarter
// of it (fewer than len/4 entries pushed in front of it since its last
// move) leaves it in place, so that hits on a hot working set do not all
// rewrite list links; the back three quarters, where eviction happens, are
// in exact LRU order of the moves.
//
// # Pinned usage
//
// Table readers keep some blocks for the life of a table, outside the
// shards: the top-level index and top-level filter index, and any metadata
// block too large for a shard (below). They charge those bytes with
// AddPinned, and each shard's effective capacity is
// max(0, Capacity-pinned)/NumShards. A shard applies a changed effective
// capacity on its next insert, evicting down to it then.
//
// # Oversized blocks
//
// A block whose charge exceeds its shard's effective capacity is never
// inserted and never evicts anything. Insert (or GetOrLoad) hands back a
// detached handle on the value, which works like any other handle and
// whose Release frees the value, and Metrics.OversizedRejects counts it.
//
// The alternative, LevelDB's and RocksDB LRUCache's, is to evict every
// unreferenced entry of the shard to make room and insert the block
// anyway; when the last reader releases it, the shard is over capacity and
// the block is dropped at once. For a full-table filter block of 8.7 MiB
// in a 205 MiB cache of 64 shards (3.2 MiB each), that made every Get read
// the whole filter again, verify and parse it, and empty a shard of the
// cache: 100 times fewer gets per second (the benchmark workload of
// docs/benchmarks.md). Refusing the block keeps the shard's other blocks
// cached; it cannot by itself avoid the re-read, which is why the table
// reader must pin such blocks.
//
// Policy for table readers (docs/design.md, "Block cache"):
//
//   - The top-level index and top-level filter index of a table are read
//     when the table is opened and pinned for the table's life, charged
//     with AddPinned(+size) and uncharged with AddPinned(-size) when the
//     reader closes. They never go through the shards.
//   - Index and filter partitions are read through GetOrLoad with
//     KindIndex/KindFilter and PriorityHigh; data blocks with KindData and
//     PriorityLow.
//   - A metadata block (a single-level index or a full filter, or an
//     unusually large partition) whose GetOrLoad handle comes back detached
//     because it is oversized is kept by the reader for the table's life
//     and charged with AddPinned, like a top-level block, so it is read
//     once per table open instead of once per Get. A data block that comes
//     back detached is simply used and released; the next read of it reads
//     the file again.
//   - "Too large to cache" should be judged against a shard of the
//     configured capacity, Capacity/NumShards, not against the effective
//     capacity that pinned bytes have already shrunk. Otherwise pinning
//     feeds on itself: as pinned bytes approach Capacity every partition
//     comes back oversized, gets pinned, and pinned memory grows with the
//     total metadata size instead of staying within the cache.
//   - When a table reader closes, it calls EvictFile(id) and releases its
//     pinned bytes; a reopened table gets a new id from NewID.
//
// Because pinned bytes shrink every shard, pinning large blocks under a
// small cache can bring the effective capacity to zero; the cache then
// caches nothing, but reads still work. Metrics.PinnedUsage against
// Metrics.Capacity shows when that happens; the remedy is partitioned
// index and filters, or a larger cache.
//
// # Strict capacity limit
//
// With StrictCapacityLimit, a block that fits an empty shard but not beside
// the shard's referenced entries is refused before anything is evicted:
// Insert returns an error marked ErrFull, GetOrLoad returns the loaded
// value on a detached handle and a nil error (the read succeeds), and
// Metrics.StrictRejects counts both.
//
// # Admission
//
// Admit tells a caller that missed a block whether to cache it: always
// while the block's shard has room, one time in FullAdmitOneIn (4) once the
// shard's last insert had to evict. The table reader asks for the data
// blocks of point lookups only, and reads a block it does not cache into a
// recycled buffer (admission.go explains the measurement).
//
// # Loading
//
// GetOrLoad is the read path: on a miss it runs the caller's load function
// without holding any lock, and concurrent misses of the same key wait for
// that one load and share its result (or its error; nothing is cached on
// error). Every caller that did not hit counts one miss.
//
// # Costs
//
//   - Lookup hit: one shard lock, one map lookup, a list move unless the
//     entry is recent, and an atomic add on the entry's own cache line; no
//     allocation. Release: one atomic add (a free when it was the last
//     reference of a removed entry). Under StrictCapacityLimit each also
//     updates the shard's referenced-bytes counter when the entry's first
//     handle is taken or its last released.
//   - Insert: an entry from a pool, map and file-list updates, and
//     eviction proportional to the entries evicted plus the referenced
//     entries passed over (they are skipped in place); each evicted entry
//     without handles is freed at once.
//   - EvictFile: locks each shard once; O(shards + blocks of the file).
//   - AddPinned: one atomic add. Metrics: locks each shard once.
//
// A load that finishes after EvictFile of its file caches a block of a
// deleted file; it is never returned for another table (ids are not
// reused) and ages out like any unused block (or goes at Close).
package cache

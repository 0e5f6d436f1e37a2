// Package sstable writes and reads the engine's immutable sorted tables.
//
// # File layout
//
// A table is a sequence of stored blocks (each followed by a 5-byte
// trailer: compression type and masked CRC-32C) and a fixed-size footer
// (format.go). In file order:
//
//	data blocks | filter partitions | top-level filter index |
//	index partitions | top-level index | range deletions | properties | footer
//
// Data blocks, index partitions and the top-level indexes use package
// block's format; filter blocks are package bloom's. An index entry maps the
// separator after a block's last key to that block's handle (offset and
// length), so a lookup descends top-level index → index partition → data
// block, and top-level filter index → filter partition for the filter.
// LayoutFull writes one index block and one filter block instead of the two
// tiers each; the reader gives both layouts the same two-level path by
// standing in a one-entry top level. docs/format.md has every byte.
//
// The Writer (writer.go) writes data blocks as they fill and keeps index and
// filter partitions in memory, writing them after the data. Blocks that
// compress by less than 12.5% are stored uncompressed.
//
// # Read modes
//
// A Reader (reader.go) reads blocks through the block cache (package cache)
// in one of three modes (readMode):
//
//   - readHold: every read of a cached block takes a cache handle, held
//     until the block is no longer used — the end of a point lookup, or
//     an iterator moving off the block — and a miss is read into the
//     cache. Cached blocks live in memory the cache manages by hand
//     (package manual): once evicted, the release of the last handle
//     gives the memory to the next block read, so no byte of a block may
//     be used after its release.
//   - readOnce: a point lookup's data block that the cache does not admit
//     (cache.Admit) is read into a buffer of the cache's memory for that
//     lookup only, and given back when it ends.
//   - readNoFill: compactions read missing blocks onto the Go heap
//     without inserting them, so they do not push the readers' working
//     set out.
//
// Some blocks never go through the cache lookup: the top-level index and
// filter index are pinned for the reader's life and charged to the cache;
// a partitioned table also pins its index partitions when they fit within
// a share of the cache (pinned_partitions.go); a block larger than a cache
// shard (a full filter, a one-level index) is pinned instead of cached.
// Without a cache every metadata block is pinned. A filter block that is
// not in memory is read only while the table's lookups show that it saves
// data block reads (filter_use.go), unless ReaderOptions.AlwaysLoadFilters.
//
// Every block read from the file is checksummed, decompressed and checked
// before use; a bad block is an error matching base.ErrCorruption that
// names the table and the block's offset, never a panic or a wrong answer.
// Verify reads every block and names the first bad one in a BlockError.
//
// # Concurrency
//
// A Reader is safe for concurrent use: Get, NewIter, Verify and Layout may
// run from many goroutines; its pinned blocks are immutable once it is
// open, and the filter-use score and the pinned filter partitions are
// updated with atomics. An Iter and a Writer are for one goroutine at a
// time. Close the Reader only after every Get and Iter on it has finished:
// the engine's table cache holds a reference per user for that.
package sstable

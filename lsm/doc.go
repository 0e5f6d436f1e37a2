// Package lsm is bookie-index's log-structured merge-tree key/value engine,
// built for short keys that share long prefixes: BookKeeper's entry location
// index, (ledgerId, entryId) → location.
//
// Keys are ordered bytewise. Tables store each block's common key prefix
// once, split their index and Bloom filter into partitions of a few KiB
// behind pinned top-level blocks, and read through a 64-shard block cache
// that never thrashes on blocks larger than a shard. The internals live in
// lsm/internal; this package exposes the engine and a few entry points for
// tools (see table.go).
package lsm

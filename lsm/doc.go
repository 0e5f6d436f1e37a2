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
//
// Besides Set, Delete and DeleteRange, a batch may hold merge operands
// (Batch.Merge), combined with older values by Options.MergeOperator on
// reads and, where they can be, in flushes and compactions (merge.go). With
// Options.MinTombstonesForRangeConversion, iterators turn the runs of point
// tombstones they step over into range tombstones in the memtable
// (tombstone_conversion.go).
//
// # Recovery
//
// Open replays the WALs the manifest has not absorbed. Every WAL and
// manifest has a synced-length file (NNNNNN.synced) to which its writer
// appends the log's length after each successful fsync, before the writes
// it covered are acknowledged. Recovery uses it to tell the two ways a log
// can end in bad bytes apart:
//
//   - a torn tail, bytes past the last synced length (a crash during an
//     unsynced write), is dropped with a WARN;
//   - damage below the synced length is corruption: Open fails with an
//     error marked ErrCorruption naming the file and offset, and changes
//     nothing. For a WAL, Options.WALRecoveryMode = WALRecoveryPointInTime
//     recovers the writes before the damage instead, loudly.
//
// A WAL followed by a newer WAL that took writes was synced in full, so any
// damage in it is corruption; in the newest, damage at or past the synced
// length is a torn tail even with valid chunks after it (a power loss
// writes unsynced pages in any order). Without a readable synced-length file (an older database, or
// one lost with the power) a damaged tail is dropped but the WAL is kept.
//
// No file is deleted unless it is proven useless. Files that recovery sets
// aside — WALs that did not replay to their end, and tables no version
// references when the manifest cannot prove itself complete — go to the
// folder lost/ inside the database directory, with a WARN naming each.
// Check lists them, together with orphan tables, WALs that do not replay
// to their end and a damaged manifest tail (see docs/operations.md).
//
// # Write failures
//
// A write failure stops writes (reads go on) until the DB is reopened,
// except one for lack of space: the engine retries the failed flush, WAL,
// manifest write or compaction with backoff and takes writes again once a
// retry succeeds, without a restart (background_error.go; ErrNoSpace,
// DB.BackgroundError).
//
// # Checkpoints and dumps
//
// Checkpoint writes a consistent copy of an open DB into a new directory
// while writes go on: it flushes the memtables, hard-links the tables of
// the current version and writes a manifest naming exactly them
// (checkpoint.go). DumpManifest and DumpWAL read a directory's manifest
// and WALs record by record with the decoders recovery uses, for tools
// (dump.go).
package lsm

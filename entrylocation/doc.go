// Package entrylocation is BookKeeper's entry location index on the lsm
// engine: for every stored entry, (ledgerId, entryId) → location, where a
// location is entryLogId<<32 | offset of the entry inside its entry log.
//
// The semantics are those of BookKeeper's EntryLocationIndex and its
// RocksDB-backed KeyValueStorage, so that a bookie can switch to this index
// without behaving differently:
//
//   - GetLocation returns 0, not an error, for an absent entry (0 is never a
//     valid location: entry logs start with a header).
//   - GetLastEntryInLedger returns the greatest entry id of a ledger, or an
//     error matching ErrNoEntry when the ledger has none or is marked
//     deleted.
//   - Delete only marks a ledger in memory; RemoveOffsetFromDeletedLedgers
//     later deletes every marked ledger's locations with one range deletion
//     each, in one synced batch, and keeps the marks when it fails so that
//     the next call retries. The marks are not persisted: after a restart the
//     bookie's garbage collector marks the ledgers again.
//   - Batches commit in chunks of at most Options.MaxBatchOps operations
//     (BookKeeper's maxOperationNumbersInSingleRocksdbWriteBatch); each chunk
//     is one synced, atomic write.
//
// Deliberate differences from upstream: Batch.Flush empties the batch
// (upstream re-applies its operations on a second flush); a second Compact
// while one runs returns at once instead of running another; Close cancels
// a running Compact and waits for it (upstream closes the database under
// it); GetLastEntryInLedger is a reverse seek bounded below by the ledger's
// first key, so its cost does not grow with the deleted data of lower
// ledgers (BookKeeper issues #3759 and #4529); negative ledger ids and
// locations of 0 or less are refused, entry MaxInt64 is an ordinary entry
// id and the purge removes a ledger's every key (see Ids).
//
// # Keys and values
//
// Keys are 16 bytes, values 8, all big-endian, exactly as upstream (do not
// change: existing indexes and tools depend on this layout):
//
//	key:   +----------------------+----------------------+
//	       | ledgerId (BE int64)  | entryId (BE int64)   |
//	       +----------------------+----------------------+
//	       0                      8                      16
//	value: +----------------------+
//	       | location (BE int64)  |
//	       +----------------------+
//
// # Ids
//
// Ledger ids are 0 to math.MaxInt64, both ends included; a negative ledger
// id is an error matching ErrInvalidArgument at every call (BookKeeper
// never allocates one). Entry ids are any int64, as upstream: an entry id
// is stored as its unsigned big-endian word, so the ids 0 to MaxInt64 are
// in numeric order under the engine's bytewise order and a negative one
// sorts after MaxInt64 within its ledger. GetLocation and the writes take
// negative entry ids (upstream's own regression test adds entry -1);
// GetLastEntryInLedger never answers one, since it probes the keys
// [(L, 0), (L, MaxInt64)+1) only; the purge deletes [(L, 0), (L+1, 0)),
// negative entry ids included. Both ends are computed as unsigned words,
// so neither overflows at MaxInt64. The "last entry" meaning of entry id
// -1 belongs to the storage's reads (package bookie), which refuses other
// negative entry ids.
//
// Upstream probes and purges below (L, MaxInt64), exclusive: an entry with
// id MaxInt64, or a negative one, is invisible to its last-entry probe and
// survives its ledger's purge, so a deleted ledger's entry MaxInt64 comes
// back when the ledger is written again. Here the purge removes them too.
//
// # Concurrency
//
// An Index is safe for concurrent use. A Batch belongs to one goroutine.
// Every call after Close returns an error matching ErrClosed; Close waits
// for calls in progress.
package entrylocation

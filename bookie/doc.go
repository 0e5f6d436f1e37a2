// Package bookie is the ledger storage a bookie embeds (upstream's
// DbLedgerStorage and SingleDirectoryDbLedgerStorage): entry logs, write
// and read caches, checkpoints, the read path, ledger deletion, garbage
// collection and read-only mode.
//
// The offline tools that work on a stopped storage's directories live in
// packages of their own, as Pebble keeps its tool apart from the DB:
// rebuild (the entry location index, from the entry logs), check (a
// directory, every location against the entry logs) and migrate (a
// BookKeeper bookie's RocksDB indexes into this storage's). What the
// storage and the tools share about a directory — the ledgers index's
// records, the LAYOUT record, a migration's file names — is package
// ondisk.
//
// # Layout
//
// A Storage has one DirStorage per ledger directory; ledger L lives in
// directory L mod n, or, once the list was expanded, in the directory
// whose ledgers index holds it (routing.go). Each directory has:
//
//	<ledgerDir>/current/<hex id>.log   entry logs (package entrylog)
//	<ledgerDir>/current/lastId         the id of the last entry log created
//	<indexDir>/current/locations       entry location index (package entrylocation)
//	<indexDir>/current/ledgers         ledgers index: a record per ledger (LedgerInfo)
//	<ledgerDir>/current/LAYOUT         the directory list, instance id and routing
//	<indexDir>/current/LAYOUT          (one copy per directory; ondisk.Layout)
//
// Open refuses a directory list other than the one recorded at the first
// start, unless Options.AllowStorageExpansion adds empty directories
// (layout_guard.go).
//
// Every one of these files, of every directory, goes through one file
// system, Options.FS (the operating system's by default; the engine
// options' own FS must be unset or the same): a crash or a failing disk
// hits the entry logs and the indexes that name their bytes together, and
// the tests check the checkpoint protocol below against exactly that (one
// vfs.NewMem crashed at one instant, vfs.NewErrorFS for faults).
//
// A BookKeeper bookie's entry logs ("BKLO") are read where they are,
// beside the logs this storage writes (package entrylog); its RocksDB
// indexes are not: Open refuses, before creating anything, a directory
// whose index is BookKeeper's RocksDB or that holds BookKeeper logs with
// an index missing, with an error matching ErrUnconverted that names the
// directory and "bookie-index migrate" (ondisk.CheckConverted).
//
// # Write path
//
// AddEntry copies the entry into the directory's write cache and returns:
// nothing is durable yet. The cache has two halves, the one being filled
// and the one being flushed. When the filled half is full, AddEntry
// triggers a checkpoint and waits for the halves to swap, up to
// MaxThrottleTime, then fails with ErrRejected.
//
// A checkpoint (every FlushInterval, when the cache is full, on demand,
// and at Close) swaps the halves and writes the full one: its entries are
// appended to the entry log in (ledger, entry) order, the entry log is
// fsynced, the ledgers index's changes are written (synced), then the
// entries' locations are written to the location index in one synced
// batch. The index never names entry-log bytes a crash could lose; a
// crash loses the entries of the checkpoint in progress and of the
// caches, nothing a completed checkpoint acknowledged. Upstream relies on
// its journal for the entries not yet checkpointed, and so does a bookie
// embedding this storage: package journaled puts package journal in front
// of it, and Options.CheckpointSource tells the journal how far each
// checkpoint made the storage durable (checkpoint_source.go). Without a
// journal, callers that need durability wait for a checkpoint
// (Checkpoint, or the last-checkpoint metric).
//
// A checkpoint that fails keeps its half and the locations it wrote: the
// next checkpoint resumes it before swapping, writing again only the
// entries no successful entry-log sync covered (an entry written twice is
// harmless, the index names the later copy) and then the index steps, so
// retries on a full disk do not append the cache to the entry logs again
// and again. Writers wait meanwhile. The background worker retries a
// failed checkpoint with backoff (Options.CheckpointRetryInterval, doubling
// up to CheckpointRetryMaxInterval); DirStorage.CheckpointError and the
// CheckpointFailures metric say why and for how long. The index engine
// recovers from a full disk by itself (lsm.DB.BackgroundError), so
// checkpoints succeed again once space returns, without a restart. An
// entry log that fails a write or a sync is abandoned for a new one.
//
// # Read-only mode
//
// The storage turns read-only (Storage.ReadOnly says why) when a ledger or
// index directory's file system is more used than
// Options.DiskUsageThreshold (the disk monitor checks every
// DiskCheckInterval; Storage.CheckDisks checks now), when a checkpoint or
// a synced index write fails, or when forced (Storage.SetReadOnly). Writes
// then fail at once with ErrReadOnly; reads, ledger deletions (how space
// comes back), checkpoints of what was accepted, purges and
// UpdateEntriesLocations go on. A lack of space ends
// by itself once the directory is below DiskUsageLwmThreshold and its
// checkpoint and engines have recovered; another write error (EIO) stays
// until SetReadOnly(false) or a restart; a forced mode until
// SetReadOnly(false); a failure outside the storage that its writes
// depend on (FailWrites: a journal that failed) until a restart. One state serves every directory: a ledger stays
// in its directory, so one full directory stops the writes of all (see
// read_only.go).
//
// # Read path
//
// GetEntry looks in the half being filled, the half being flushed, the
// read cache, then the location index and the entry log. After a read
// from an entry log it reads ahead the records that follow in the log
// while they belong to the same ledger (ReadAheadBatchSize, ...Bytes) into
// the read cache; unlike upstream it keeps only records that are their
// entry's current copy (an entry written again has a stale copy earlier
// in the logs). A checkpoint drops the read cache's copies of the entries
// it rewrote, and a reader that looked an entry up before that does not
// insert its stale copy after it (an invalidation epoch). Entry id -1
// (LastEntry) reads the ledger's last entry: the greatest entry id of the
// caches and of the index (a floor lookup).
//
// A ledger that does not exist (never written to nor given a master key,
// or deleted) is an error matching ErrNoLedger; an absent entry of an
// existing ledger, ErrNoEntry.
//
// # Deletion
//
// DeleteLedger removes the ledger's entries from the write caches and the
// read cache, marks it in the location index (so that its last entry is
// gone at once) and records the deletion in the ledgers index, synced: a
// deleted ledger never comes back. Its locations are purged (one range
// deletion each, in one synced batch) by a background worker after the
// next checkpoint, even when that checkpoint had nothing to write (with a
// CheckpointSource, the ledger's record, which says it is deleted, stays
// until a reported checkpoint covers the deletion, so that a journal
// replayed from an earlier position skips the ledger), and by
// the garbage collector every GCWaitTime, which retries failed purges and
// then gives the ledger's entry-log bytes back (see Garbage collection).
// Purges and checkpoints exclude each other, so no location written for a
// ledger before its deletion lands after its purge. The marks of the
// location index live in memory: at open, the ledgers whose purge did not
// happen are marked again.
//
// A ledger written again after its deletion starts a new life: the
// checkpoint that writes its first new entries purges the old locations
// first, and the ledgers index records the entry-log position of that
// purge as the ledger's floor. Until then reads do not consult the index
// for it (it holds only the old life's locations), and a rebuild ignores
// the ledger's records below its floor.
//
// # Garbage collection
//
// Every GCWaitTime, and when forced (ForceGC, RunGC), each directory's
// garbage collector (upstream's GarbageCollectorThread, gc.go) purges,
// drops the ledgers without a record in the ledgers index from every
// rotated log's metadata (entrylog.Metadata: which ledgers a log holds,
// bytes each), removes the logs left with none, and compacts, when an
// interval is due or forced, the logs whose live fraction is below the
// minor or major threshold (GCOptions), least used first, within a time
// bound and a throttle. The log being written is never touched.
//
// Compaction (gc_compactor.go) copies a log's current records (the index
// names them; stale copies are dropped) to the end of the log being
// written in chunks; each chunk is appended, synced and indexed (one
// synced batch) holding the checkpoint lock, so a crash leaves every
// entry readable at its old or new copy. Then deleted ledgers are purged
// and the log removed. A marker file names the log being compacted; open
// finishes an interrupted compaction. A read that finds its entry's log
// removed looks the entry up again.
//
// # Ids
//
// Ledger and entry ids are 0 to MaxInt64, both included, everywhere (a
// write, a read, the last entry, a deletion and a ledger's new life after
// it); a negative id is an error matching ErrInvalidArgument, except entry
// id LastEntry (-1) in GetEntry, upstream's "last add confirmed" read.
//
// # Metrics
//
// DirMetrics carries upstream's DbLedgerStorageStats (add-entry,
// read-entry, flush, flush-entrylog, flush-locations-index,
// flush-ledger-index, write and read cache hits and misses, throttled and
// rejected writes, cache sizes) and the location index's own metrics.
//
// # Concurrency
//
// A Storage is safe for concurrent use. Close stops the background
// workers, waits for the calls in progress (writers waiting for room give
// up with ErrClosed), checkpoints, purges and closes the files; later
// calls fail with ErrClosed. A final checkpoint that fails for lack of
// space is retried for up to CheckpointRetryMaxInterval (the index engine
// may be recovering); if it still fails, Close returns the error, naming
// how many entries no checkpoint completed; what earlier checkpoints
// wrote is safe.
package bookie

// Package journal is a bookie's journal in BookKeeper's on-disk format: the
// write-ahead log that makes an add durable before the ledger storage is.
// A bookie acknowledges an add once the journal has synced it; the storage
// becomes durable only at checkpoints, which then record the journal
// position they cover (the last log mark); at start the journal is
// replayed from that mark into the storage.
//
// # Use
//
//	set, err := journal.Open(opts, func(r *journal.Record) error {
//		// hand r to the storage: r.Kind, r.LedgerID, r.EntryID, r.Payload
//	})
//	// flush the storage, then checkpoint (below), as upstream after replay
//
//	storage.AddEntry(ledger, entry, payload)   // first the storage ...
//	c := set.Add(ledger, entry, payload)       // ... then the journal
//	err = c.Wait()                             // durable: acknowledge
//
//	// a checkpoint (upstream's SyncThread):
//	mark := set.CurrentMark()                  // before the flush
//	storage.Checkpoint()                       // the storage is durable ...
//	err = set.SetCheckpointed(mark)            // ... up to mark: lastMark, then old files go
//
// Open takes upstream's journal keys as Options (journalDirectories,
// journalSyncData, journalMaxGroupWaitMSec, ...). A Set holds one Journal
// per journal directory; ledger L's records go to journal L mod n. Each
// add returns a Completion (upstream's WriteCallback): Done is closed
// after the fsync that covers the record, or, with journalSyncData=false,
// once the record is written to the operating system (upstream's weaker
// promise: a power loss may lose it). Meta-entries (AddMasterKey, AddFence,
// AddExplicitLAC) are added the same way; ForceLedger waits for the adds
// queued before it.
//
// Add to the storage before the journal, as upstream's bookie does: the
// mark CurrentMark returns covers only synced records, so every record it
// covers was in the storage before the flush that follows it.
//
// # Group commit
//
// Adds copy their records into the batch being filled; a writer goroutine
// takes the batch when upstream's grouping rules say so (at once with
// journalFlushWhenQueueEmpty; else when its first add has waited
// journalMaxGroupWaitMSec or it holds more than
// journalBufferedWritesThreshold bytes or journalBufferedEntriesThreshold
// adds) and writes it, padded, in one write, into zeros pre-allocated
// journalPreAllocSizeMB at a time (a pre-allocator goroutine writes and
// syncs them ahead of the writer); a syncer goroutine fsyncs, one fsync
// (fdatasync unless the records outran the zeros made durable) for every
// batch written since the last, so that many concurrent adds share one
// write and one fsync. A failed write or fsync
// stops the journal for good: the adds waiting for it and every later add
// fail with an error naming the file (a full disk matches ErrNoSpace), and
// Options.OnFailure is called (upstream's JournalAliveListener). Nothing
// failed is ever reported durable. A file rolls when a batch leaves it
// longer than journalMaxSizeMB; SetCheckpointed removes files before the
// mark's, keeping journalMaxBackups of them.
//
// # Files
//
// A journal directory holds its files in "current": "<hex id>.txn", ids
// ascending, each a header (magic "BKLG", a format version, zeros to 512
// bytes from version 5) and records, each a big-endian 32-bit length and
// that many bytes. The bytes are an entry as the client sent it (ledger
// id, entry id, then what this package calls the payload: the rest of the
// entry, which bookie.Storage.AddEntry stores) or a meta-entry (a negative
// entry id: a master key, a fence, an explicit LAC). From version 5 every
// batch written ends with a padding record up to journalAlignmentSize. The
// last log mark of journal i of n is the file "lastMark" (n = 1) or
// "lastMark.<i>" in every ledger directory's "current": the journal file id
// and the offset, 16 bytes. docs/format.md ("Journal") has the bytes; they
// are upstream's, so BookKeeper replays a journal this package wrote and
// Replay reads one BookKeeper wrote (versions 1 to 6).
//
// Beside each file it writes, this package keeps "<hex id>.synced", the
// lengths its fsyncs covered (upstream ignores the file): Replay uses it to
// tell a torn tail from damage.
//
// # Replay and corruption
//
// Replay reads a journal directory from a mark to the end and calls a
// function for every record, with its position. A file's records end at
// its end, at a zero length (upstream's pre-allocated space) or at bytes
// that do not make a record. The rule is the engine WAL's (docs/design.md,
// "Torn tails, corruption and orphans"): where that is below the length a
// completed fsync covered, synced bytes were damaged and Replay fails with
// an error matching ErrCorruption that names the file and the offset;
// where it is at or past it, the rest is a torn tail, the writes of a
// batch no fsync completed, which Replay reports (TornTail) for the caller
// to drop with a WARN. A journal BookKeeper wrote has no synced lengths and
// is read by upstream's rules alone: its records end at the first end
// found, and only malformed records (a negative length, a meta-entry its
// version cannot hold) are refused, as upstream refuses them. The format
// has no checksums: damage that still parses (a changed payload byte) is
// not detected, by upstream either.
package journal

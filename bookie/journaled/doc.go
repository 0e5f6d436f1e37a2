// Package journaled is a bookie's ledger storage behind its journal: an
// add is acknowledged once the journal has made it durable, as a
// BookKeeper bookie acknowledges it (upstream's BookieImpl over its
// LedgerStorage and Journals). It joins package bookie (the storage) and
// package journal (the journal in BookKeeper's format), which know nothing
// of each other but bookie.CheckpointSource.
//
// # Promises
//
// Storage.AddEntry (and AddEntryFrom, SetMasterKey, SetFenced,
// SetExplicitLAC) returns nil only once the journal holds the write
// durably: with journalSyncData (the default) after the fsync that covers
// it, so that neither a crash of the process nor a power loss can lose it;
// with journalSyncData=false (journal.Options.NoSyncData) once it is
// written to the operating system, which a process crash cannot lose and
// a power loss can (upstream's weaker promise); with journalWriteData=false
// (journal.Options.NoWriteData) entries are not journaled at all and are
// durable only at the next checkpoint. AddEntryAsync returns at once with a
// Completion to wait on, which lets one goroutine keep many adds in
// flight. The embedded bookie.Storage's own methods (s.Storage.AddEntry)
// skip the journal: durable only at the storage's next checkpoint.
//
// # Who calls what
//
//	add:        bookie.Storage.AddEntry (write cache)  ->  journal.Set.Add  ->  Completion.Wait
//	checkpoint: each directory: CheckpointSource.NewCheckpoint (journal.Set.CurrentMark)
//	            before its write-cache swap, then writes the cache out; once every
//	            directory has made a checkpoint durable: CheckpointComplete
//	            (journal.Set.SetCheckpointed: lastMark in every ledger directory,
//	            then journal files behind it removed, journalMaxBackups kept)
//	open:       bookie.Open -> journal.Open, replaying every journal from its
//	            lastMark into the storage (below) -> Storage.Checkpoint
//
// The storage gets each add before the journal does, as upstream's bookie
// orders them, so a mark (the end of what the journal has synced) taken
// before a checkpoint's swap covers only writes the checkpoint holds.
// Every checkpoint the storage makes on its own — every flushInterval,
// when a write cache is full, at Close — records the mark it took once
// every ledger directory has made it durable (see bookie.CheckpointSource).
//
// # Replay
//
// Open replays each journal from its last log mark (the greatest of its
// lastMark files) into the storage, by upstream's rules
// (BookieImpl.readJournal), before anything else writes:
//
//   - an entry is added unless the storage already holds it with the same
//     bytes (bookie.Storage.ReplayEntry): a replay is idempotent, and the
//     overlap of a mark with the checkpoint that recorded it is not
//     written twice;
//   - a master key makes its ledger exist (upstream's journal carries one
//     before a ledger's first entry in each run of the bookie; Storage
//     writes one too); a fence and an explicit LAC are applied;
//   - the records of a ledger the storage holds as deleted are skipped,
//     and so are an entry, a fence and an explicit LAC of a ledger the
//     storage does not know (upstream's NoLedgerException: deleted, or
//     never created); an unknown meta-entry is skipped with a warning.
//
// Deletions are not journaled (upstream's are not either). A deleted
// ledger's record in the ledgers index says so until a recorded
// checkpoint covers the deletion (bookie keeps it that long when it has a
// CheckpointSource), so a replay from an older mark skips the ledger
// instead of bringing it back; and a ledger written again after its
// deletion starts its new life only after a checkpoint (Storage forces
// one), so that its old records are all behind the mark.
//
// Replay goes on in read-only mode (the adds were acknowledged). After it
// Open checkpoints, so that the mark moves past what was replayed; if that
// checkpoint fails (a full disk), Open still succeeds: what was replayed
// stays in the write cache, readable, and in the journal, until a
// checkpoint succeeds.
//
// # Failures
//
// A journal that fails a write or an fsync stops for good (a failed fsync
// is never retried): its waiting adds fail, and the storage turns
// read-only with the journal's error as the reason (bookie.Storage.FailWrites),
// which only a restart clears. Upstream's bookie shuts down instead
// (its JournalAliveListener); reads go on here, and a service that runs
// with the read-only mode disabled shuts down as upstream's. A full
// journal disk's errors match journal.ErrNoSpace (vfs.ErrNoSpace).
package journaled

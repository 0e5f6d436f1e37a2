package journaled

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/cockroachdb/errors"
)

// Options configure a Storage.
type Options struct {
	// Storage configures the ledger storage. Its CheckpointSource must be
	// unset: the journals are the source.
	Storage *bookie.Options
	// Journal configures the journals. Its FS defaults to Storage.FS, its
	// LedgerDirectories (where the lastMark files live) to
	// Storage.LedgerDirs, its Logger to Storage.Logger. OnFailure, if
	// set, is called after the storage has turned read-only.
	Journal journal.Options
}

// Storage is the ledger storage with its journals. The embedded
// bookie.Storage serves reads, deletions' effects, checkpoints, garbage
// collection, read-only mode and metrics; the write methods of Storage
// journal what they write. All methods are safe for concurrent use.
type Storage struct {
	*bookie.Storage
	journals *journal.Set
	log      *slog.Logger
	replayed ReplayStats

	// keyed are the ledgers whose master key this run has journaled
	// (upstream's masterKeyCache): a ledger's first write journals its
	// key before anything else of it, so that a replay knows the ledger
	// exists even if no checkpoint wrote it.
	keyedMu sync.RWMutex
	keyed   map[int64]struct{}
}

// source is the storage's CheckpointSource: the journals, once open.
// During the replay (journals not open yet) it has no position, and the
// storage's checkpoints record nothing.
type source struct {
	set atomic.Pointer[journal.Set]
}

func (s *source) NewCheckpoint() bookie.Checkpoint {
	set := s.set.Load()
	if set == nil {
		return nil
	}
	return set.CurrentMark()
}

func (s *source) CheckpointComplete(c bookie.Checkpoint) error {
	return s.set.Load().SetCheckpointed(c.(journal.Checkpoint))
}

// Open opens the ledger storage, then the journals, replaying each into
// the storage from its last log mark (see the package documentation), and
// checkpoints. A journal that cannot be replayed (damage below what an
// fsync covered, the file its mark names missing) fails Open, naming the
// file.
func Open(opts Options) (_ *Storage, err error) {
	if opts.Storage == nil {
		return nil, errors.Wrap(bookie.ErrInvalidArgument, "journaled: no storage options")
	}
	if opts.Storage.CheckpointSource != nil {
		return nil, errors.Wrap(bookie.ErrInvalidArgument, "journaled: Storage.CheckpointSource is set; the journals are the checkpoint source")
	}
	src := &source{}
	sopts := *opts.Storage
	sopts.CheckpointSource = src
	log := sopts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	storage, err := bookie.Open(&sopts)
	if err != nil {
		return nil, err
	}
	s := &Storage{Storage: storage, log: log, keyed: map[int64]struct{}{}}
	defer func() {
		if err != nil {
			// What was replayed is checkpointed, but no mark is recorded:
			// the next open replays it again, harmlessly.
			_ = storage.Close()
		}
	}()

	jopts := opts.Journal
	if jopts.FS == nil {
		jopts.FS = sopts.FS
	}
	if len(jopts.LedgerDirectories) == 0 {
		jopts.LedgerDirectories = sopts.LedgerDirs
	}
	if jopts.Logger == nil {
		jopts.Logger = log
	}
	onFailure := jopts.OnFailure
	jopts.OnFailure = func(dir string, err error) {
		storage.FailWrites("journal " + dir + " failed (restart once it is fixed: a journal does not resume after a failed write or fsync): " + err.Error())
		if onFailure != nil {
			onFailure(dir, err)
		}
	}
	r := NewReplayer(storage, log)
	set, err := journal.Open(jopts, r.Apply)
	if errors.Is(err, journal.ErrMissingJournal) {
		return nil, errors.Wrapf(err, "journaled: replaying the journals: the ledger directories' lastMark names a journal file that "+
			"journalDirectories (%s) does not hold; point journalDirectories at the bookie's journal (BookKeeper's default is /tmp/bk-txn)",
			strings.Join(jopts.JournalDirectories, ","))
	}
	if err != nil {
		return nil, errors.Wrap(err, "journaled: replaying the journals")
	}
	s.journals = set
	s.replayed = r.Stats()
	src.set.Store(set)
	st := s.replayed
	log.Info("journals replayed into the ledger storage", "records", st.Records, "entriesAdded", st.EntriesAdded,
		"entriesHeld", st.EntriesHeld, "metaEntries", st.MetaEntries, "deletedLedgerRecords", st.DeletedLedgerRecords,
		"unknownLedgerRecords", st.UnknownLedgerRecords, "unknownMetaEntries", st.UnknownMetaEntries)
	// As upstream after its replay: a checkpoint, which records the
	// journals' new position.
	if err := storage.Checkpoint(); err != nil {
		log.Warn("the checkpoint after the journal replay failed; what was replayed stays in the write cache and the journals until one succeeds", "err", err)
	}
	return s, nil
}

// Journals returns the storage's journals.
func (s *Storage) Journals() *journal.Set { return s.journals }

// Replayed returns what Open's replay did.
func (s *Storage) Replayed() ReplayStats { return s.replayed }

// Completion is the outcome of an add, to wait on: the storage's refusal
// at once, or the journal's durability (journal.Completion).
type Completion struct {
	err  error
	done chan struct{} // closed; with err
	c    journal.Completion
}

func failed(err error) Completion {
	done := make(chan struct{})
	close(done)
	return Completion{err: err, done: done}
}

// Done is closed once the add is durable or failed.
func (c Completion) Done() <-chan struct{} {
	if c.done != nil {
		return c.done
	}
	return c.c.Done()
}

// Wait waits for the add and returns nil once it is durable (see the
// package documentation for what journalSyncData and journalWriteData
// make of that), or why it failed.
func (c Completion) Wait() error {
	if c.done != nil {
		return c.err
	}
	return c.c.Wait()
}

// Mark returns, once the add is durable, the journal position just past
// its record (journal.Completion.Mark); the zero mark otherwise.
func (c Completion) Mark() journal.LogMark {
	if c.done != nil {
		return journal.LogMark{}
	}
	return c.c.Mark()
}

// AddEntry adds an entry and returns once the journal holds it durably
// (see the package documentation): nil means the add is acknowledged. The
// payload is the entry's bytes after its ledger and entry ids, as
// bookie.Storage.AddEntry takes it; it is copied.
func (s *Storage) AddEntry(ledgerID, entryID int64, payload []byte) error {
	return s.AddEntryAsync(ledgerID, entryID, payload).Wait()
}

// AddEntryAsync adds an entry to the storage (an error there is returned
// in the completion at once, and nothing is journaled), then queues it in
// its ledger's journal, and returns the completion to wait on. The payload
// is copied before AddEntryAsync returns.
func (s *Storage) AddEntryAsync(ledgerID, entryID int64, payload []byte) Completion {
	return s.addEntry(ledgerID, entryID, payload, false)
}

// AddEntryFrom adds an entry of size bytes read from r and returns once
// the journal holds it durably, as AddEntry. The bytes are read once into
// memory the storage keeps (the journal copies them into its batch).
// The ids and the size limit are checked before anything is read (the
// read-only mode after: a refused write is what lets the storage notice
// that a lack of space has cleared); an error reading r is returned
// wrapped, and nothing is added.
func (s *Storage) AddEntryFrom(ledgerID, entryID int64, size int, r io.Reader) error {
	switch {
	case ledgerID < 0 || entryID < 0:
		return errors.Wrapf(bookie.ErrInvalidArgument, "journaled: entry %d of ledger %d: ids are 0 to 2^63-1", entryID, ledgerID)
	case size < 0 || size > s.MaxEntrySize():
		return errors.Wrapf(bookie.ErrInvalidArgument, "journaled: entry %d of ledger %d has %d bytes; the storage takes 0 to %d", entryID, ledgerID, size, s.MaxEntrySize())
	}
	payload := make([]byte, size)
	if _, err := io.ReadFull(r, payload); err != nil {
		return errors.Wrapf(err, "journaled: reading the %d bytes of entry %d of ledger %d", size, entryID, ledgerID)
	}
	return s.addEntry(ledgerID, entryID, payload, true).Wait()
}

func (s *Storage) addEntry(ledgerID, entryID int64, payload []byte, owned bool) Completion {
	if err := s.beforeWrite(ledgerID); err != nil {
		return failed(err)
	}
	var err error
	if owned {
		err = s.Storage.AddEntryOwned(ledgerID, entryID, payload)
	} else {
		err = s.Storage.AddEntry(ledgerID, entryID, payload)
	}
	if err != nil {
		return failed(err)
	}
	s.journalKey(ledgerID)
	return Completion{c: s.journals.Add(ledgerID, entryID, payload)}
}

// SetMasterKey sets a ledger's master key (bookie.Storage.SetMasterKey)
// and returns once the journal holds it durably.
func (s *Storage) SetMasterKey(ledgerID int64, key []byte) error {
	if err := s.beforeWrite(ledgerID); err != nil {
		return err
	}
	if err := s.Storage.SetMasterKey(ledgerID, key); err != nil {
		return err
	}
	c := s.journals.AddMasterKey(ledgerID, key)
	s.setKeyed(ledgerID)
	return c.Wait()
}

// SetFenced fences a ledger (bookie.Storage.SetFenced) and returns once
// the journal holds the fence durably. It reports whether the ledger was
// not fenced yet.
func (s *Storage) SetFenced(ledgerID int64) (bool, error) {
	fenced, err := s.Storage.SetFenced(ledgerID)
	if err != nil {
		return false, err
	}
	s.journalKey(ledgerID)
	return fenced, s.journals.AddFence(ledgerID).Wait()
}

// SetExplicitLAC records a ledger's explicit LAC
// (bookie.Storage.SetExplicitLAC) and returns once the journal holds it
// durably (below journal format version 6 it is not journaled, as
// upstream).
func (s *Storage) SetExplicitLAC(ledgerID int64, lac []byte) error {
	if err := s.Storage.SetExplicitLAC(ledgerID, lac); err != nil {
		return err
	}
	s.journalKey(ledgerID)
	return s.journals.AddExplicitLAC(ledgerID, lac).Wait()
}

// DeleteLedger deletes a ledger (bookie.Storage.DeleteLedger, synced at
// once; not journaled, as upstream's deletions are not).
func (s *Storage) DeleteLedger(ledgerID int64) (bool, error) {
	existed, err := s.Storage.DeleteLedger(ledgerID)
	if err == nil {
		s.keyedMu.Lock()
		delete(s.keyed, ledgerID)
		s.keyedMu.Unlock()
	}
	return existed, err
}

// Close closes the storage (its last checkpoint records the journals'
// position), then the journals.
func (s *Storage) Close() error {
	err := s.Storage.Close()
	return errors.CombineErrors(err, s.journals.Close())
}

func (s *Storage) isKeyed(ledgerID int64) bool {
	s.keyedMu.RLock()
	_, ok := s.keyed[ledgerID]
	s.keyedMu.RUnlock()
	return ok
}

func (s *Storage) setKeyed(ledgerID int64) {
	s.keyedMu.Lock()
	s.keyed[ledgerID] = struct{}{}
	s.keyedMu.Unlock()
}

// beforeWrite runs before a write that may create a ledger. A ledger the
// storage holds as deleted starts a new life with it: first a checkpoint
// covers the deletion and a purge drops the deleted ledger's record, so
// that a replay from a mark before the new life never meets the old
// life's records (they are all behind the mark) and does not take the new
// life's for a deleted ledger's.
func (s *Storage) beforeWrite(ledgerID int64) error {
	if s.isKeyed(ledgerID) {
		return nil
	}
	deleted := func() (bool, error) {
		info, ok, err := s.Storage.LedgerInfo(ledgerID)
		return err == nil && ok && !info.Exists, err
	}
	if d, err := deleted(); err != nil || !d {
		return err
	}
	err := s.Storage.Checkpoint()
	if err == nil {
		err = s.Storage.Purge()
	}
	if err == nil {
		var d bool
		if d, err = deleted(); err == nil && d {
			err = errors.Newf("the checkpoint that covers its deletion is not recorded in the journals")
		}
	}
	return errors.Wrapf(err, "journaled: ledger %d was deleted and cannot start a new life yet", ledgerID)
}

// journalKey journals the ledger's master key, as the storage holds it,
// on the ledger's first write of this run; the record is queued before
// the write's own, in the same journal.
func (s *Storage) journalKey(ledgerID int64) {
	if s.isKeyed(ledgerID) {
		return
	}
	info, _, _ := s.Storage.LedgerInfo(ledgerID)
	// Its completion is the write's: the write's record comes after it.
	s.journals.AddMasterKey(ledgerID, info.MasterKey)
	s.setKeyed(ledgerID)
}

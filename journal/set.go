package journal

import (
	"github.com/cockroachdb/errors"
)

// Set is a bookie's journals, one per journal directory (upstream's
// BookieImpl.journals). Ledger L's records all go to journal L mod n
// (sign-safe, upstream's MathUtils.signSafeMod), so a ledger's records
// stay in order in one journal. All methods are safe for concurrent use.
type Set struct {
	journals []*Journal
}

// Checkpoint is a mark per journal of a Set, in journal order (upstream's
// CheckpointSourceList checkpoint).
type Checkpoint []LogMark

// Open opens the journals of opts and replays each, in directory order,
// from its last log mark (the greatest mark among its lastMark files in the
// ledger directories), calling replay for every record (entries and
// meta-entries, including unknown ones, which upstream skips with a
// warning); a nil replay reads the journals and drops their records, which
// a later checkpoint then forgets. Torn tails are logged as WARNs; damage
// below a completed fsync, or a missing journal file the mark names, fails
// Open. Each journal then starts a new file (upstream never appends to a
// file after a restart) and takes adds.
//
// Once replay has handed the records to the storage, flush the storage and
// checkpoint (CurrentMark, then SetCheckpointed), as upstream's bookie does
// after its replay.
func Open(opts Options, replay func(*Record) error) (*Set, error) {
	opts, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	s := &Set{}
	for i := range opts.JournalDirectories {
		j, err := openJournal(opts, i, replay)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.journals = append(s.journals, j)
	}
	return s, nil
}

// Journals returns the journals, in directory order.
func (s *Set) Journals() []*Journal { return s.journals }

// For returns the journal of a ledger.
func (s *Set) For(ledgerID int64) *Journal {
	n := int64(len(s.journals))
	i := ledgerID % n
	if i < 0 {
		i += n
	}
	return s.journals[i]
}

// Add queues an entry in its ledger's journal; see Journal.Add.
func (s *Set) Add(ledgerID, entryID int64, payload []byte) Completion {
	return s.For(ledgerID).Add(ledgerID, entryID, payload)
}

// AddMasterKey queues a ledger's master key; see Journal.AddMasterKey.
func (s *Set) AddMasterKey(ledgerID int64, key []byte) Completion {
	return s.For(ledgerID).AddMasterKey(ledgerID, key)
}

// AddFence queues a ledger's fencing; see Journal.AddFence.
func (s *Set) AddFence(ledgerID int64) Completion { return s.For(ledgerID).AddFence(ledgerID) }

// AddExplicitLAC queues a ledger's explicit LAC; see Journal.AddExplicitLAC.
func (s *Set) AddExplicitLAC(ledgerID int64, lac []byte) Completion {
	return s.For(ledgerID).AddExplicitLAC(ledgerID, lac)
}

// ForceLedger waits for a ledger's queued adds; see Journal.ForceLedger.
func (s *Set) ForceLedger(ledgerID int64) Completion { return s.For(ledgerID).ForceLedger(ledgerID) }

// CurrentMark returns every journal's mark; take it before flushing the
// storage.
func (s *Set) CurrentMark() Checkpoint {
	c := make(Checkpoint, len(s.journals))
	for i, j := range s.journals {
		c[i] = j.CurrentMark()
	}
	return c
}

// SetCheckpointed records that the storage is durable up to c, which
// CurrentMark returned before the storage flush; see
// Journal.SetCheckpointed. Every journal is tried; the errors are joined.
func (s *Set) SetCheckpointed(c Checkpoint) error {
	if len(c) != len(s.journals) {
		return errors.Wrapf(ErrInvalidArgument, "journal: a checkpoint of %d marks for %d journals", len(c), len(s.journals))
	}
	var errs []error
	for i, j := range s.journals {
		errs = append(errs, j.SetCheckpointed(c[i]))
	}
	return errors.Join(errs...)
}

// Err returns the first journal failure, or nil.
func (s *Set) Err() error {
	for _, j := range s.journals {
		if err := j.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Close closes every journal (see Journal.Close) and joins their errors.
func (s *Set) Close() error {
	var errs []error
	for _, j := range s.journals {
		errs = append(errs, j.Close())
	}
	return errors.Join(errs...)
}

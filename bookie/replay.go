package bookie

import (
	"bytes"

	"github.com/cockroachdb/errors"
)

// Replaying a journal. A bookie acknowledges adds once its journal holds
// them and replays the journal into the storage at start, from the last
// checkpoint it recorded (upstream's BookieImpl.readJournal hands each
// record to the ledger storage). The Replay methods are the storage's side
// of that: they apply what a journal holds before the bookie takes
// writes, and differ from AddEntry, SetMasterKey, SetFenced and
// SetExplicitLAC in two ways:
//
//   - the read-only mode does not refuse them: the writes were
//     acknowledged, and a bookie that starts read-only (a full disk,
//     forceReadOnlyBookie) replays its journal too, as upstream's does;
//   - ReplayEntry does not write again an entry the storage already holds
//     with the same bytes (a checkpoint after the recorded one wrote it),
//     so that a replay is idempotent; an entry it holds with other bytes
//     (written again since) takes the journal's, the later.
//
// Which records to apply is the caller's rule: upstream skips the records
// of deleted ledgers (LedgerInfo says a ledger is deleted by a record
// whose Exists is false; with a CheckpointSource such a record stays until
// the deletion is covered by a recorded checkpoint, see
// DirStorage.purgeableLocked).

// ReplayEntry adds an entry replayed from a journal, unless the storage
// holds it with the same payload already. It reports whether it added
// it. A full write cache waits for room as AddEntry does.
func (s *Storage) ReplayEntry(ledgerID, entryID int64, payload []byte) (added bool, err error) {
	d, err := s.writeDir(ledgerID)
	if err != nil {
		return false, err
	}
	return d.ReplayEntry(ledgerID, entryID, payload)
}

// ReplayMasterKey applies a master key replayed from a journal: the ledger
// exists from now on (a new life if it was deleted: the caller skips
// deleted ledgers first), with SetMasterKey's rules (upstream's: a key of
// zeros, or none, never conflicts; a ledger without a key takes one;
// another key is an error matching ErrWrongMasterKey).
func (s *Storage) ReplayMasterKey(ledgerID int64, key []byte) error {
	d, err := s.writeDir(ledgerID)
	if err != nil {
		return err
	}
	return d.ReplayMasterKey(ledgerID, key)
}

// ReplayFence applies a fence replayed from a journal (ErrNoLedger if the
// ledger does not exist).
func (s *Storage) ReplayFence(ledgerID int64) error {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return err
	}
	return d.ReplayFence(ledgerID)
}

// ReplayExplicitLAC applies an explicit LAC replayed from a journal
// (ErrNoLedger if the ledger does not exist).
func (s *Storage) ReplayExplicitLAC(ledgerID int64, lac []byte) error {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return err
	}
	return d.ReplayExplicitLAC(ledgerID, lac)
}

// ReplayEntry is Storage.ReplayEntry for the directory's ledgers.
func (d *DirStorage) ReplayEntry(ledgerID, entryID int64, payload []byte) (bool, error) {
	// Any error reading it (none there, a damaged entry log) writes the
	// journal's copy: it is what was acknowledged.
	if held, err := d.getEntry(ledgerID, entryID); err == nil && bytes.Equal(held, payload) {
		return false, nil
	}
	start := d.stats.addEntry.Start()
	err := d.addEntry(ledgerID, entryID, payload, false, true)
	d.stats.addEntry.Done(err == nil, start)
	if err != nil {
		return false, errors.Wrapf(err, "bookie: replaying entry %d of ledger %d", entryID, ledgerID)
	}
	return true, nil
}

// ReplayMasterKey is Storage.ReplayMasterKey for the directory's ledgers.
func (d *DirStorage) ReplayMasterKey(ledgerID int64, key []byte) error {
	if err := d.enter("ReplayMasterKey"); err != nil {
		return err
	}
	defer d.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	return d.ledgers.setMasterKey(ledgerID, key)
}

// ReplayFence is Storage.ReplayFence for the directory's ledgers.
func (d *DirStorage) ReplayFence(ledgerID int64) error {
	if err := d.enter("ReplayFence"); err != nil {
		return err
	}
	defer d.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	_, err := d.ledgers.setFenced(ledgerID)
	return err
}

// ReplayExplicitLAC is Storage.ReplayExplicitLAC for the directory's
// ledgers.
func (d *DirStorage) ReplayExplicitLAC(ledgerID int64, lac []byte) error {
	if err := d.enter("ReplayExplicitLAC"); err != nil {
		return err
	}
	defer d.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	return d.ledgers.setExplicitLAC(ledgerID, lac)
}

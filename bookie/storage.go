package bookie

import (
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/cockroachdb/errors"
)

// Storage is a bookie's ledger storage over all its ledger directories
// (upstream's DbLedgerStorage): one DirStorage per directory, and ledger
// L in directory L mod n. It is safe for concurrent use.
type Storage struct {
	opts *resolved
	dirs []*DirStorage
}

// Open opens (creating if needed) the storage of every ledger directory.
// Each directory starts its checkpoint and purge workers.
func Open(opts *Options) (*Storage, error) {
	r, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	s := &Storage{opts: r}
	for i := range r.LedgerDirs {
		d, err := openDirStorage(r, r.LedgerDirs[i], r.IndexDirs[i])
		if err != nil {
			for _, opened := range s.dirs {
				_ = opened.Close()
			}
			return nil, err
		}
		s.dirs = append(s.dirs, d)
	}
	return s, nil
}

// Dirs returns the directories' storages, in configuration order.
func (s *Storage) Dirs() []*DirStorage { return s.dirs }

// Dir returns the storage of ledgerID's directory: ledgerID mod the
// number of directories. A negative ledger id is an error.
func (s *Storage) Dir(ledgerID int64) (*DirStorage, error) {
	if err := checkLedgerID(ledgerID); err != nil {
		return nil, err
	}
	return s.dirs[ledgerID%int64(len(s.dirs))], nil
}

// AddEntry adds an entry; see DirStorage.AddEntry.
func (s *Storage) AddEntry(ledgerID, entryID int64, payload []byte) error {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return err
	}
	return d.AddEntry(ledgerID, entryID, payload)
}

// GetEntry reads an entry, -1 meaning the last one; see
// DirStorage.GetEntry.
func (s *Storage) GetEntry(ledgerID, entryID int64) ([]byte, error) {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return nil, err
	}
	return d.GetEntry(ledgerID, entryID)
}

// GetLastEntry returns a ledger's last entry id and payload; see
// DirStorage.GetLastEntry.
func (s *Storage) GetLastEntry(ledgerID int64) (int64, []byte, error) {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return 0, nil, err
	}
	return d.GetLastEntry(ledgerID)
}

// DeleteLedger deletes a ledger and reports whether it existed; see
// DirStorage.DeleteLedger.
func (s *Storage) DeleteLedger(ledgerID int64) (bool, error) {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return false, err
	}
	return d.DeleteLedger(ledgerID)
}

// LedgerExists reports whether a ledger exists.
func (s *Storage) LedgerExists(ledgerID int64) (bool, error) {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return false, err
	}
	return d.LedgerExists(ledgerID)
}

// SetMasterKey sets a ledger's master key; see DirStorage.SetMasterKey.
func (s *Storage) SetMasterKey(ledgerID int64, key []byte) error {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return err
	}
	return d.SetMasterKey(ledgerID, key)
}

// SetFenced fences a ledger; see DirStorage.SetFenced.
func (s *Storage) SetFenced(ledgerID int64) (bool, error) {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return false, err
	}
	return d.SetFenced(ledgerID)
}

// SetExplicitLAC records a ledger's explicit LAC.
func (s *Storage) SetExplicitLAC(ledgerID int64, lac []byte) error {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return err
	}
	return d.SetExplicitLAC(ledgerID, lac)
}

// LedgerInfo returns what the ledgers index records of a ledger.
func (s *Storage) LedgerInfo(ledgerID int64) (LedgerInfo, bool, error) {
	d, err := s.Dir(ledgerID)
	if err != nil {
		return LedgerInfo{}, false, err
	}
	return d.LedgerInfo(ledgerID)
}

// UpdateEntriesLocations repoints moved entries, each in its ledger's
// directory; see DirStorage.UpdateEntriesLocations.
func (s *Storage) UpdateEntriesLocations(locs []entrylocation.EntryLocation) error {
	byDir := make([][]entrylocation.EntryLocation, len(s.dirs))
	for i, l := range locs {
		if err := checkLedgerID(l.LedgerID); err != nil {
			return errors.Wrapf(err, "bookie: UpdateEntriesLocations element %d", i)
		}
		n := l.LedgerID % int64(len(s.dirs))
		byDir[n] = append(byDir[n], l)
	}
	for i, part := range byDir {
		if len(part) == 0 {
			continue
		}
		if err := s.dirs[i].UpdateEntriesLocations(part); err != nil {
			return err
		}
	}
	return nil
}

// Checkpoint checkpoints every directory; it returns the first error
// after trying them all.
func (s *Storage) Checkpoint() error {
	var errs error
	for _, d := range s.dirs {
		errs = errors.CombineErrors(errs, d.Checkpoint())
	}
	return errs
}

// Purge purges the deleted ledgers of every directory now.
func (s *Storage) Purge() error {
	var errs error
	for _, d := range s.dirs {
		errs = errors.CombineErrors(errs, d.Purge())
	}
	return errs
}

// Metrics returns every directory's statistics, in configuration order.
func (s *Storage) Metrics() []DirMetrics {
	m := make([]DirMetrics, len(s.dirs))
	for i, d := range s.dirs {
		m[i] = d.Metrics()
	}
	return m
}

// Close closes every directory (each checkpoints first); it returns the
// errors of all.
func (s *Storage) Close() error {
	var errs error
	for _, d := range s.dirs {
		errs = errors.CombineErrors(errs, d.Close())
	}
	return errs
}

package bookie

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/cockroachdb/errors"
)

// Storage is a bookie's ledger storage over all its ledger directories
// (upstream's DbLedgerStorage): one DirStorage per directory, ledger L in
// directory L mod n until the directory list is expanded, then in the
// directory whose ledgers index holds it (routing.go). It is safe for
// concurrent use.
type Storage struct {
	opts *resolved
	dirs []*DirStorage
	// routes maps each ledger to its directory under ondisk.RouteRecorded;
	// nil under ondisk.RouteModulo. Read-only once Open returns.
	routes map[int64]int32
	// placed maps the ledgers this Storage placed in another directory
	// than their L mod n one, because that one was full
	// (ReadOnlyOnlyWhenAllDisksFull), to theirs (int); placedCount keeps
	// dirIndex from looking while there is none.
	placed      sync.Map
	placedCount atomic.Int32
	// layoutMu guards layout, the recorded directory layout, which a
	// placement switches to recorded routing.
	layoutMu sync.Mutex
	layout   *ondisk.Layout
	// ro is the storage's writability, shared by its directories.
	ro *readOnlyState
	// stop stops the disk monitor; bg waits for it.
	stop chan struct{}
	bg   sync.WaitGroup
	once sync.Once
}

// Open opens (creating if needed) the storage of every ledger directory,
// once the directory layout guard (layout_guard.go) accepts the list.
// Each directory starts its checkpoint and purge workers. A directory with
// a BookKeeper bookie's unconverted data is refused first, with an error
// matching ErrUnconverted (ondisk.CheckConverted).
func Open(opts *Options) (_ *Storage, err error) {
	r, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	for _, dir := range r.IndexDirs {
		if err := ondisk.CheckNoMigrationInProgress(r.FS, dir); err != nil {
			return nil, err
		}
	}
	// Before anything is read or written: BookKeeper's data is converted
	// first.
	for i := range r.LedgerDirs {
		if err := ondisk.CheckConverted(r.FS, r.LedgerDirs[i], r.IndexDirs[i]); err != nil {
			return nil, err
		}
	}
	plan, err := checkLayout(r)
	if err != nil {
		return nil, err
	}
	if err := plan.writeLayouts(r); err != nil {
		return nil, err
	}
	s := &Storage{opts: r, ro: newReadOnlyState(r.Logger, r.OnReadOnly), stop: make(chan struct{})}
	s.ro.recheck = s.recheckNoSpace
	s.ro.onlyWhenAllFull, s.ro.dirs = r.ReadOnlyOnlyWhenAllDisksFull, len(r.LedgerDirs)
	if r.ForceReadOnly {
		s.ro.run(func() { s.ro.forcedByConfig = true })
	}
	defer func() {
		if err != nil {
			for _, opened := range s.dirs {
				_ = opened.Close()
			}
			plan.undo(r)
		}
	}()
	ckpt := newCheckpointTracker(r.CheckpointSource, len(r.LedgerDirs), r.Logger)
	for i := range r.LedgerDirs {
		d, err := openDirStorage(r, s.ro, ckpt, i, r.LedgerDirs[i], r.IndexDirs[i])
		if err != nil {
			return nil, err
		}
		s.dirs = append(s.dirs, d)
	}
	if plan.layout.Routing == ondisk.RouteModulo {
		if id, in, want, found := misplacedLedger(s.dirs); found {
			if !r.AllowStorageExpansion {
				return nil, errors.Newf("bookie: refusing to open: ledger %d is in %s, but routing by ledger id modulo %d directories puts it in %s: "+
					"the directory list changed before this version recorded it. Restore the old list, or set allowStorageExpansion=true "+
					"to route every ledger to the directory whose ledgers index holds it", id, s.dirs[in].ledgerDir, len(s.dirs), s.dirs[want].ledgerDir)
			}
			if err := plan.recordRouting(r); err != nil {
				return nil, err
			}
		}
	}
	if plan.layout.Routing == ondisk.RouteRecorded {
		if s.routes, err = buildRoutes(s.dirs); err != nil {
			return nil, err
		}
	}
	s.layout = plan.layout
	if plan.note != "" {
		r.Logger.Info(plan.note, "directories", ondisk.FormatPairs(plan.layout.Dirs), "generation", plan.layout.Generation)
	}
	// A disk full already at start makes the storage read-only at once.
	if r.DiskCheckInterval > 0 {
		s.CheckDisks()
		s.bg.Add(1)
		go s.diskMonitorLoop()
	}
	return s, nil
}

// Dirs returns the directories' storages, in configuration order.
func (s *Storage) Dirs() []*DirStorage { return s.dirs }

// Dir returns the storage of ledgerID's directory (see routing.go). A
// negative ledger id is an error.
func (s *Storage) Dir(ledgerID int64) (*DirStorage, error) {
	if err := checkLedgerID(ledgerID); err != nil {
		return nil, err
	}
	return s.dirs[s.dirIndex(ledgerID)], nil
}

// dirIndex returns the position of a (non-negative) ledger's directory.
func (s *Storage) dirIndex(ledgerID int64) int {
	if i, ok := s.routes[ledgerID]; ok {
		return int(i)
	}
	if s.placedCount.Load() > 0 {
		if i, ok := s.placed.Load(ledgerID); ok {
			return i.(int)
		}
	}
	return int(ledgerID % int64(len(s.dirs)))
}

// writeDir returns the directory a write to ledgerID goes to: Dir's,
// unless ReadOnlyOnlyWhenAllDisksFull and that directory is full and does
// not know the ledger: a new ledger then goes to the next directory that
// is not full (placeLedger). A ledger the full directory knows stays there
// (its writes are refused: a ledger's entries stay in one directory).
func (s *Storage) writeDir(ledgerID int64) (*DirStorage, error) {
	d, err := s.Dir(ledgerID)
	if err != nil || !s.opts.ReadOnlyOnlyWhenAllDisksFull || !d.full.Load() {
		return d, err
	}
	if _, known := d.ledgers.get(ledgerID); known {
		return d, nil
	}
	start, n := s.dirIndex(ledgerID), len(s.dirs)
	for k := 1; k < n; k++ {
		if j := (start + k) % n; !s.dirs[j].full.Load() {
			return s.placeLedger(ledgerID, j)
		}
	}
	return d, nil // every directory is full: the storage is read-only
}

// placeLedger records that a new ledger lives in directory j, not its
// modulo one: the routing switches to recorded first (as an expansion
// does: a restart finds the ledger by the ledgers index that holds it),
// so that no ledger is ever where modulo routing would not look for it.
func (s *Storage) placeLedger(ledgerID int64, j int) (*DirStorage, error) {
	s.layoutMu.Lock()
	if s.layout.Routing != ondisk.RouteRecorded {
		next := *s.layout
		next.Generation++
		next.Routing = ondisk.RouteRecorded
		for _, p := range next.Dirs {
			for _, dir := range p.LayoutDirs() {
				if err := ondisk.WriteLayout(s.opts.FS, dir, &next); err != nil {
					s.layoutMu.Unlock()
					return nil, errors.Wrap(err, "bookie: recording the routing before a new ledger goes to another directory than its full one")
				}
			}
		}
		s.layout = &next
		s.opts.Logger.Info("a full directory sends new ledgers to the others: routing by the ledgers indexes from now on",
			"generation", next.Generation)
	}
	s.layoutMu.Unlock()
	i, loaded := s.placed.LoadOrStore(ledgerID, j)
	if !loaded {
		s.placedCount.Add(1)
		s.opts.Logger.Debug("new ledger placed in another directory: its own is full", "ledger", ledgerID, "dir", s.dirs[j].ledgerDir)
	}
	return s.dirs[i.(int)], nil
}

// AddEntry adds an entry; see DirStorage.AddEntry.
func (s *Storage) AddEntry(ledgerID, entryID int64, payload []byte) error {
	d, err := s.writeDir(ledgerID)
	if err != nil {
		return err
	}
	return d.AddEntry(ledgerID, entryID, payload)
}

// AddEntryFrom adds an entry of size bytes read from r; see
// DirStorage.AddEntryFrom.
func (s *Storage) AddEntryFrom(ledgerID, entryID int64, size int, r io.Reader) error {
	d, err := s.writeDir(ledgerID)
	if err != nil {
		return err
	}
	return d.AddEntryFrom(ledgerID, entryID, size, r)
}

// AddEntryOwned adds an entry, taking the payload over; see
// DirStorage.AddEntryOwned.
func (s *Storage) AddEntryOwned(ledgerID, entryID int64, payload []byte) error {
	d, err := s.writeDir(ledgerID)
	if err != nil {
		return err
	}
	return d.AddEntryOwned(ledgerID, entryID, payload)
}

// MaxEntrySize returns the largest payload AddEntry takes: what one half
// of a directory's write cache holds, at most entrylog.MaxPayloadSize.
func (s *Storage) MaxEntrySize() int { return s.opts.maxEntrySize() }

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
	d, err := s.writeDir(ledgerID)
	if err != nil {
		return err
	}
	return d.SetMasterKey(ledgerID, key)
}

// SetFenced fences a ledger; see DirStorage.SetFenced.
func (s *Storage) SetFenced(ledgerID int64) (bool, error) {
	d, err := s.writeDir(ledgerID)
	if err != nil {
		return false, err
	}
	return d.SetFenced(ledgerID)
}

// SetExplicitLAC records a ledger's explicit LAC.
func (s *Storage) SetExplicitLAC(ledgerID int64, lac []byte) error {
	d, err := s.writeDir(ledgerID)
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
		if err := checkEntryID(l.LedgerID, l.EntryID); err != nil {
			return errors.Wrapf(err, "bookie: UpdateEntriesLocations element %d", i)
		}
		n := s.dirIndex(l.LedgerID)
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
	s.once.Do(func() { close(s.stop) })
	s.bg.Wait()
	var errs error
	for _, d := range s.dirs {
		errs = errors.CombineErrors(errs, d.Close())
	}
	return errs
}

package bookie

import (
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// ErrReadOnly: a write to a read-only storage (upstream's
// BookieException.BookieReadOnly... "read-only bookie"). Reads go on.
var ErrReadOnly = errors.New("storage is read-only")

// DefaultDiskCheckInterval is upstream's diskCheckInterval. The
// thresholds' defaults are DefaultDiskUsageThreshold and
// DefaultDiskUsageWarnThreshold, shared with the garbage collector's
// disk-pressure rules.
const DefaultDiskCheckInterval = 10 * time.Second

// readOnlyState is the storage's writability (upstream's
// BookieStateManager plus LedgerDirsMonitor's verdicts), shared by every
// directory. The storage is read-only while it is forced so, while a
// directory is over the usage threshold (until it falls below the
// low-water mark), or after a write error: a lack of space clears once
// the directory is below the low-water mark and its checkpoint and
// indexes are healthy again; any other error (EIO, corruption) stays
// until a restart.
type readOnlyState struct {
	log    *slog.Logger
	notify func(readOnly bool, reason string)
	// recheck lifts the lacks of space that have cleared (the engine
	// recovers by itself, with no call to tell the storage); a refused
	// write runs it, so that the first write after a recovery passes.
	recheck func()

	mu     sync.Mutex
	forced bool
	// forcedByConfig is Options.ForceReadOnly: read-only for good.
	forcedByConfig bool
	// full are the directories over the threshold (path → why). With
	// onlyWhenAllFull they make the storage read-only only when all dirs
	// are full.
	full            map[string]string
	onlyWhenAllFull bool
	dirs            int
	// failed are the directories whose writes failed (path → error).
	failed map[string]error
	// fatal are failures outside the storage that its writes depend on
	// (FailWrites): read-only until a restart.
	fatal []string
	// was is the verdict last logged, so that a transition logs once.
	was    bool
	reason string
	// readOnly mirrors was for the write path's check, without mu.
	readOnly atomic.Bool
}

func newReadOnlyState(log *slog.Logger, notify func(bool, string)) *readOnlyState {
	return &readOnlyState{log: log, notify: notify, full: map[string]string{}, failed: map[string]error{}}
}

// check returns an ErrReadOnly error for op while the storage is
// read-only.
func (s *readOnlyState) check(op string) error {
	if !s.readOnly.Load() {
		return nil
	}
	s.mu.Lock()
	ro, reason, noSpace := s.was, s.reason, len(s.failed) > 0
	s.mu.Unlock()
	if !ro {
		return nil
	}
	if noSpace && s.recheck != nil {
		s.recheck()
		if ro, reason = s.get(); !ro {
			return nil
		}
	}
	return errors.Wrapf(ErrReadOnly, "bookie: %s refused: the storage is read-only (%s)", op, reason)
}

// get reports whether the storage is read-only, and why.
func (s *readOnlyState) get() (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.was, s.reason
}

// updateLocked recomputes the verdict and logs (and notifies) a change.
// s.mu is held; notify runs after it is released by the caller's defer.
func (s *readOnlyState) updateLocked() (changed bool) {
	var reasons []string
	if s.forcedByConfig {
		reasons = append(reasons, "forced read-only by forceReadOnlyBookie=true")
	}
	if s.forced {
		reasons = append(reasons, "forced read-only by an operator")
	}
	if !s.onlyWhenAllFull || len(s.full) == s.dirs {
		for _, p := range sortedKeys(s.full) {
			reasons = append(reasons, s.full[p])
		}
	}
	for _, p := range sortedKeys(s.failed) {
		reasons = append(reasons, fmt.Sprintf("a write to %s failed: %v", p, s.failed[p]))
	}
	reasons = append(reasons, s.fatal...)
	ro := len(reasons) > 0
	reason := strings.Join(reasons, "; ")
	changed = ro != s.was
	s.was, s.reason = ro, reason
	s.readOnly.Store(ro)
	if changed {
		if ro {
			s.log.Warn("storage is read-only: writes are refused, reads go on", "reason", reason)
		} else {
			s.log.Info("storage is writable again")
		}
	}
	return changed
}

// run applies f under s.mu and notifies a change afterwards.
func (s *readOnlyState) run(f func()) {
	s.mu.Lock()
	f()
	changed := s.updateLocked()
	ro, reason := s.was, s.reason
	s.mu.Unlock()
	if changed && s.notify != nil {
		s.notify(ro, reason)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isWriteFailure reports whether a write error says the directory cannot
// take writes: out of space, an I/O error, or the engine's sticky
// background error. Argument errors, a full write cache and Close are
// not.
func isWriteFailure(err error) bool {
	if err == nil || errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrRejected) ||
		errors.Is(err, ErrClosed) || errors.Is(err, ErrReadOnly) || errors.Is(err, ErrWrongMasterKey) ||
		errors.Is(err, ErrNoLedger) || errors.Is(err, ErrNoEntry) {
		return false
	}
	return true
}

// noteWriteError turns the storage read-only after a failed write of
// directory dir (a checkpoint's or a synced index write's).
func (s *readOnlyState) noteWriteError(dir string, err error) {
	if !isWriteFailure(err) {
		return
	}
	s.run(func() {
		if _, ok := s.failed[dir]; !ok || !vfs.IsNoSpace(err) {
			s.failed[dir] = err
		}
	})
}

// recheckNoSpace is the readOnlyState's recheck.
func (s *Storage) recheckNoSpace() {
	for _, d := range s.dirs {
		d.clearNoSpace()
	}
}

// FailWrites turns the storage read-only until it is closed, for a
// failure outside it that its writes depend on: a bookie's journal that
// failed a write or an fsync (it cannot resume in place: a failed fsync is
// never retried). reason says what failed; it is part of ReadOnly's
// reason and of every refused write's error. SetReadOnly(false) does not
// lift it. OnReadOnly is told, as of any change, so that a service with
// the read-only mode disabled shuts down.
func (s *Storage) FailWrites(reason string) {
	s.ro.run(func() {
		if !slices.Contains(s.ro.fatal, reason) {
			s.ro.fatal = append(s.ro.fatal, reason)
		}
	})
}

// ReadOnly reports whether the storage refuses writes, and why (empty
// when writable). The garbage collector's disk-pressure rules use it.
func (s *Storage) ReadOnly() (bool, string) { return s.ro.get() }

// SetReadOnly forces the storage read-only (true) or makes it writable
// (false; PUT /api/v1/bookie/state/readonly). A forced read-only mode
// stays until lifted. Making it writable also lifts the verdicts of
// failed writes (an EIO that stays until then) of the directories whose
// checkpoints and index engines are healthy now: the operator has looked
// at the disk; a directory over the usage threshold stays read-only (the
// disks are checked again first, so that the answer is current), and so
// does a storage whose writes FailWrites stopped. It
// returns the resulting state. With ReadOnlyModeDisabled, forcing
// read-only is an error matching ErrInvalidArgument; so is making a
// storage opened with ForceReadOnly writable (upstream's answer to a
// forceReadOnlyBookie bookie).
func (s *Storage) SetReadOnly(readOnly bool) (bool, string, error) {
	if readOnly && s.opts.ReadOnlyModeDisabled {
		return false, "", errors.Wrap(ErrInvalidArgument, "bookie: read-only mode is disabled (readOnlyModeEnabled=false)")
	}
	if !readOnly && s.opts.ForceReadOnly {
		return true, "", errors.Wrap(ErrInvalidArgument, "bookie: the storage is forced read-only by forceReadOnlyBookie=true and cannot be made writable "+
			"(upstream: \"Bookie is in forceReadOnly mode, cannot transit to writable mode\")")
	}
	if !readOnly {
		s.CheckDisks()
		var healthy []string
		for _, d := range s.dirs {
			if d.IndexError() == nil && d.CheckpointError() == nil {
				healthy = append(healthy, d.ledgerDir)
			}
		}
		s.ro.run(func() {
			for _, dir := range healthy {
				delete(s.ro.failed, dir)
			}
		})
	}
	s.ro.run(func() { s.ro.forced = readOnly })
	ro, reason := s.ro.get()
	return ro, reason, nil
}

// CheckDisks checks the usage of every ledger and index directory now
// (the disk monitor runs it every DiskCheckInterval): a directory over
// DiskUsageThreshold turns the storage read-only; once every directory
// of it is below DiskUsageLwmThreshold, a directory full or out of space
// is writable again, provided its checkpoints and index engines have
// recovered (a failed write other than a lack of space stays).
func (s *Storage) CheckDisks() {
	for _, d := range s.dirs {
		d.checkDisk()
	}
}

// checkDisk is CheckDisks for one directory.
func (d *DirStorage) checkDisk() {
	o := d.opts
	worst, worstPath := vfs.DiskUsage{}, ""
	var statErr error
	for _, p := range []string{d.ledgerDir, d.indexDir} {
		u, err := o.FS.DiskUsage(p)
		if err != nil {
			statErr = errors.Wrapf(err, "bookie: the disk usage of %s", p)
			continue
		}
		if worstPath == "" || u.UsedFraction() > worst.UsedFraction() {
			worst, worstPath = u, p
		}
		if p == d.ledgerDir {
			d.usableBytes.Store(int64(min(u.Usable, 1<<62)))
		}
		if p == d.indexDir {
			d.indexUsableBytes.Store(int64(min(u.Usable, 1<<62)))
		}
	}
	if statErr != nil {
		d.log.Warn("cannot check the directory's disk usage", "err", statErr)
		if worstPath == "" {
			return
		}
	}
	used := worst.UsedFraction()
	ro := d.ro
	over := used > o.DiskUsageThreshold
	below := used < o.DiskUsageLwmThreshold
	if !over && used > o.DiskUsageWarnThreshold {
		d.log.Warn("directory is nearly full", "path", worstPath, "used", used, "warnThreshold", o.DiskUsageWarnThreshold,
			"threshold", o.DiskUsageThreshold)
	}
	if !over {
		d.aboveLwm.Store(!below)
	} else {
		d.aboveLwm.Store(true)
	}
	// A sticky engine error turns the storage read-only even with no
	// write in flight. Checked outside ro.mu: these take the engines'
	// and flushMu locks.
	idxErr := d.IndexError()
	if idxErr != nil {
		ro.noteWriteError(d.ledgerDir, idxErr)
	}
	healthy := below && idxErr == nil && !d.checkpointFailed.Load()
	if over && !d.full.Swap(true) && o.ReadOnlyOnlyWhenAllDisksFull {
		d.log.Warn("directory is full: it takes no new ledger, adds to its ledgers are refused, the other directories go on "+
			"(readOnlyModeOnAnyDiskFullEnabled=false)", "path", worstPath, "used", used, "threshold", o.DiskUsageThreshold)
	} else if below && d.full.Swap(false) && o.ReadOnlyOnlyWhenAllDisksFull {
		d.log.Info("directory is below diskUsageLwmThreshold again: it takes writes", "path", worstPath, "used", used)
	}
	ro.run(func() {
		key := d.ledgerDir
		if over {
			ro.full[key] = fmt.Sprintf("%s is %.1f%% used, over diskUsageThreshold %.1f%%", worstPath, 100*used, 100*o.DiskUsageThreshold)
		} else if below {
			delete(ro.full, key)
		}
		if err, ok := ro.failed[key]; ok && vfs.IsNoSpace(err) && healthy {
			delete(ro.failed, key)
		}
	})
}

// clearNoSpace lifts a lack of space of the directory once its last
// checkpoint succeeded and its index engines take writes again, unless
// the last disk check found it above the low-water mark. It takes no lock
// of the directory's.
func (d *DirStorage) clearNoSpace() {
	if d.aboveLwm.Load() || d.checkpointFailed.Load() || d.IndexError() != nil {
		return
	}
	d.ro.run(func() {
		if err, ok := d.ro.failed[d.ledgerDir]; ok && vfs.IsNoSpace(err) {
			delete(d.ro.failed, d.ledgerDir)
		}
	})
}

// diskMonitorLoop checks the disks every DiskCheckInterval until stop
// (upstream's LedgerDirsMonitor).
func (s *Storage) diskMonitorLoop() {
	defer s.bg.Done()
	t := time.NewTicker(s.opts.DiskCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.CheckDisks()
		}
	}
}

// checkWritable refuses op while the storage is read-only, or, with
// ReadOnlyOnlyWhenAllDisksFull, while this directory is full.
func (d *DirStorage) checkWritable(op string) error {
	if err := d.ro.check(op); err != nil {
		return err
	}
	if d.opts.ReadOnlyOnlyWhenAllDisksFull && d.full.Load() {
		return errors.Wrapf(ErrReadOnly, "bookie: %s refused: directory %s is full (over diskUsageThreshold until below diskUsageLwmThreshold); "+
			"its ledgers take no writes, new ledgers go to the other directories (readOnlyModeOnAnyDiskFullEnabled=false)", op, d.ledgerDir)
	}
	return nil
}

// Full reports whether the last disk check found the directory over
// diskUsageThreshold (and none since found it below
// diskUsageLwmThreshold), and why. With ReadOnlyOnlyWhenAllDisksFull
// (readOnlyModeOnAnyDiskFullEnabled=false) a full directory takes no new
// ledger and refuses adds to its own while the others go on, and the
// storage stays writable until every directory is full; otherwise one full
// directory makes the storage read-only.
func (d *DirStorage) Full() (bool, string) {
	d.ro.mu.Lock()
	defer d.ro.mu.Unlock()
	why, full := d.ro.full[d.ledgerDir]
	return full, why
}

// CanCreateIndexFiles says whether an entry location compaction, which
// writes its new tables before it removes the old, may start: always
// while the directory takes writes; while the storage is read-only (or
// this directory is full, ReadOnlyOnlyWhenAllDisksFull) only if the index
// disk had at least MinUsableSizeForIndexFileCreation bytes usable at the
// last disk check (upstream lets a read-only bookie create index files only
// then). The error says why not.
func (d *DirStorage) CanCreateIndexFiles() error {
	ro, _ := d.ro.get()
	if !ro && !(d.opts.ReadOnlyOnlyWhenAllDisksFull && d.full.Load()) {
		return nil
	}
	if u := d.indexUsableBytes.Load(); u < d.opts.MinUsableSizeForIndexFileCreation {
		return errors.Newf("the storage is read-only and index directory %s has %d bytes usable, less than minUsableSizeForIndexFileCreation (%d): "+
			"a compaction writes its new tables before it removes the old", d.indexDir, u, d.opts.MinUsableSizeForIndexFileCreation)
	}
	return nil
}

// HasSpaceForEntryLog reports whether the directory's ledger disk had at
// least MinUsableSizeForEntryLogCreation bytes usable at the last disk
// check (upstream lets a read-only bookie create entry logs, for
// compaction, only then).
func (d *DirStorage) HasSpaceForEntryLog() bool {
	return d.usableBytes.Load() >= d.opts.MinUsableSizeForEntryLogCreation
}

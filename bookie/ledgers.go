package bookie

import (
	"bytes"
	"slices"
	"sync"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// LedgerInfo is what the ledgers index records of a ledger (its format is
// package ondisk's).
type LedgerInfo = ondisk.LedgerInfo

// ledgerIndex is a directory's ledgers index (upstream's
// LedgerMetadataIndex): which ledgers exist, their fenced flag, master key
// and explicit LAC, and the state of their deletion. It lives in its own
// lsm DB at <indexDir>/current/ledgers, and in memory: every record is
// loaded at open, reads never touch the DB.
//
// Creations and changes are written at the next checkpoint (flush),
// before the locations of that checkpoint, so that no location outlives a
// crash without its ledger. Deletions are written at once, synced: a
// deleted ledger never comes back, whatever happens before the purge.
type ledgerIndex struct {
	db   *lsm.DB
	path string

	mu      sync.RWMutex
	ledgers map[int64]*LedgerInfo
	// dirty are the ledgers changed since the last flush.
	dirty map[int64]struct{}
	// existsOnDisk are the ledgers whose record on disk says they exist.
	existsOnDisk map[int64]bool
	// position returns the entry log's current position (nil: 0). A ledger
	// that has no record (new, or deleted and fully purged) takes it as its
	// floor when it is created: its entries reach the log only at a later
	// checkpoint, so any earlier record with its id belongs to an earlier
	// life, which a rebuild must not index again and GC may reclaim.
	position func() int64
}

// openLedgerIndex opens (creating) the ledgers index at path and loads it.
func openLedgerIndex(path string, opts *lsm.Options) (*ledgerIndex, error) {
	db, err := lsm.Open(path, opts)
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: opening the ledgers index %s", path)
	}
	li := &ledgerIndex{db: db, path: path, ledgers: map[int64]*LedgerInfo{}, dirty: map[int64]struct{}{}, existsOnDisk: map[int64]bool{}}
	if err := li.load(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return li, nil
}

// load reads every record.
func (li *ledgerIndex) load() error {
	return ondisk.ScanLedgers(li.db, li.path, func(id int64, info ondisk.LedgerInfo) {
		li.ledgers[id] = &info
		li.existsOnDisk[id] = info.Exists
	})
}

// get returns a copy of a ledger's record.
func (li *ledgerIndex) get(ledgerID int64) (LedgerInfo, bool) {
	li.mu.RLock()
	defer li.mu.RUnlock()
	info, ok := li.ledgers[ledgerID]
	if !ok {
		return LedgerInfo{}, false
	}
	return info.Clone(), true
}

// state returns whether a ledger exists and whether the index may still
// hold locations of an earlier life of it (then its locations must not be
// read). It copies nothing.
func (li *ledgerIndex) state(ledgerID int64) (exists, purgePending bool) {
	li.mu.RLock()
	info, ok := li.ledgers[ledgerID]
	if ok {
		exists, purgePending = info.Exists, info.PurgePending
	}
	li.mu.RUnlock()
	return exists, purgePending
}

// ensure makes a ledger exist (a ledger deleted and written again starts
// a new life: not fenced, no key, no explicit LAC).
func (li *ledgerIndex) ensure(ledgerID int64) {
	li.mu.RLock()
	info, ok := li.ledgers[ledgerID]
	exists := ok && info.Exists
	li.mu.RUnlock()
	if exists {
		return
	}
	li.mu.Lock()
	defer li.mu.Unlock()
	li.ensureLocked(ledgerID)
}

func (li *ledgerIndex) ensureLocked(ledgerID int64) *LedgerInfo {
	info, ok := li.ledgers[ledgerID]
	if !ok {
		info = &LedgerInfo{}
		if li.position != nil {
			info.Floor = li.position()
		}
		li.ledgers[ledgerID] = info
	}
	if !info.Exists {
		*info = LedgerInfo{Exists: true, PurgePending: info.PurgePending, Floor: info.Floor}
		li.dirty[ledgerID] = struct{}{}
	}
	return info
}

// setMasterKey sets a ledger's master key, creating the ledger, with
// upstream's rules (LedgerMetadataIndex.setMasterKey): a key of zeros
// (or an empty one) is no key, so a ledger without one takes any key, and
// a key of zeros given for a ledger with a key changes nothing; another
// key for a ledger with a key is an error.
func (li *ledgerIndex) setMasterKey(ledgerID int64, key []byte) error {
	li.mu.Lock()
	defer li.mu.Unlock()
	info := li.ensureLocked(ledgerID)
	switch {
	case bytes.Equal(info.MasterKey, key):
		return nil
	case allZeros(info.MasterKey):
		info.MasterKey = slices.Clone(key)
		li.dirty[ledgerID] = struct{}{}
		return nil
	case allZeros(key):
		return nil
	}
	return errors.Wrapf(ErrWrongMasterKey, "bookie: ledger %d has another master key", ledgerID)
}

// allZeros reports whether b holds only zero bytes (an empty b does).
func allZeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// setFenced fences an existing ledger and reports whether it was not
// fenced yet.
func (li *ledgerIndex) setFenced(ledgerID int64) (bool, error) {
	li.mu.Lock()
	defer li.mu.Unlock()
	info, ok := li.ledgers[ledgerID]
	if !ok || !info.Exists {
		return false, noLedger(ledgerID)
	}
	if info.Fenced {
		return false, nil
	}
	info.Fenced = true
	li.dirty[ledgerID] = struct{}{}
	return true, nil
}

// setExplicitLAC records an existing ledger's explicit LAC.
func (li *ledgerIndex) setExplicitLAC(ledgerID int64, lac []byte) error {
	li.mu.Lock()
	defer li.mu.Unlock()
	info, ok := li.ledgers[ledgerID]
	if !ok || !info.Exists {
		return noLedger(ledgerID)
	}
	info.ExplicitLAC = append([]byte{}, lac...)
	li.dirty[ledgerID] = struct{}{}
	return nil
}

// delete marks a ledger deleted, pending the purge of its locations, and
// writes that at once (synced). It reports whether the ledger existed.
func (li *ledgerIndex) delete(ledgerID int64) (bool, error) {
	li.mu.Lock()
	defer li.mu.Unlock()
	old, had := li.ledgers[ledgerID]
	existed := had && old.Exists
	info := &LedgerInfo{PurgePending: true}
	if had {
		info.Floor = old.Floor
	}
	var b lsm.Batch
	b.Set(ondisk.LedgerKey(ledgerID), ondisk.EncodeLedgerInfo(info))
	if err := li.db.Apply(&b, lsm.Sync); err != nil {
		return false, errors.Wrapf(err, "bookie: recording the deletion of ledger %d", ledgerID)
	}
	li.ledgers[ledgerID] = info
	delete(li.dirty, ledgerID)
	li.existsOnDisk[ledgerID] = false
	return existed, nil
}

// flush writes the ledgers changed since the last flush in one synced
// batch. On failure they stay dirty for the next one.
func (li *ledgerIndex) flush() error {
	li.mu.Lock()
	defer li.mu.Unlock()
	if len(li.dirty) == 0 {
		return nil
	}
	var b lsm.Batch
	for id := range li.dirty {
		if info, ok := li.ledgers[id]; ok {
			b.Set(ondisk.LedgerKey(id), ondisk.EncodeLedgerInfo(info))
		}
	}
	if err := li.db.Apply(&b, lsm.Sync); err != nil {
		return errors.Wrapf(err, "bookie: flushing %d ledgers to the ledgers index", len(li.dirty))
	}
	for id := range li.dirty {
		if info, ok := li.ledgers[id]; ok {
			li.existsOnDisk[id] = info.Exists
		}
	}
	clear(li.dirty)
	return nil
}

// pendingPurge returns the ledgers whose old locations await a purge.
func (li *ledgerIndex) pendingPurge() []int64 {
	li.mu.RLock()
	defer li.mu.RUnlock()
	var ids []int64
	for id, info := range li.ledgers {
		if info.PurgePending {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// anyPurgePending reports whether one of the ledgers awaits a purge.
func (li *ledgerIndex) anyPurgePending(ledgerIDs []int64) bool {
	li.mu.RLock()
	defer li.mu.RUnlock()
	for _, id := range ledgerIDs {
		if info, ok := li.ledgers[id]; ok && info.PurgePending {
			return true
		}
	}
	return false
}

// purged records that the locations of ledgers were purged: a deleted
// ledger's record goes; a ledger written again since it was deleted
// starts its life at floor, the entry-log position at the purge (no
// record of its new life is below it). The new life reaches the disk no
// earlier than it would have without the purge: at the next checkpoint,
// if it was not written yet.
func (li *ledgerIndex) purged(ledgerIDs []int64, floor int64) error {
	li.mu.Lock()
	defer li.mu.Unlock()
	var b lsm.Batch
	for _, id := range ledgerIDs {
		info, ok := li.ledgers[id]
		if !ok || !info.PurgePending {
			continue
		}
		if info.Exists && li.existsOnDisk[id] {
			next := info.Clone()
			next.PurgePending, next.Floor = false, floor
			b.Set(ondisk.LedgerKey(id), ondisk.EncodeLedgerInfo(&next))
		} else {
			// Deleted, or its new life not yet written: on disk the
			// ledger is gone; the next checkpoint writes its new life
			// (with its floor), as it writes any new ledger.
			b.Delete(ondisk.LedgerKey(id))
		}
	}
	if b.Empty() {
		return nil
	}
	if err := li.db.Apply(&b, lsm.Sync); err != nil {
		return errors.Wrapf(err, "bookie: recording the purge of %d ledgers", len(ledgerIDs))
	}
	for _, id := range ledgerIDs {
		info, ok := li.ledgers[id]
		if !ok || !info.PurgePending {
			continue
		}
		if info.Exists {
			info.PurgePending, info.Floor = false, floor
			if li.existsOnDisk[id] {
				delete(li.dirty, id) // written above
			}
		} else {
			delete(li.ledgers, id)
			delete(li.dirty, id)
			delete(li.existsOnDisk, id)
		}
	}
	return nil
}

// counts returns the ledgers that exist and those awaiting a purge.
func (li *ledgerIndex) counts() (existing, pending int64) {
	li.mu.RLock()
	defer li.mu.RUnlock()
	for _, info := range li.ledgers {
		if info.Exists {
			existing++
		}
		if info.PurgePending {
			pending++
		}
	}
	return existing, pending
}

func (li *ledgerIndex) close() error {
	return errors.Wrapf(li.db.Close(), "bookie: closing the ledgers index %s", li.path)
}

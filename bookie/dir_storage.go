package bookie

import (
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// DirStorage is the storage of one ledger directory (upstream's
// SingleDirectoryDbLedgerStorage): its entry logs, write caches, read
// cache, entry location index and ledgers index. See the package
// documentation for the write and read paths.
type DirStorage struct {
	opts      *resolved
	ledgerDir string // <ledger directory>/current
	indexDir  string // <index directory>/current
	log       *slog.Logger

	entryLog  *entrylog.Logger
	locations *entrylocation.Index
	ledgers   *ledgerIndex
	readCache *readCache
	stats     *dirStats
	gc        *gcState
	// ro is the storage's writability; usableBytes is the ledger disk's
	// usable space at the last disk check.
	ro          *readOnlyState
	usableBytes atomic.Int64
	// aboveLwm: the last disk check found the directory at or above the
	// low-water mark (a lack of space does not clear then).
	aboveLwm atomic.Bool
	// full: the last disk check found the directory over the threshold
	// (and none found it below the low-water mark since).
	full atomic.Bool
	// indexUsableBytes is the index disk's usable space at the last
	// disk check.
	indexUsableBytes atomic.Int64
	// checkpointFailed: the last checkpoint failed (CheckpointError
	// without flushMu, for the write path).
	checkpointFailed atomic.Bool

	// cacheMu guards which write cache is being filled and which is
	// being flushed (a checkpoint swaps them) and roomCh. Lock order:
	// flushMu, then cacheMu, then a cache's own mu.
	cacheMu    sync.RWMutex
	writeCache *writeCache
	flushCache *writeCache
	// roomCh is closed (and replaced) when the write cache is swapped
	// for an empty one: writers waiting for room try again.
	roomCh chan struct{}

	// flushMu serializes checkpoints and purges: a purge never runs while
	// a checkpoint writes locations, so none of a deleted ledger's
	// locations lands after its purge.
	flushMu sync.Mutex
	// pending is the failed checkpoint of flushCache, resumed by the
	// next one; failures counts the checkpoints that failed in a row and
	// lastErr is the last one's error. Guarded by flushMu.
	pending  *pendingCheckpoint
	failures int
	lastErr  error
	// retryAt is when the worker may retry a failed checkpoint (Unix
	// nanoseconds; 0: at once).
	retryAt atomic.Int64

	// flushReq and purgeReq wake the background workers; stop stops them.
	flushReq chan struct{}
	purgeReq chan struct{}
	stop     chan struct{}
	bg       sync.WaitGroup

	// closeMu is read-held by every call for its length; Close
	// write-holds it to wait for them. closing is set first thing in
	// Close, before stop is closed.
	closeMu sync.RWMutex
	closed  bool
	closing atomic.Bool

	// ckpt reports the checkpoints to the storage's CheckpointSource (nil
	// without one); index is the directory's position among the storage's.
	ckpt  *checkpointTracker
	index int
	// deletedAt maps each ledger deleted since the open to the number of
	// the last checkpoint taken then (checkpointTracker.current): until a
	// checkpoint taken after it is reported complete, the ledger's record
	// stays (see purgeableLocked). Only with a CheckpointSource.
	deletedMu sync.Mutex
	deletedAt map[int64]uint64
	// held are the deleted ledgers whose locations a purge removed while
	// their record stays (int64 → struct{}): the garbage collector takes
	// them for dead. heldEpoch counts the ledgers added to it (the
	// collector recomputes the logs' live ledgers when it moves).
	held      sync.Map
	heldEpoch atomic.Int64

	// hooks are test hooks; nil in production.
	hooks atomic.Pointer[testHooks]
}

// testHooks let tests stop or fail a checkpoint between its steps.
type testHooks struct {
	// afterEntryLogFlush runs once the entry log is synced, before the
	// index is written; an error fails the checkpoint.
	afterEntryLogFlush func() error
	// gcStep runs at each step of a compaction (gcStep* constants); an
	// error stops it there.
	gcStep func(step string) error
}

// openDirStorage opens the storage of ledger directory ledgerDir with its
// indexes in indexDir (the directories as configured; "current" is
// added).
func openDirStorage(opts *resolved, ro *readOnlyState, ckpt *checkpointTracker, index int, ledgerDir, indexDir string) (_ *DirStorage, err error) {
	d := &DirStorage{
		opts:      opts,
		ro:        ro,
		ckpt:      ckpt,
		index:     index,
		deletedAt: map[int64]uint64{},
		ledgerDir: filepath.Join(ledgerDir, "current"),
		indexDir:  filepath.Join(indexDir, "current"),
		readCache: newReadCache(opts.readCacheSize()),
		stats:     newDirStats(opts.EnableStatistics, opts.LatencyRollover),
		gc:        newGCState(opts.LatencyRollover),
		roomCh:    make(chan struct{}),
		flushReq:  make(chan struct{}, 1),
		purgeReq:  make(chan struct{}, 1),
		stop:      make(chan struct{}),
	}
	d.log = opts.Logger.With("ledgerDir", d.ledgerDir)
	d.usableBytes.Store(1 << 62) // until the first disk check
	d.indexUsableBytes.Store(1 << 62)
	half := opts.writeCacheHalf()
	d.writeCache, d.flushCache = newWriteCache(half), newWriteCache(half)

	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				_ = closers[i]()
			}
		}
	}()
	d.entryLog, err = entrylog.Open(d.ledgerDir, &entrylog.Options{FS: opts.FS, LogSizeLimit: opts.LogSizeLimit,
		FlushIntervalBytes: opts.FlushEntryLogBytes, Logger: opts.Logger})
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: opening the entry logs of %s", d.ledgerDir)
	}
	closers = append(closers, d.entryLog.Close)
	ledgersOpts := opts.ledgersOpts
	d.ledgers, err = openLedgerIndex(filepath.Join(d.indexDir, "ledgers"), &ledgersOpts)
	if err != nil {
		return nil, err
	}
	closers = append(closers, d.ledgers.close)
	d.ledgers.position = d.entryLog.Position
	indexOpts := opts.indexOpts
	locPath := filepath.Join(d.indexDir, "locations")
	d.locations, err = entrylocation.Open(locPath, &indexOpts)
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: opening the entry location index %s", locPath)
	}
	closers = append(closers, d.locations.Close)

	// The index's deletion marks live in memory: mark again the ledgers
	// whose purge did not happen before the last shutdown.
	pending := d.ledgers.pendingPurge()
	for _, id := range pending {
		if err := d.locations.Delete(id); err != nil {
			return nil, err
		}
	}
	existing, _ := d.ledgers.counts()
	d.log.Info("ledger directory open", "indexDir", d.indexDir, "ledgers", existing, "pendingPurge", len(pending),
		"writeCacheBytes", 2*half, "readCacheBytes", opts.readCacheSize())

	// A compaction a crash interrupted is finished before serving. If
	// that fails the storage still opens: every entry is readable at its
	// old or new copy; the marker stays for the next open.
	if err := d.recoverCompaction(); err != nil {
		d.log.Error("finishing an interrupted entry-log compaction failed; the next open retries", "err", err)
	}

	d.bg.Add(3)
	go d.flushLoop()
	go d.purgeLoop()
	go d.gcLoop()
	if len(pending) > 0 {
		d.requestPurge()
	}
	return d, nil
}

// LedgerDir returns <ledger directory>/current, where the entry logs are.
func (d *DirStorage) LedgerDir() string { return d.ledgerDir }

// IndexDir returns <index directory>/current, where the indexes are.
func (d *DirStorage) IndexDir() string { return d.indexDir }

// LocationIndex returns the directory's entry location index (for the
// admin API's compactions and metrics). It belongs to the DirStorage:
// do not close it.
func (d *DirStorage) LocationIndex() *entrylocation.Index { return d.locations }

// IndexError returns why an index of the directory refuses writes, or
// nil: the location index's engine error first, then the ledgers
// index's (lsm.DB.BackgroundError). errors.Is(err, lsm.ErrNoSpace) is a
// full disk the engine is retrying; anything else needs a restart.
func (d *DirStorage) IndexError() error {
	if err := d.locations.DB().BackgroundError(); err != nil {
		return errors.Wrapf(err, "bookie: entry location index %s", d.locations.Path())
	}
	return errors.Wrapf(d.ledgers.db.BackgroundError(), "bookie: ledgers index of %s", d.indexDir)
}

// enter starts a call: it fails after Close, and otherwise holds Close off
// until exit.
func (d *DirStorage) enter(op string) error {
	d.closeMu.RLock()
	if d.closed {
		d.closeMu.RUnlock()
		return errors.Wrapf(ErrClosed, "bookie: %s", op)
	}
	return nil
}

func (d *DirStorage) exit() { d.closeMu.RUnlock() }

// AddEntry adds an entry to the write cache, creating its ledger if
// needed (or starting a new life of a deleted one). It is durable after
// the next checkpoint. When the write cache is full it triggers a
// checkpoint and waits for room up to MaxThrottleTime, then fails with
// ErrRejected. Ledger and entry ids are 0 to MaxInt64 (a negative one is
// an error matching ErrInvalidArgument); a second add of an entry
// replaces it.
func (d *DirStorage) AddEntry(ledgerID, entryID int64, payload []byte) error {
	start := d.stats.addEntry.Start()
	err := d.addEntry(ledgerID, entryID, payload, false, false)
	d.stats.addEntry.Done(err == nil, start)
	return err
}

// AddEntryFrom adds an entry of size bytes read from r, as AddEntry adds
// one, reading it into the memory the write cache keeps: an entry too
// large for the cache's chunks is not copied again, so a caller streaming
// a body from the network holds one copy of it, not two. The arguments
// are checked before anything is read; an error reading r is returned
// wrapped, and nothing is added.
func (d *DirStorage) AddEntryFrom(ledgerID, entryID int64, size int, r io.Reader) error {
	if err := d.checkAdd(ledgerID, entryID, size); err != nil {
		return err
	}
	// Read outside enter: a slow sender must not hold Close off.
	payload := make([]byte, size)
	if _, err := io.ReadFull(r, payload); err != nil {
		return errors.Wrapf(err, "bookie: reading the %d bytes of entry %d of ledger %d", size, entryID, ledgerID)
	}
	start := d.stats.addEntry.Start()
	err := d.addEntry(ledgerID, entryID, payload, true, false)
	d.stats.addEntry.Done(err == nil, start)
	return err
}

// AddEntryOwned adds an entry as AddEntry does, taking the payload over:
// the storage may keep it as it is instead of copying it (an entry too
// large for the write cache's chunks), so the caller must not change it
// afterwards; reading it stays safe (a journal copying it, say).
func (d *DirStorage) AddEntryOwned(ledgerID, entryID int64, payload []byte) error {
	start := d.stats.addEntry.Start()
	err := d.addEntry(ledgerID, entryID, payload, true, false)
	d.stats.addEntry.Done(err == nil, start)
	return err
}

// checkAdd checks an add's arguments and that the storage takes writes.
func (d *DirStorage) checkAdd(ledgerID, entryID int64, size int) error {
	if err := d.enter("AddEntry"); err != nil {
		return err
	}
	defer d.exit()
	return d.checkAddEntered(ledgerID, entryID, size, false)
}

// checkAddEntered is checkAdd between enter and exit; a replay is not
// refused by the read-only mode.
func (d *DirStorage) checkAddEntered(ledgerID, entryID int64, size int, replay bool) error {
	if !replay {
		if err := d.checkWritable("AddEntry"); err != nil {
			return err
		}
	}
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	if err := checkEntryID(ledgerID, entryID); err != nil {
		return err
	}
	if size < 0 {
		return errors.Wrapf(ErrInvalidArgument, "bookie: entry %d of ledger %d has a negative size %d", entryID, ledgerID, size)
	}
	if maxSize := d.opts.maxEntrySize(); size > maxSize {
		return errors.Wrapf(ErrInvalidArgument, "bookie: entry %d of ledger %d has %d bytes, more than the %d a write cache can hold",
			entryID, ledgerID, size, maxSize)
	}
	return nil
}

// addEntry adds an entry; owned says the cache may keep payload itself;
// replay, that it comes from a journal's replay (see ReplayEntry).
func (d *DirStorage) addEntry(ledgerID, entryID int64, payload []byte, owned, replay bool) error {
	if err := d.enter("AddEntry"); err != nil {
		return err
	}
	defer d.exit()
	if err := d.checkAddEntered(ledgerID, entryID, len(payload), replay); err != nil {
		return err
	}
	d.ledgers.ensure(ledgerID)

	var throttleStart, deadline time.Time
	var timer *time.Timer
	for {
		d.cacheMu.RLock()
		var ok bool
		if owned {
			ok = d.writeCache.putOwned(ledgerID, entryID, payload)
		} else {
			ok = d.writeCache.put(ledgerID, entryID, payload)
		}
		room := d.roomCh
		d.cacheMu.RUnlock()
		if ok {
			if timer != nil {
				timer.Stop()
				d.stats.throttledWrite.Done(true, throttleStart)
			}
			return nil
		}
		d.requestFlush()
		now := time.Now()
		if timer == nil {
			throttleStart, deadline = now, now.Add(d.opts.MaxThrottleTime)
			timer = time.NewTimer(max(d.opts.MaxThrottleTime, 0))
		}
		if !now.Before(deadline) {
			d.stats.throttledWrite.Done(false, throttleStart)
			d.stats.rejectedWrites.Add(1)
			return errors.Wrapf(ErrRejected, "bookie: entry %d of ledger %d: no room in the write cache after %s", entryID, ledgerID, d.opts.MaxThrottleTime)
		}
		select {
		case <-room:
		case <-timer.C:
		case <-d.stop:
			timer.Stop()
			return errors.Wrapf(ErrClosed, "bookie: AddEntry: closing while waiting for room")
		}
	}
}

// DeleteLedger deletes a ledger: its entries leave the caches at once,
// the deletion is recorded (synced) in the ledgers index, and its
// locations are purged from the index after the next checkpoint. It
// reports whether the ledger existed; deleting a ledger that does not
// exist purges whatever locations the index holds for it all the same.
// It goes on while the storage is read-only.
func (d *DirStorage) DeleteLedger(ledgerID int64) (bool, error) {
	if err := d.enter("DeleteLedger"); err != nil {
		return false, err
	}
	defer d.exit()
	// Not refused by the read-only mode: deleting ledgers is how a full
	// disk gets space back (upstream's garbage collector deletes ledgers
	// on a read-only bookie too). A failed deletion turns the storage
	// read-only like any failed write.
	if err := checkLedgerID(ledgerID); err != nil {
		return false, err
	}
	// The write caches first: the two cache objects only swap roles, so
	// this reaches every cached entry, whatever a checkpoint does.
	d.cacheMu.RLock()
	caches := [2]*writeCache{d.writeCache, d.flushCache}
	d.cacheMu.RUnlock()
	for _, c := range caches {
		c.deleteLedger(ledgerID)
	}
	// Then the index's mark, before the ledgers index: a purge that sees
	// the ledger pending also finds it marked.
	if err := d.locations.Delete(ledgerID); err != nil {
		d.ro.noteWriteError(d.ledgerDir, err)
		return false, err
	}
	d.readCache.deleteLedger(ledgerID)
	// Under deletedMu, so that no purge sees the deletion without its
	// number, which is taken after it.
	d.deletedMu.Lock()
	existed, err := d.ledgers.delete(ledgerID)
	if err == nil && d.ckpt != nil {
		d.deletedAt[ledgerID] = d.ckpt.current()
	}
	d.deletedMu.Unlock()
	if err != nil {
		d.ro.noteWriteError(d.ledgerDir, err)
		return false, err
	}
	d.log.Info("deleted ledger; its locations go after the next checkpoint", "ledgerId", ledgerID, "existed", existed)
	return existed, nil
}

// LedgerExists reports whether a ledger exists (was written to, or given
// a master key, and not deleted since).
func (d *DirStorage) LedgerExists(ledgerID int64) (bool, error) {
	if err := d.enter("LedgerExists"); err != nil {
		return false, err
	}
	defer d.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return false, err
	}
	exists, _ := d.ledgers.state(ledgerID)
	return exists, nil
}

// LedgerInfo returns what the ledgers index records of a ledger, if it
// has a record (an existing ledger, or a deleted one not yet purged).
func (d *DirStorage) LedgerInfo(ledgerID int64) (LedgerInfo, bool, error) {
	if err := d.enter("LedgerInfo"); err != nil {
		return LedgerInfo{}, false, err
	}
	defer d.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return LedgerInfo{}, false, err
	}
	info, ok := d.ledgers.get(ledgerID)
	return info, ok, nil
}

// SetMasterKey sets a ledger's master key, creating the ledger; a ledger
// that has another key already is an error matching ErrWrongMasterKey. As
// upstream, a key of zeros (or an empty key) is no key: a ledger whose key
// is one takes any other, and one given for a ledger with a key changes
// nothing. Written at the next checkpoint.
func (d *DirStorage) SetMasterKey(ledgerID int64, key []byte) error {
	if err := d.enter("SetMasterKey"); err != nil {
		return err
	}
	defer d.exit()
	if err := d.checkWritable("SetMasterKey"); err != nil {
		return err
	}
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	return d.ledgers.setMasterKey(ledgerID, key)
}

// SetFenced fences a ledger and reports whether it was not fenced yet.
// Written at the next checkpoint.
func (d *DirStorage) SetFenced(ledgerID int64) (bool, error) {
	if err := d.enter("SetFenced"); err != nil {
		return false, err
	}
	defer d.exit()
	if err := d.checkWritable("SetFenced"); err != nil {
		return false, err
	}
	if err := checkLedgerID(ledgerID); err != nil {
		return false, err
	}
	return d.ledgers.setFenced(ledgerID)
}

// SetExplicitLAC records a ledger's explicit LAC (opaque bytes). Written
// at the next checkpoint.
func (d *DirStorage) SetExplicitLAC(ledgerID int64, lac []byte) error {
	if err := d.enter("SetExplicitLAC"); err != nil {
		return err
	}
	defer d.exit()
	if err := d.checkWritable("SetExplicitLAC"); err != nil {
		return err
	}
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	return d.ledgers.setExplicitLAC(ledgerID, lac)
}

// UpdateEntriesLocations repoints entries that entry-log compaction
// copied elsewhere: it waits for a checkpoint in progress, then writes the
// locations in one synced batch (in chunks of the index's MaxBatchOps).
// The entries must already be durable at their new locations. A negative
// ledger or entry id is an error matching ErrInvalidArgument, and nothing
// is written (the index itself takes negative entry ids, as upstream's).
func (d *DirStorage) UpdateEntriesLocations(locs []entrylocation.EntryLocation) error {
	if err := d.enter("UpdateEntriesLocations"); err != nil {
		return err
	}
	defer d.exit()
	for i, l := range locs {
		if err := checkLedgerID(l.LedgerID); err != nil {
			return errors.Wrapf(err, "bookie: UpdateEntriesLocations element %d", i)
		}
		if err := checkEntryID(l.LedgerID, l.EntryID); err != nil {
			return errors.Wrapf(err, "bookie: UpdateEntriesLocations element %d", i)
		}
	}
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	if err := d.locations.UpdateLocations(locs); err != nil {
		return err
	}
	entries := make([]cachedEntry, len(locs))
	for i, l := range locs {
		entries[i] = cachedEntry{ledgerID: l.LedgerID, entryID: l.EntryID}
	}
	d.readCache.invalidate(entries)
	return nil
}

// Close stops the background work, waits for the calls in progress,
// checkpoints what the write caches hold, purges the deleted ledgers, and
// closes the entry logs and indexes. Later calls fail with ErrClosed.
func (d *DirStorage) Close() error {
	if !d.shutdown() {
		return errors.Wrap(ErrClosed, "bookie: Close")
	}

	err := d.checkpoint()
	// A full disk may be recovering (the index engine retries with
	// backoff): give it up to CheckpointRetryMaxInterval.
	deadline := time.Now().Add(d.opts.CheckpointRetryMaxInterval)
	for err != nil && vfs.IsNoSpace(err) && time.Now().Before(deadline) {
		time.Sleep(max(min(time.Until(time.Unix(0, d.retryAt.Load())), time.Until(deadline)), time.Millisecond))
		err = d.checkpoint()
	}
	if err == nil {
		d.flushMu.Lock()
		err = d.purgeLocked()
		d.flushMu.Unlock()
	}
	if err != nil {
		_, inWrite := d.writeCache.sizeAndCount()
		_, inFlush := d.flushCache.sizeAndCount()
		cached := inWrite + inFlush
		msg := "final checkpoint failed; the entries no checkpoint completed are lost (what earlier checkpoints wrote is safe)"
		if vfs.IsNoSpace(err) {
			msg = "final checkpoint failed: out of space; the entries no checkpoint completed are lost (what earlier checkpoints wrote is safe)"
		}
		d.log.Error(msg, "uncheckpointedEntries", cached, "err", err)
		err = errors.Wrapf(err, "bookie: %s: closing with %d entries no checkpoint completed", d.ledgerDir, cached)
	}
	err = errors.CombineErrors(err, d.locations.Close())
	err = errors.CombineErrors(err, d.ledgers.close())
	err = errors.CombineErrors(err, d.entryLog.Close())
	return err
}

// shutdown stops the background workers and waits for them and for the
// calls in progress; later calls fail with ErrClosed. Writers waiting for
// room give up at once. It reports false if it ran before.
func (d *DirStorage) shutdown() bool {
	if !d.closing.CompareAndSwap(false, true) {
		return false
	}
	close(d.stop)
	d.closeMu.Lock()
	d.closed = true
	d.closeMu.Unlock()
	d.bg.Wait()
	return true
}

// abandon closes the files without a checkpoint, as a crash would leave
// them (for tests): what the write caches hold is lost; what the indexes
// and logs received stays.
func (d *DirStorage) abandon() {
	if !d.shutdown() {
		return
	}
	_ = d.locations.Close()
	_ = d.ledgers.close()
	_ = d.entryLog.Close()
}

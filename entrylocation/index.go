package entrylocation

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/internal/opstats"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// ErrNoEntry is the errors.Is target of GetLastEntryInLedger's "no entry"
// errors: the ledger has no entries, or is marked deleted. Upstream throws
// Bookie.NoEntryException in both cases.
var ErrNoEntry = errors.New("no entry")

// noEntryError is GetLastEntryInLedger's "no entry" error, with upstream's
// message. It is a plain value rather than a wrapped error because floor
// lookups of empty and deleted ledgers are frequent: a wrapped error
// captures a stack trace, which cost more than the lookup itself.
type noEntryError struct {
	ledgerID int64
	deleted  bool
}

func (e *noEntryError) Error() string {
	if e.deleted {
		return fmt.Sprintf("entrylocation: Entry -1 not found in %d (the ledger is marked deleted): no entry", e.ledgerID)
	}
	return fmt.Sprintf("entrylocation: Entry -1 not found in %d: no entry", e.ledgerID)
}

// Unwrap makes errors.Is(err, ErrNoEntry) hold, for the standard library
// and cockroachdb/errors alike.
func (e *noEntryError) Unwrap() error { return ErrNoEntry }

// ErrClosed is the errors.Is target of every call on a closed Index (or
// Batch). It is the engine's lsm.ErrClosed, so a call racing with Close
// that reaches the engine fails the same way.
var ErrClosed = lsm.ErrClosed

// EntryLocation is one (ledgerId, entryId) → location mapping, the element
// of UpdateLocations.
type EntryLocation struct{ LedgerID, EntryID, Location int64 }

// Index is an entry location index in one directory.
type Index struct {
	dir    string
	db     *lsm.DB
	opts   Options // resolved
	logger *slog.Logger

	// closeMu is read-held by every call that uses db, for the length of
	// the call; Close write-holds it to wait for them and set closed.
	// Compact holds it only to register itself (Close cancels it instead
	// of waiting under the lock).
	closeMu sync.RWMutex
	// closed is set by Close under closeMu. The point reads (enterRead)
	// check it without the lock: a read-held RWMutex is an atomic update
	// of one cache line per call from every core (9% of a cached floor on
	// 2 cores). A read that races with Close reaches the engine, which
	// fails it with ErrClosed once it is closed.
	closed atomic.Bool

	// deleted holds the ledgers marked by Delete and not yet purged.
	deletedMu sync.RWMutex
	deleted   map[int64]struct{}
	// numDeleted is len(deleted), written under deletedMu and read
	// without it: floors skip the lock while no ledger is marked.
	numDeleted atomic.Int64
	// purgeMu serializes RemoveOffsetFromDeletedLedgers.
	purgeMu sync.Mutex

	// The running Compact, if any: compactCancel cancels it and
	// compactDone is closed when it has returned.
	compactMu     sync.Mutex
	compactCancel context.CancelFunc
	compactDone   chan struct{}
	compacting    atomic.Bool

	// lookupScratch buffers (*lookupScratch) for GetLocation: the engine
	// keeps the key it is given in pooled state, so a stack buffer would
	// escape and cost an allocation per lookup.
	lookupScratch sync.Pool

	lookupStats    opstats.Recorder
	lastEntryStats opstats.Recorder
}

type lookupScratch struct {
	key   entryKey
	value [valueSize]byte
}

// Open opens the index in dir, creating dir and an empty index if they do
// not exist. nil opts means DefaultOptions().
func Open(dir string, opts *Options) (*Index, error) {
	if dir == "" {
		return nil, errors.Wrap(ErrInvalidArgument, "entrylocation: Open of an empty directory name")
	}
	o, engine, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	db, err := lsm.Open(dir, engine)
	if err != nil {
		return nil, errors.Wrapf(err, "entrylocation: opening %s", dir)
	}
	ix := &Index{
		dir:     dir,
		db:      db,
		opts:    o,
		logger:  o.Logger.With("path", dir),
		deleted: make(map[int64]struct{}),
	}
	ix.lookupScratch.New = func() any { return new(lookupScratch) }
	ix.lookupStats.Timed = o.EnableStatistics
	ix.lastEntryStats.Timed = o.EnableStatistics
	ix.lookupStats.Rollover = o.LatencyRollover
	ix.lastEntryStats.Rollover = o.LatencyRollover
	return ix, nil
}

// Path returns the index's directory.
func (ix *Index) Path() string { return ix.dir }

// DB returns the engine under the index, for tools and benchmarks that
// need its metrics, tables or WaitForCompactions. Writing to it directly
// bypasses the index's checks.
func (ix *Index) DB() *lsm.DB { return ix.db }

// enter starts a call that uses the engine: it fails with ErrClosed after
// Close, and otherwise holds Close off until exit.
func (ix *Index) enter(op string) error {
	ix.closeMu.RLock()
	if ix.closed.Load() {
		ix.closeMu.RUnlock()
		return errors.Wrapf(ErrClosed, "entrylocation: %s", op)
	}
	return nil
}

func (ix *Index) exit() { ix.closeMu.RUnlock() }

// enterRead is enter for the point reads (GetLocation,
// GetLastEntryInLedger): a flag check, no lock and no exit (see
// closed).
func (ix *Index) enterRead(op string) error {
	if ix.closed.Load() {
		return errors.Wrapf(ErrClosed, "entrylocation: %s", op)
	}
	return nil
}

// GetLocation returns the location of entryID of ledgerID, or 0 if the
// index has none. A negative ledger id is an error matching
// ErrInvalidArgument; a negative entry id is looked up like any other. It
// does not consult the ledgers marked deleted: their locations stay
// readable until RemoveOffsetFromDeletedLedgers. With the blocks in the
// cache it allocates nothing.
func (ix *Index) GetLocation(ledgerID, entryID int64) (int64, error) {
	return ix.GetLocationStats(ledgerID, entryID, nil)
}

// GetLocationStats is GetLocation that also adds the blocks it reads, the
// bytes and the cache hits to stats, if not nil (for benchmarks and tools).
func (ix *Index) GetLocationStats(ledgerID, entryID int64, stats *lsm.ReadStats) (int64, error) {
	var start time.Time
	if ix.lookupStats.Timed {
		start = time.Now()
	}
	location, err := ix.getLocation(ledgerID, entryID, stats)
	ix.lookupStats.Done(err == nil && location != 0, start)
	return location, err
}

func (ix *Index) getLocation(ledgerID, entryID int64, stats *lsm.ReadStats) (int64, error) {
	if err := ix.enterRead("GetLocation"); err != nil {
		return 0, err
	}
	if err := checkLedgerID(ledgerID); err != nil {
		return 0, err
	}
	s := ix.lookupScratch.Get().(*lookupScratch)
	defer ix.lookupScratch.Put(s)
	s.key.set(ledgerID, entryID)
	var ro *lsm.ReadOptions
	if stats != nil {
		ro = &lsm.ReadOptions{Stats: stats}
	}
	value, err := ix.db.GetAppend(s.value[:0], s.key[:], ro)
	if err != nil {
		if err == lsm.ErrNotFound || errors.Is(err, lsm.ErrNotFound) {
			return 0, nil
		}
		return 0, errors.Wrapf(err, "entrylocation: reading the location of entry %d of ledger %d", entryID, ledgerID)
	}
	location, err := decodeLocation(value)
	if err != nil {
		return 0, errors.Wrapf(err, "entrylocation: entry %d of ledger %d", entryID, ledgerID)
	}
	return location, nil
}

// GetLastEntryInLedger returns the greatest entry id from 0 to MaxInt64
// (included) that ledgerID has a location for; negative entry ids, stored
// after MaxInt64, are not seen. It fails with an error matching ErrNoEntry
// when the ledger is marked deleted or has no such entry. (Upstream probes
// below (L, MaxInt64), so an entry with id MaxInt64 is invisible there.)
//
// It is a reverse seek bounded below by (ledgerID, 0): it never walks into
// lower ledgers, whatever deleted data lies there.
func (ix *Index) GetLastEntryInLedger(ledgerID int64) (int64, error) {
	var start time.Time
	if ix.lastEntryStats.Timed {
		start = time.Now()
	}
	entryID, err := ix.getLastEntryInLedger(ledgerID, nil)
	ix.lastEntryStats.Done(err == nil, start)
	return entryID, err
}

// GetLastEntryInLedgerStats is GetLastEntryInLedger that also adds the
// blocks it reads, the bytes and the cache hits to stats.
func (ix *Index) GetLastEntryInLedgerStats(ledgerID int64, stats *lsm.ReadStats) (int64, error) {
	var start time.Time
	if ix.lastEntryStats.Timed {
		start = time.Now()
	}
	entryID, err := ix.getLastEntryInLedger(ledgerID, stats)
	ix.lastEntryStats.Done(err == nil, start)
	return entryID, err
}

func (ix *Index) getLastEntryInLedger(ledgerID int64, stats *lsm.ReadStats) (int64, error) {
	if err := ix.enterRead("GetLastEntryInLedger"); err != nil {
		return 0, err
	}
	if err := checkLedgerID(ledgerID); err != nil {
		return 0, err
	}
	if ix.isMarkedDeleted(ledgerID) {
		return 0, &noEntryError{ledgerID: ledgerID, deleted: true}
	}
	first, end := entryRange(ledgerID)
	var keyBuf, valueBuf [16]byte
	var ro *lsm.ReadOptions
	if stats != nil {
		ro = &lsm.ReadOptions{Stats: stats}
	}
	key, _, found, err := ix.db.LastInRange(keyBuf[:0], valueBuf[:0], first[:], end[:], ro)
	if err != nil {
		return 0, errors.Wrapf(err, "entrylocation: last entry of ledger %d", ledgerID)
	}
	if !found {
		return 0, &noEntryError{ledgerID: ledgerID}
	}
	entryID, err := decodeEntryID(key)
	if err != nil {
		return 0, errors.Wrapf(err, "entrylocation: last entry of ledger %d", ledgerID)
	}
	return entryID, nil
}

// AddLocation stores one location with its own synced write.
func (ix *Index) AddLocation(ledgerID, entryID, location int64) error {
	if err := ix.enter("AddLocation"); err != nil {
		return err
	}
	defer ix.exit()
	if err := checkWrite(ledgerID, entryID, location); err != nil {
		return err
	}
	var b lsm.Batch
	setLocation(&b, ledgerID, entryID, location)
	return ix.commit(&b, "AddLocation")
}

// UpdateLocations stores locs with one synced batch (in chunks of
// Options.MaxBatchOps, each atomic, as upstream), the last of duplicates
// winning. The whole slice is validated first: a bad element writes
// nothing. Entry-log compaction uses it to repoint moved entries.
func (ix *Index) UpdateLocations(locs []EntryLocation) error {
	if err := ix.enter("UpdateLocations"); err != nil {
		return err
	}
	defer ix.exit()
	for i, l := range locs {
		if err := checkWrite(l.LedgerID, l.EntryID, l.Location); err != nil {
			return errors.Wrapf(err, "entrylocation: UpdateLocations element %d", i)
		}
	}
	var b lsm.Batch
	for _, l := range locs {
		setLocation(&b, l.LedgerID, l.EntryID, l.Location)
		if b.Count() >= ix.opts.MaxBatchOps {
			if err := ix.commit(&b, "UpdateLocations"); err != nil {
				return err
			}
			b.Reset()
		}
	}
	return ix.commit(&b, "UpdateLocations")
}

// setLocation records (ledgerID, entryID) → location in b.
func setLocation(b *lsm.Batch, ledgerID, entryID, location int64) {
	k, v := makeEntryKey(ledgerID, entryID), EncodeLocation(location)
	b.Set(k[:], v[:])
}

// commit applies b with a synced write. An empty batch writes nothing.
// The caller is between enter and exit.
func (ix *Index) commit(b *lsm.Batch, op string) error {
	if b.Empty() {
		return nil
	}
	if err := ix.db.Apply(b, lsm.Sync); err != nil {
		return errors.Wrapf(err, "entrylocation: %s: committing %d operations", op, b.Count())
	}
	return nil
}

// Close cancels a running Compact and waits for it, waits for the calls in
// progress, and closes the engine. Every later call, Close included,
// fails with an error matching ErrClosed. The ledgers marked deleted and
// not purged are forgotten, as upstream.
func (ix *Index) Close() error {
	ix.closeMu.Lock()
	if ix.closed.Load() {
		ix.closeMu.Unlock()
		return errors.Wrap(ErrClosed, "entrylocation: Close")
	}
	ix.closed.Store(true)
	ix.closeMu.Unlock()

	ix.compactMu.Lock()
	cancel, done := ix.compactCancel, ix.compactDone
	ix.compactMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return errors.Wrapf(ix.db.Close(), "entrylocation: closing %s", ix.dir)
}

package bookie

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/cockroachdb/errors"
)

// gcState is a directory's entry-log garbage collector (upstream's
// GarbageCollectorThread): every GCWaitTime, and when forced, a cycle
// retries the purges of deleted ledgers, drops the ledgers that no longer
// exist from every rotated log's metadata, removes the logs left with no
// live ledger, and, when due, compacts the least-used logs.
type gcState struct {
	// mu serializes cycles and guards meta.
	mu sync.Mutex
	// meta holds the usage of every rotated log and, within the memory
	// budget, its live ledgers (16 bytes per (log, live ledger) pair;
	// docs/design.md). keptPairs counts the pairs kept; epoch is the
	// purged-ledger count when the usages were last computed (-1: never).
	meta      map[int64]*logUsage
	keptPairs int64
	epoch     int64

	req chan struct{}
	// inForce is set from a forced cycle's request until it has run
	// (upstream's forceGarbageCollection); each kind's force says what it
	// may run.
	inForce                 atomic.Bool
	minor, major            compactionState
	reclaimedDeletion       atomic.Int64
	reclaimedCompaction     atomic.Int64
	activeLogs, activeBytes atomic.Int64
	failures                atomic.Int64
	pressure                atomic.Int32 // diskPressure at the last periodic cycle

	// The statistics of gc_stats.go that have no other use.
	gcStats
}

// compactionState is one kind of compaction's (minor, major) part of a
// collector's state.
type compactionState struct {
	// force: the forced cycle requested may run it.
	force     atomic.Bool
	suspended atomic.Bool
	running   atomic.Bool
	// last is when the last one ended (Unix millis; at start, the start),
	// count how many ran.
	last, count atomic.Int64
}

func newGCState(rollover time.Duration) *gcState {
	g := &gcState{meta: map[int64]*logUsage{}, req: make(chan struct{}, 1), epoch: -1}
	g.gcStats.init(rollover)
	now := time.Now().UnixMilli()
	g.major.last.Store(now)
	g.minor.last.Store(now)
	return g
}

// GCRequest says what a garbage-collection cycle may do.
type GCRequest struct {
	// Force runs compactions now, whatever their intervals (upstream's
	// forced GC); SkipMajor and SkipMinor rule one kind out.
	Force                bool
	SkipMajor, SkipMinor bool
	// Progress, if set, is called after each log removed or compacted.
	Progress func(GCProgress)
}

// GCProgress is where a cycle stands.
type GCProgress struct {
	LogID            int64
	Done, Total      int
	ReclaimedBytes   int64
	CompactionActive string // "major", "minor" or ""
}

// GCResult is what a cycle did.
type GCResult struct {
	// RemovedLogs were left with no live ledger; CompactedLogs were
	// rewritten. Major and Minor say which compaction ran.
	RemovedLogs, CompactedLogs int
	// ReclaimedDeletionBytes and ReclaimedCompactionBytes are the bytes
	// given back by each.
	ReclaimedDeletionBytes, ReclaimedCompactionBytes int64
	Major, Minor                                     bool
	// ActiveLogs and ActiveBytes are the rotated logs left and their size.
	ActiveLogs  int
	ActiveBytes int64
}

// GCStatus is a directory's garbage collector's state (upstream's
// GarbageCollectionStatus).
type GCStatus struct {
	ForceCompacting, MajorCompacting, MinorCompacting bool
	// LastMajorCompactionTime and LastMinorCompactionTime are Unix millis.
	LastMajorCompactionTime, LastMinorCompactionTime int64
	MajorCompactionCounter, MinorCompactionCounter   int64
	MajorSuspended, MinorSuspended                   bool
}

// ForceGC asks for a forced cycle on the background worker (upstream's
// enableForceGC) and returns at once; a force already pending is left as
// it is. forceMajor and forceMinor say which compactions it may run
// (upstream's forceGC(forceMajor, forceMinor)).
func (d *DirStorage) ForceGC(forceMajor, forceMinor bool) {
	if d.gc.inForce.CompareAndSwap(false, true) {
		d.gc.major.force.Store(forceMajor)
		d.gc.minor.force.Store(forceMinor)
		// Debug: whoever forced it (the admin API, the offline tool)
		// logs the request once; each directory's cycle logs its result.
		d.log.Debug("Forced garbage collection triggered", "forceMajor", forceMajor, "forceMinor", forceMinor)
	}
	select {
	case d.gc.req <- struct{}{}:
	default:
	}
}

// SuspendMajorGC, SuspendMinorGC, ResumeMajorGC and ResumeMinorGC stop
// and restart the periodic compactions of one kind (upstream's
// suspendMajorGC ...); removing dead logs goes on.
func (d *DirStorage) SuspendMajorGC() { d.gc.major.suspended.Store(true) }
func (d *DirStorage) SuspendMinorGC() { d.gc.minor.suspended.Store(true) }
func (d *DirStorage) ResumeMajorGC()  { d.gc.major.suspended.Store(false) }
func (d *DirStorage) ResumeMinorGC()  { d.gc.minor.suspended.Store(false) }

// GCStatus returns the garbage collector's state.
func (d *DirStorage) GCStatus() GCStatus {
	g := d.gc
	return GCStatus{
		ForceCompacting:         g.inForce.Load(),
		MajorCompacting:         g.major.running.Load(),
		MinorCompacting:         g.minor.running.Load(),
		LastMajorCompactionTime: g.major.last.Load(),
		LastMinorCompactionTime: g.minor.last.Load(),
		MajorCompactionCounter:  g.major.count.Load(),
		MinorCompactionCounter:  g.minor.count.Load(),
		MajorSuspended:          g.major.suspended.Load(),
		MinorSuspended:          g.minor.suspended.Load(),
	}
}

// RunGC runs one garbage-collection cycle now and waits for it (for
// tests, tools and the offline gc command).
func (d *DirStorage) RunGC(req GCRequest) (GCResult, error) {
	if err := d.enter("RunGC"); err != nil {
		return GCResult{}, err
	}
	defer d.exit()
	return d.gcCycle(req)
}

// gcLoop runs a cycle every GCWaitTime and on ForceGC, until stop.
func (d *DirStorage) gcLoop() {
	d.runEvery(d.opts.GCWaitTime, d.gc.req, func(bool) {
		req := d.nextGCRequest()
		if _, err := d.gcCycle(req); err != nil {
			d.log.Warn("garbage collection failed; the next cycle retries", "err", err)
		}
		if req.Force {
			d.gc.inForce.Store(false)
		}
	})
}

// nextGCRequest is what the background cycle may do now: a forced cycle
// as ForceGC asked; otherwise a periodic one, within the operator's
// suspensions and the disk-pressure rules.
func (d *DirStorage) nextGCRequest() GCRequest {
	if d.gc.inForce.Load() {
		return GCRequest{Force: true, SkipMajor: !d.gc.major.force.Load(), SkipMinor: !d.gc.minor.force.Load()}
	}
	var req GCRequest
	d.applyDiskPressure(&req)
	req.SkipMajor = req.SkipMajor || d.gc.major.suspended.Load()
	req.SkipMinor = req.SkipMinor || d.gc.minor.suspended.Load()
	return req
}

// gcCycle is one cycle (upstream's runWithFlags).
func (d *DirStorage) gcCycle(req GCRequest) (res GCResult, err error) {
	g := d.gc
	g.mu.Lock()
	defer g.mu.Unlock()
	start := time.Now()
	defer func() {
		g.threadRuntime.Done(err == nil, start)
		if err != nil {
			g.failures.Add(1)
		}
	}()

	// The purges first: a ledger deleted but not purged keeps its logs.
	step := g.gcLedgerRuntime.Start()
	d.flushMu.Lock()
	perr := d.purgeLocked()
	d.flushMu.Unlock()
	g.gcLedgerRuntime.Done(perr == nil, step)
	if perr != nil {
		d.log.Warn("Failed to cleanup db indexes; its ledgers keep their entry logs until a purge succeeds", "err", perr)
	}
	step = g.extractMetaRuntime.Start()
	if err := d.removeDeadLogs(&res, req.Progress); err != nil {
		g.extractMetaRuntime.Done(false, step)
		return res, err
	}
	g.extractMetaRuntime.Done(true, step)

	step = g.compactRuntime.Start()
	now := time.Now().UnixMilli()
	s := d.opts.gc
	due := func(k *compactionSettings, st *compactionState, skip bool) bool {
		return !skip && ((req.Force && k.forceAllowed) || (k.enabled && (req.Force || now-st.last.Load() > k.interval.Milliseconds())))
	}
	switch {
	case due(&s.major, &g.major, req.SkipMajor):
		res.Major = true
		err = d.runCompactionLocked("major", &s.major, &g.major, &res, req.Progress)
		// A major compaction also does a minor one's work.
		g.minor.last.Store(g.major.last.Load())
	case due(&s.minor, &g.minor, req.SkipMinor):
		res.Minor = true
		err = d.runCompactionLocked("minor", &s.minor, &g.minor, &res, req.Progress)
	}
	g.compactRuntime.Done(err == nil, step)
	d.updateActiveLocked(&res)
	if res.RemovedLogs > 0 || res.CompactedLogs > 0 {
		d.log.Info("garbage collection done", "removedLogs", res.RemovedLogs, "reclaimedDeletionBytes", res.ReclaimedDeletionBytes,
			"compactedLogs", res.CompactedLogs, "reclaimedCompactionBytes", res.ReclaimedCompactionBytes,
			"activeLogs", res.ActiveLogs, "activeBytes", res.ActiveBytes, "took", time.Since(start))
	}
	return res, err
}

// runCompactionLocked runs one compaction of kind ("major", "minor"). g.mu
// must be held.
func (d *DirStorage) runCompactionLocked(kind string, k *compactionSettings, st *compactionState, res *GCResult, progress func(GCProgress)) error {
	st.running.Store(true)
	defer st.running.Store(false)
	d.log.Info("Enter "+kind+" compaction", "threshold", k.threshold)
	err := d.compactLogsLocked(k.threshold, k.maxTime, kind, res, progress)
	st.last.Store(time.Now().UnixMilli())
	st.count.Add(1)
	return err
}

// removeDeadLogs brings the logs' usage up to date and removes the dead
// ones (upstream's extractMetaFromEntryLogs and doGcEntryLogs, timed
// together as its EXTRACT_META_RUNTIME).
func (d *DirStorage) removeDeadLogs(res *GCResult, progress func(GCProgress)) error {
	if err := d.entryLog.RemoveOrphanMetadata(); err != nil {
		return err
	}
	if err := d.extractMetadataLocked(); err != nil {
		return err
	}
	return d.removeDeadLogsLocked(res, progress)
}

// logUsage is what the collector keeps of a rotated log.
type logUsage struct {
	// size is the log's size its ledgers map covers; remaining the bytes
	// of its live ledgers.
	size, remaining int64
	// ledgers are its live ledgers while they fit the memory budget
	// (GCOptions.MetadataCacheBytes); nil: re-read from the log's ledgers
	// map when ledgers are purged.
	ledgers []entrylog.LedgerUsage
}

// usage is the log's live fraction (upstream's EntryLogMetadata.getUsage).
func (u *logUsage) usage() float64 {
	if total := u.size - entrylog.HeaderSize; total > 0 {
		return float64(u.remaining) / float64(total)
	}
	return 0
}

// usageFor is u's usage as the thresholds see it: with a target size
// (UseTargetEntryLogSizeForGc), a log smaller than it counts its live
// bytes over the target size (a log already below 1).
func (u *logUsage) usageFor(targetSize int64) float64 {
	usage := u.usage()
	if targetSize > 0 && usage < 1 {
		total := max(u.size-entrylog.HeaderSize, targetSize-entrylog.HeaderSize)
		if total > 0 {
			usage = float64(u.remaining) / float64(total)
		}
	}
	return usage
}

// extractMetadataLocked brings meta up to date with the directory
// (upstream's extractMetaFromEntryLogs): every rotated log not known yet
// gets its usage (from its ledgers map, or a scan); when ledgers were
// purged since the last cycle, every log's live ledgers are computed
// again, from memory or by reading its map back; logs that are gone are
// forgotten. The log being written is left out. A log whose metadata
// cannot be read is logged and left alone (it is not removed).
func (d *DirStorage) extractMetadataLocked() error {
	g := d.gc
	ids, err := entrylog.ListLogs(d.opts.FS, d.ledgerDir)
	if err != nil {
		return err
	}
	epoch := d.stats.purgedLedgers.Load() + d.heldEpoch.Load()
	changed := epoch != g.epoch
	present := make(map[int64]bool, len(ids))
	cur := d.entryLog.CurrentLogID()
	for _, id := range ids {
		present[id] = true
		u, known := g.meta[id]
		if id == cur || known && (!changed || u.ledgers != nil && d.refilterLocked(id, u)) {
			continue
		}
		m, err := d.entryLog.Metadata(id)
		if errors.Is(err, entrylog.ErrInvalidArgument) {
			continue // became the log being written meanwhile
		}
		if err != nil {
			d.log.Warn("garbage collection: the usage of an entry log is unknown; it is left alone", "id", id, "err", err)
			continue
		}
		if known {
			g.keptPairs -= int64(len(u.ledgers))
		}
		u = &logUsage{size: m.Size, ledgers: m.Ledgers}
		d.refilterLocked(id, u)
		if g.keptPairs+int64(len(u.ledgers)) > d.metadataBudgetPairs() {
			u.ledgers = nil // read back from the map when needed
		} else {
			g.keptPairs += int64(len(u.ledgers))
		}
		g.meta[id] = u
	}
	g.epoch = epoch
	for id, u := range g.meta {
		if !present[id] {
			d.forgetLocked(id, u)
		}
	}
	return nil
}

// refilterLocked drops from u.ledgers the ledgers that no longer live and
// recomputes u.remaining. It reports true (for use in a condition).
func (d *DirStorage) refilterLocked(id int64, u *logUsage) bool {
	end := entrylog.MakeLocation(id, u.size)
	out := u.ledgers[:0]
	var remaining int64
	for _, l := range u.ledgers {
		if d.ledgerLiveBelow(l.LedgerID, end) {
			out = append(out, l)
			remaining += l.Bytes
		}
	}
	if g := d.gc; d.gc.meta[id] == u {
		g.keptPairs -= int64(len(u.ledgers) - len(out))
	}
	clear(u.ledgers[len(out):])
	u.ledgers, u.remaining = out, remaining
	return true
}

// forgetLocked drops a log from meta.
func (d *DirStorage) forgetLocked(id int64, u *logUsage) {
	d.gc.keptPairs -= int64(len(u.ledgers))
	delete(d.gc.meta, id)
}

// metadataBudgetPairs is how many (log, ledger) pairs meta may keep.
func (d *DirStorage) metadataBudgetPairs() int64 {
	return max(d.opts.GC.MetadataCacheBytes, 0) / entrylogLedgerUsageSize
}

// entrylogLedgerUsageSize is the memory of one kept pair.
const entrylogLedgerUsageSize = 16

// removeDeadLogsLocked removes the logs left with no live ledger
// (upstream's doGcEntryLogs).
func (d *DirStorage) removeDeadLogsLocked(res *GCResult, progress func(GCProgress)) error {
	ids := slices.Sorted(maps.Keys(d.gc.meta))
	for i, id := range ids {
		u := d.gc.meta[id]
		if u.remaining > 0 {
			continue
		}
		// A failed checkpoint's records for ledgers deleted since are
		// dropped when it resumes; still, never remove a log it names.
		d.flushMu.Lock()
		inPending := d.pendingCheckpointNamesLocked(id)
		d.flushMu.Unlock()
		if inPending {
			continue
		}
		if err := d.entryLog.RemoveLog(id); err != nil {
			d.gc.reclaimFailedToDelete.Add(1)
			return errors.Wrapf(err, "bookie: garbage collection: removing entry log %#x", id)
		}
		d.forgetLocked(id, u)
		res.RemovedLogs++
		res.ReclaimedDeletionBytes += u.size
		d.gc.reclaimedDeletion.Add(u.size)
		if progress != nil {
			progress(GCProgress{LogID: id, Done: i + 1, Total: len(ids), ReclaimedBytes: res.ReclaimedDeletionBytes})
		}
	}
	return nil
}

// ledgerLiveBelow reports whether a ledger may have a live record before
// location end: it has a record in the ledgers index (it exists, or its
// purge is pending, so that the index may still name its entries) and,
// if it was deleted and written again, its new life does not start at or
// after end.
func (d *DirStorage) ledgerLiveBelow(ledgerID, end int64) bool {
	li := d.ledgers
	li.mu.RLock()
	defer li.mu.RUnlock()
	info, ok := li.ledgers[ledgerID]
	if !ok {
		return false
	}
	if _, held := d.held.Load(ledgerID); held && !info.Exists {
		return false // deleted and purged; only its record waits (holdPurged)
	}
	return info.PurgePending || info.Floor < end
}

// updateActiveLocked refreshes the active-log gauges: the rotated logs,
// the bytes of their live ledgers (upstream's ACTIVE_ENTRY_LOG_SPACE_BYTES,
// the sum of its EntryLogMetadata remaining sizes) and their size
// (ENTRY_LOG_SPACE_BYTES, the sum of the total sizes).
func (d *DirStorage) updateActiveLocked(res *GCResult) {
	var n, live int64
	for _, u := range d.gc.meta {
		n += u.size
		live += u.remaining
	}
	res.ActiveLogs, res.ActiveBytes = len(d.gc.meta), n
	d.gc.activeLogs.Store(int64(len(d.gc.meta)))
	d.gc.activeBytes.Store(live)
	d.gc.entryLogBytes.Store(n)
}

package bookie

import (
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
	// meta holds the metadata of every rotated log, with only its live
	// ledgers: 16 bytes per (log, live ledger) pair plus the map's own
	// overhead (docs/design.md).
	meta map[int64]*entrylog.Metadata

	req chan struct{}
	// force* describe the forced cycle requested; inForce is set until it
	// has run (upstream's forceGarbageCollection).
	inForce                 atomic.Bool
	forceMajor, forceMinor  atomic.Bool
	suspendMajor            atomic.Bool
	suspendMinor            atomic.Bool
	majorCompacting         atomic.Bool
	minorCompacting         atomic.Bool
	lastMajor, lastMinor    atomic.Int64 // Unix millis
	majorCount, minorCount  atomic.Int64
	reclaimedDeletion       atomic.Int64
	reclaimedCompaction     atomic.Int64
	activeLogs, activeBytes atomic.Int64
	cycles                  atomic.Int64
	cycleNanos              atomic.Int64 // total time of the cycles
	failures                atomic.Int64
	pressure                atomic.Int32 // diskPressure at the last periodic cycle
}

func newGCState() *gcState {
	g := &gcState{meta: map[int64]*entrylog.Metadata{}, req: make(chan struct{}, 1)}
	now := time.Now().UnixMilli()
	g.lastMajor.Store(now)
	g.lastMinor.Store(now)
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
		d.gc.forceMajor.Store(forceMajor)
		d.gc.forceMinor.Store(forceMinor)
		d.log.Info("Forced garbage collection triggered", "forceMajor", forceMajor, "forceMinor", forceMinor)
	}
	select {
	case d.gc.req <- struct{}{}:
	default:
	}
}

// SuspendMajorGC, SuspendMinorGC, ResumeMajorGC and ResumeMinorGC stop
// and restart the periodic compactions of one kind (upstream's
// suspendMajorGC ...); removing dead logs goes on.
func (d *DirStorage) SuspendMajorGC() { d.gc.suspendMajor.Store(true) }
func (d *DirStorage) SuspendMinorGC() { d.gc.suspendMinor.Store(true) }
func (d *DirStorage) ResumeMajorGC()  { d.gc.suspendMajor.Store(false) }
func (d *DirStorage) ResumeMinorGC()  { d.gc.suspendMinor.Store(false) }

// GCStatus returns the garbage collector's state.
func (d *DirStorage) GCStatus() GCStatus {
	g := d.gc
	return GCStatus{
		ForceCompacting:         g.inForce.Load(),
		MajorCompacting:         g.majorCompacting.Load(),
		MinorCompacting:         g.minorCompacting.Load(),
		LastMajorCompactionTime: g.lastMajor.Load(),
		LastMinorCompactionTime: g.lastMinor.Load(),
		MajorCompactionCounter:  g.majorCount.Load(),
		MinorCompactionCounter:  g.minorCount.Load(),
		MajorSuspended:          g.suspendMajor.Load(),
		MinorSuspended:          g.suspendMinor.Load(),
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
	d.runEvery(d.opts.GCWaitTime, d.gc.req, func() {
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
		return GCRequest{Force: true, SkipMajor: !d.gc.forceMajor.Load(), SkipMinor: !d.gc.forceMinor.Load()}
	}
	var req GCRequest
	d.applyDiskPressure(&req)
	req.SkipMajor = req.SkipMajor || d.gc.suspendMajor.Load()
	req.SkipMinor = req.SkipMinor || d.gc.suspendMinor.Load()
	return req
}

// gcCycle is one cycle (upstream's runWithFlags).
func (d *DirStorage) gcCycle(req GCRequest) (res GCResult, err error) {
	g := d.gc
	g.mu.Lock()
	defer g.mu.Unlock()
	start := time.Now()
	defer func() {
		g.cycles.Add(1)
		g.cycleNanos.Add(int64(time.Since(start)))
		if err != nil {
			g.failures.Add(1)
		}
	}()

	// The purges first: a ledger deleted but not purged keeps its logs.
	d.flushMu.Lock()
	perr := d.purgeLocked()
	d.flushMu.Unlock()
	if perr != nil {
		d.log.Warn("Failed to cleanup db indexes; its ledgers keep their entry logs until a purge succeeds", "err", perr)
	}
	if err := d.entryLog.RemoveOrphanMetadata(); err != nil {
		return res, err
	}
	if err := d.extractMetadataLocked(); err != nil {
		return res, err
	}
	if err := d.removeDeadLogsLocked(&res, req.Progress); err != nil {
		return res, err
	}

	now := time.Now().UnixMilli()
	s := d.opts.gc
	major := !req.SkipMajor && s.major && (req.Force || now-g.lastMajor.Load() > s.majorInterval.Milliseconds())
	minor := !req.SkipMinor && s.minor && (req.Force || now-g.lastMinor.Load() > s.minorInterval.Milliseconds())
	switch {
	case major:
		res.Major = true
		g.majorCompacting.Store(true)
		d.log.Info("Enter major compaction", "threshold", s.majorThreshold)
		err = d.compactLogsLocked(s.majorThreshold, s.majorMaxTime, "major", &res, req.Progress)
		g.lastMajor.Store(time.Now().UnixMilli())
		g.lastMinor.Store(g.lastMajor.Load())
		g.majorCount.Add(1)
		g.majorCompacting.Store(false)
	case minor:
		res.Minor = true
		g.minorCompacting.Store(true)
		d.log.Info("Enter minor compaction", "threshold", s.minorThreshold)
		err = d.compactLogsLocked(s.minorThreshold, s.minorMaxTime, "minor", &res, req.Progress)
		g.lastMinor.Store(time.Now().UnixMilli())
		g.minorCount.Add(1)
		g.minorCompacting.Store(false)
	}
	d.updateActiveLocked(&res)
	if res.RemovedLogs > 0 || res.CompactedLogs > 0 {
		d.log.Info("garbage collection done", "removedLogs", res.RemovedLogs, "reclaimedDeletionBytes", res.ReclaimedDeletionBytes,
			"compactedLogs", res.CompactedLogs, "reclaimedCompactionBytes", res.ReclaimedCompactionBytes,
			"activeLogs", res.ActiveLogs, "activeBytes", res.ActiveBytes, "took", time.Since(start))
	}
	return res, err
}

// extractMetadataLocked brings meta up to date with the directory: the
// metadata of every rotated log not known yet (from its ledgers map, or a
// scan), and none for logs that are gone. The log being written is left
// out (upstream's extractMetaFromEntryLogs).
func (d *DirStorage) extractMetadataLocked() error {
	ids, err := entrylog.ListLogs(d.opts.FS, d.ledgerDir)
	if err != nil {
		return err
	}
	present := make(map[int64]bool, len(ids))
	cur := d.entryLog.CurrentLogID()
	for _, id := range ids {
		present[id] = true
		if _, ok := d.gc.meta[id]; ok || id == cur {
			continue
		}
		m, err := d.entryLog.Metadata(id)
		if errors.Is(err, entrylog.ErrInvalidArgument) {
			continue // became the log being written meanwhile
		}
		if err != nil {
			return errors.Wrapf(err, "bookie: garbage collection: reading the metadata of entry log %#x", id)
		}
		d.gc.meta[id] = m
	}
	for id := range d.gc.meta {
		if !present[id] {
			delete(d.gc.meta, id)
		}
	}
	return nil
}

// removeDeadLogsLocked drops the ledgers that no longer live from every
// log's metadata and removes the logs left with none (upstream's
// doGcEntryLogs).
func (d *DirStorage) removeDeadLogsLocked(res *GCResult, progress func(GCProgress)) error {
	ids := make([]int64, 0, len(d.gc.meta))
	for id := range d.gc.meta {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids {
		m := d.gc.meta[id]
		end := entrylog.MakeLocation(id, m.Size)
		m.Retain(func(ledgerID int64) bool { return d.ledgerLiveBelow(ledgerID, end) })
		if len(m.Ledgers) > 0 {
			continue
		}
		if err := d.entryLog.RemoveLog(id); err != nil {
			return errors.Wrapf(err, "bookie: garbage collection: removing entry log %#x", id)
		}
		delete(d.gc.meta, id)
		res.RemovedLogs++
		res.ReclaimedDeletionBytes += m.Size
		d.gc.reclaimedDeletion.Add(m.Size)
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
	return info.PurgePending || info.Floor < end
}

// updateActiveLocked refreshes the active-log gauges.
func (d *DirStorage) updateActiveLocked(res *GCResult) {
	var n int64
	for _, m := range d.gc.meta {
		n += m.Size
	}
	res.ActiveLogs, res.ActiveBytes = len(d.gc.meta), n
	d.gc.activeLogs.Store(int64(len(d.gc.meta)))
	d.gc.activeBytes.Store(n)
}

// Names of the garbage collector's statistics, upstream's
// GarbageCollectorStats (scope "bookie").
const (
	StatMajorCompactionTotal          = "MAJOR_COMPACTION_TOTAL"
	StatMinorCompactionTotal          = "MINOR_COMPACTION_TOTAL"
	StatReclaimedDeletionSpaceBytes   = "RECLAIMED_DELETION_SPACE_BYTES"
	StatReclaimedCompactionSpaceBytes = "RECLAIMED_COMPACTION_SPACE_BYTES"
	StatActiveEntryLogTotal           = "ACTIVE_ENTRY_LOG_TOTAL"
	StatActiveEntryLogSpaceBytes      = "ACTIVE_ENTRY_LOG_SPACE_BYTES"
	StatThreadRuntime                 = "THREAD_RUNTIME"
)

// GCMetrics are a directory's garbage-collector statistics.
type GCMetrics struct {
	LedgerDir, IndexDir string
	// MajorCompactions and MinorCompactions count the compactions run.
	MajorCompactions, MinorCompactions int64
	// ReclaimedDeletionBytes counts the bytes of dead logs removed;
	// ReclaimedCompactionBytes those given back by compactions.
	ReclaimedDeletionBytes, ReclaimedCompactionBytes int64
	// ActiveEntryLogs and ActiveEntryLogBytes are the rotated logs as of
	// the last cycle (the log being written is not counted).
	ActiveEntryLogs, ActiveEntryLogBytes int64
	// Cycles, CycleNanos and Failures: the cycles run, their total time
	// (upstream's THREAD_RUNTIME) and those that failed.
	Cycles, CycleNanos, Failures int64
}

// GCMetrics returns the garbage collector's statistics.
func (d *DirStorage) GCMetrics() GCMetrics {
	g := d.gc
	return GCMetrics{
		LedgerDir: d.ledgerDir, IndexDir: d.indexDir,
		MajorCompactions: g.majorCount.Load(), MinorCompactions: g.minorCount.Load(),
		ReclaimedDeletionBytes: g.reclaimedDeletion.Load(), ReclaimedCompactionBytes: g.reclaimedCompaction.Load(),
		ActiveEntryLogs: g.activeLogs.Load(), ActiveEntryLogBytes: g.activeBytes.Load(),
		Cycles: g.cycles.Load(), CycleNanos: g.cycleNanos.Load(), Failures: g.failures.Load(),
	}
}

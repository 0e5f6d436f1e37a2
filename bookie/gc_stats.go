package bookie

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/internal/opstats"
)

// Names of the garbage collector's statistics, upstream's
// GarbageCollectorStats (scope "bookie").
const (
	StatMajorCompactionTotal          = "MAJOR_COMPACTION_TOTAL"
	StatMinorCompactionTotal          = "MINOR_COMPACTION_TOTAL"
	StatReclaimedDeletionSpaceBytes   = "RECLAIMED_DELETION_SPACE_BYTES"
	StatReclaimedCompactionSpaceBytes = "RECLAIMED_COMPACTION_SPACE_BYTES"
	StatReclaimFailedToDelete         = "RECLAIM_FAILED_TO_DELETE"
	StatActiveEntryLogTotal           = "ACTIVE_ENTRY_LOG_TOTAL"
	StatActiveEntryLogSpaceBytes      = "ACTIVE_ENTRY_LOG_SPACE_BYTES"
	StatEntryLogSpaceBytes            = "ENTRY_LOG_SPACE_BYTES"
	StatEntryLogCompactRatio          = "ENTRY_LOG_COMPACT_RATIO"
	StatThreadRuntime                 = "THREAD_RUNTIME"
	StatGCLedgerRuntime               = "GC_LEDGER_RUNTIME"
	StatExtractMetaRuntime            = "EXTRACT_META_RUNTIME"
	StatCompactRuntime                = "COMPACT_RUNTIME"
	StatActiveLedgerTotal             = "ACTIVE_LEDGER_TOTAL"
	StatDeletedLedgerTotal            = "DELETED_LEDGER_TOTAL"
	// StatEntryLogUsageBucketPrefix + "10", "20", ... "100" name the
	// gauges of GCMetrics.EntryLogUsageBuckets.
	StatEntryLogUsageBucketPrefix = "entry_log_usage_buckets_le_"
)

// EntryLogUsageBuckets is the number of usage buckets upstream's
// compaction sorts the entry logs into: [0%, 10%), [10%, 20%), ...,
// [90%, 100%].
const EntryLogUsageBuckets = 10

// gcStats are the garbage collector's statistics that only the metrics
// read (the ones the cycle itself uses live in gcState).
type gcStats struct {
	// threadRuntime times whole cycles; gcLedgerRuntime the purge of
	// deleted ledgers that starts one (upstream's doGcLedgers);
	// extractMetaRuntime bringing the logs' usage up to date and removing
	// the dead logs (extractMetaFromEntryLogs and doGcEntryLogs);
	// compactRuntime the compaction step, run or not, as upstream times
	// it. Always timed: cycles are few.
	threadRuntime, gcLedgerRuntime, extractMetaRuntime, compactRuntime opRecorder
	// reclaimFailedToDelete counts the dead logs whose removal failed.
	reclaimFailedToDelete atomic.Int64
	// entryLogBytes is the size of the rotated logs as of the last cycle.
	entryLogBytes atomic.Int64
	// compactRatio (math.Float64bits) is the fraction of the logs the
	// last compaction compacted; usageBuckets how many logs it found in
	// each usage bucket.
	compactRatio atomic.Uint64
	usageBuckets [EntryLogUsageBuckets]atomic.Int64
}

func (s *gcStats) init(rollover time.Duration) {
	for _, r := range []*opRecorder{&s.threadRuntime, &s.gcLedgerRuntime, &s.extractMetaRuntime, &s.compactRuntime} {
		r.Timed, r.Rollover = true, rollover
	}
}

// usageBucket is the bucket of a log's usage (upstream's
// calculateUsageIndex): floor(usage * 10), 100% in the last.
func usageBucket(usage float64) int {
	return min(max(int(math.Floor(usage*EntryLogUsageBuckets)), 0), EntryLogUsageBuckets-1)
}

// recordCompactionStart records the usage buckets of the logs a
// compaction starts from.
func (s *gcStats) recordCompactionStart(meta map[int64]*logUsage, targetSize int64) {
	var b [EntryLogUsageBuckets]int64
	for _, u := range meta {
		b[usageBucket(u.usageFor(targetSize))]++
	}
	for i := range b {
		s.usageBuckets[i].Store(b[i])
	}
}

// recordCompactionEnd records the fraction of total logs a compaction
// compacted (0 when there were none).
func (s *gcStats) recordCompactionEnd(compacted, total int) {
	ratio := 0.0
	if total > 0 {
		ratio = float64(compacted) / float64(total)
	}
	s.compactRatio.Store(math.Float64bits(ratio))
}

// GCMetrics are a directory's garbage-collector statistics.
type GCMetrics struct {
	LedgerDir, IndexDir string
	// MajorCompactions and MinorCompactions count the compactions run.
	MajorCompactions, MinorCompactions int64
	// ReclaimedDeletionBytes counts the bytes of dead logs removed;
	// ReclaimedCompactionBytes those given back by compactions;
	// ReclaimFailedToDelete the dead logs whose removal failed.
	ReclaimedDeletionBytes, ReclaimedCompactionBytes, ReclaimFailedToDelete int64
	// ActiveEntryLogs are the rotated logs as of the last cycle (the log
	// being written is not counted), ActiveEntryLogBytes the bytes of
	// their live ledgers and EntryLogBytes their size.
	ActiveEntryLogs, ActiveEntryLogBytes, EntryLogBytes int64
	// ThreadRuntime times the cycles; a failed cycle is a failure.
	// GCLedgerRuntime, ExtractMetaRuntime and CompactRuntime time their
	// steps (see gcStats). Failures counts the failed cycles.
	ThreadRuntime, GCLedgerRuntime, ExtractMetaRuntime, CompactRuntime opstats.Stats
	Failures                                                           int64
	// EntryLogCompactRatio is the fraction of the logs the last
	// compaction compacted; EntryLogUsageBuckets[i] the logs it found with
	// a usage in [i*10%, (i+1)*10%) (the last bucket includes 100%).
	EntryLogCompactRatio float64
	EntryLogUsageBuckets [EntryLogUsageBuckets]int64
	// ActiveLedgers are the ledgers that exist; DeletedLedgers counts the
	// deleted ledgers purged (upstream's ACTIVE_LEDGER_TOTAL and
	// DELETED_LEDGER_TOTAL).
	ActiveLedgers, DeletedLedgers int64
}

// GCMetrics returns the garbage collector's statistics.
func (d *DirStorage) GCMetrics() GCMetrics {
	g := d.gc
	existing, _ := d.ledgers.counts()
	m := GCMetrics{
		LedgerDir: d.ledgerDir, IndexDir: d.indexDir,
		MajorCompactions: g.major.count.Load(), MinorCompactions: g.minor.count.Load(),
		ReclaimedDeletionBytes: g.reclaimedDeletion.Load(), ReclaimedCompactionBytes: g.reclaimedCompaction.Load(),
		ReclaimFailedToDelete: g.reclaimFailedToDelete.Load(),
		ActiveEntryLogs:       g.activeLogs.Load(), ActiveEntryLogBytes: g.activeBytes.Load(), EntryLogBytes: g.entryLogBytes.Load(),
		ThreadRuntime: g.threadRuntime.Snapshot(), GCLedgerRuntime: g.gcLedgerRuntime.Snapshot(),
		ExtractMetaRuntime: g.extractMetaRuntime.Snapshot(), CompactRuntime: g.compactRuntime.Snapshot(),
		Failures:             g.failures.Load(),
		EntryLogCompactRatio: math.Float64frombits(g.compactRatio.Load()),
		ActiveLedgers:        existing, DeletedLedgers: d.stats.purgedLedgers.Load(),
	}
	for i := range m.EntryLogUsageBuckets {
		m.EntryLogUsageBuckets[i] = g.usageBuckets[i].Load()
	}
	return m
}

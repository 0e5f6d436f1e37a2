package lsm

import (
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/wal"
)

// dbMetrics are the DB's counters: plain atomics, cheap to bump.
type dbMetrics struct {
	batches, syncedBatches, keysWritten atomic.Int64
	commitNanos                         atomic.Int64
	iterators, rangeDelSkips            atomic.Int64
	// gets counts point gets on stripes (see readStripes): one counter
	// that every core bumps on every get is a contended cache line.
	gets                             [readStripes]paddedCount
	writeSlowdowns, writeStops       atomic.Int64
	stallNanos                       atomic.Int64
	flushes, flushBytes              atomic.Int64
	compactions, compactionBytesIn   atomic.Int64
	compactionBytesOut, trivialMoves atomic.Int64
	subcompactions                   atomic.Int64
	filesDeleted                     atomic.Int64
	mergeNanos                       atomic.Int64
	readPathTombsInserted            atomic.Int64
	readPathTombsDiscarded           atomic.Int64
	// Out-of-space failures (see background_error.go).
	noSpaceErrors, noSpaceRetries, noSpaceRecoveries atomic.Int64
	// WAL counters of the WALs already switched away from.
	walBytes, walSyncs, walRecords atomic.Int64
	walSyncNanos                   atomic.Int64
}

// getCount sums the get counter's stripes.
func (m *dbMetrics) getCount() int64 {
	var n int64
	for i := range m.gets {
		n += m.gets[i].n.Load()
	}
	return n
}

// retiredWAL adds a WAL's counters as the DB switches away from it; its
// last writes are counted a little early, which a snapshot of counters can
// live with.
func (m *dbMetrics) retiredWAL(w *wal.Writer) {
	if w == nil {
		return
	}
	wm := w.Metrics()
	m.walBytes.Add(wm.BytesWritten)
	m.walSyncs.Add(wm.Syncs)
	m.walRecords.Add(wm.Records)
	m.walSyncNanos.Add(wm.SyncWaitNanos)
}

// LevelMetrics describe one level.
type LevelMetrics struct {
	Tables         int
	Bytes          uint64
	Entries        uint64
	RangeDeletions uint64
	// Score is the level's compaction score: its size over its target (for
	// L0, tables over the compaction trigger); >= 1 wants a compaction.
	Score float64
}

// CacheKindMetrics are block cache counters for one kind of block.
type CacheKindMetrics = cache.KindMetrics

// CacheMetrics describe the block cache.
type CacheMetrics struct {
	Capacity, Usage, PinnedUsage, Entries int64
	// AllocatedBytes is the memory of the blocks the cache has handed out
	// and not taken back (cached, held by readers, or read for one
	// lookup); MappedBytes the memory its allocator holds from the system
	// for them. Both are outside the Go heap (docs/design.md, "Block
	// memory").
	AllocatedBytes, MappedBytes int64
	// By kind of block: data, index (partitions or single indexes), filter
	// (partitions or full filters), top-level.
	Data, Index, Filter, TopLevel CacheKindMetrics
	OversizedRejects              int64
}

// Metrics is a point-in-time snapshot of the DB's state and counters.
type Metrics struct {
	Levels [manifest.NumLevels]LevelMetrics

	MemTables        int   // mutable + immutable
	MemTableBytes    int64 // arena bytes in use
	ImmutableFlushes int64 // completed flushes
	FlushBytes       int64

	Compactions        int64
	CompactionBytesIn  int64
	CompactionBytesOut int64
	TrivialMoves       int64
	// Subcompactions counts the key ranges of compactions split to run in
	// parallel (Options.MaxSubcompactions); a compaction not split counts
	// none.
	Subcompactions     int64
	CompactionsRunning int
	// WriteAmplification is (flush + compaction bytes written) / flush
	// bytes.
	WriteAmplification float64

	Batches, SyncedBatches, KeysWritten int64
	WALBytes, WALSyncs                  int64
	// WALSyncNanos is the time spent in the WALs' fsyncs (one clock read
	// on each side of an fsync, whatever the statistics setting).
	WALSyncNanos               int64
	WriteSlowdowns, WriteStops int64
	// StallNanos and CommitNanos are timed only with EnableStatistics.
	StallNanos, CommitNanos int64
	// MergeTimeNanos is the time spent in the merge operator (FullMerge
	// and PartialMerge, on reads, flushes and compactions); measured only
	// with EnableStatistics, 0 otherwise.
	MergeTimeNanos int64

	Gets, Iterators int64
	// ReadPathRangeTombstonesInserted counts the range tombstones iterators
	// inserted over runs of point tombstones
	// (MinTombstonesForRangeConversion); ...Discarded those dropped because
	// the memtable switched, a commit was in progress or the memtable could
	// not take them.
	ReadPathRangeTombstonesInserted, ReadPathRangeTombstonesDiscarded int64
	// RangeDeletionSkips counts seeks past runs of entries deleted by a
	// range tombstone (instead of stepping through them).
	RangeDeletionSkips int64

	// OutOfSpace: writes fail with ErrNoSpace while the engine retries a
	// flush, WAL or manifest write that failed for lack of space.
	// CompactionsOutOfSpace: a compaction failed for lack of space and none
	// has succeeded since. NoSpaceErrors counts out-of-space failures,
	// NoSpaceRetries the recovery attempts that failed again, and
	// NoSpaceRecoveries the times writes were taken again.
	OutOfSpace, CompactionsOutOfSpace                bool
	NoSpaceErrors, NoSpaceRetries, NoSpaceRecoveries int64

	Snapshots         int
	LastSeqNum        uint64
	ObsoleteFilesGone int64
	EstimatedKeys     uint64 // entries in tables and memtables, before dedup
	BlockCache        CacheMetrics
}

// Metrics returns a snapshot of the DB's metrics.
func (d *DB) Metrics() Metrics {
	var m Metrics
	rs := d.loadReadState()
	defer rs.unref()
	v := rs.version
	for level := range manifest.NumLevels {
		lm := &m.Levels[level]
		for _, t := range v.Tables(level) {
			lm.Tables++
			lm.Bytes += t.Size
			lm.Entries += t.Entries - t.RangeDeletions
			lm.RangeDeletions += t.RangeDeletions
		}
		m.EstimatedKeys += lm.Entries
	}
	for i, s := range d.levelScores(v) {
		m.Levels[i].Score = s
	}
	for _, mt := range rs.memtables {
		m.MemTables++
		m.MemTableBytes += int64(mt.mt.ApproximateSize())
		m.EstimatedKeys += uint64(mt.mt.Count())
	}
	c := &d.metrics
	m.ImmutableFlushes, m.FlushBytes = c.flushes.Load(), c.flushBytes.Load()
	m.Compactions, m.CompactionBytesIn, m.CompactionBytesOut = c.compactions.Load(), c.compactionBytesIn.Load(), c.compactionBytesOut.Load()
	m.TrivialMoves, m.Subcompactions = c.trivialMoves.Load(), c.subcompactions.Load()
	if m.FlushBytes > 0 {
		m.WriteAmplification = float64(m.FlushBytes+m.CompactionBytesOut) / float64(m.FlushBytes)
	}
	m.Batches, m.SyncedBatches, m.KeysWritten = c.batches.Load(), c.syncedBatches.Load(), c.keysWritten.Load()
	m.WriteSlowdowns, m.WriteStops, m.StallNanos, m.CommitNanos = c.writeSlowdowns.Load(), c.writeStops.Load(), c.stallNanos.Load(), c.commitNanos.Load()
	m.Gets, m.Iterators, m.RangeDeletionSkips = c.getCount(), c.iterators.Load(), c.rangeDelSkips.Load()
	m.ObsoleteFilesGone = c.filesDeleted.Load()
	m.MergeTimeNanos = c.mergeNanos.Load()
	m.ReadPathRangeTombstonesInserted = c.readPathTombsInserted.Load()
	m.ReadPathRangeTombstonesDiscarded = c.readPathTombsDiscarded.Load()
	m.LastSeqNum = d.visibleSeq.Load()
	d.mu.Lock()
	m.Snapshots = len(d.mu.snapshots)
	m.CompactionsRunning = d.mu.compactions
	m.OutOfSpace = d.mu.space.err != nil
	m.CompactionsOutOfSpace = d.mu.space.compactionErr != nil
	m.NoSpaceErrors, m.NoSpaceRetries, m.NoSpaceRecoveries = c.noSpaceErrors.Load(), c.noSpaceRetries.Load(), c.noSpaceRecoveries.Load()
	m.WALBytes, m.WALSyncs, m.WALSyncNanos = c.walBytes.Load(), c.walSyncs.Load(), c.walSyncNanos.Load()
	if d.mu.wal != nil {
		wm := d.mu.wal.Metrics()
		m.WALBytes += wm.BytesWritten
		m.WALSyncs += wm.Syncs
		m.WALSyncNanos += wm.SyncWaitNanos
	}
	d.mu.Unlock()
	cm := d.cache.Metrics()
	m.BlockCache = CacheMetrics{
		Capacity: cm.Capacity, Usage: cm.Usage, PinnedUsage: cm.PinnedUsage, Entries: cm.Entries,
		AllocatedBytes: cm.AllocatedBytes, MappedBytes: cm.MappedBytes,
		Data: cm.Kinds[cache.KindData], Index: cm.Kinds[cache.KindIndex], Filter: cm.Kinds[cache.KindFilter],
		TopLevel: cm.Kinds[cache.KindTopLevel], OversizedRejects: cm.OversizedRejects,
	}
	return m
}

package bookie

import (
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/internal/opstats"
)

// Names of the storage's statistics, as upstream's DbLedgerStorageStats
// registers them. A Prometheus exporter names them "bookie_" + the name
// with '-' turned into '_'.
const (
	StatAddEntry               = "add-entry"
	StatReadEntry              = "read-entry"
	StatFlush                  = "flush"
	StatFlushEntryLog          = "flush-entrylog"
	StatFlushLocationsIndex    = "flush-locations-index"
	StatFlushLedgerIndex       = "flush-ledger-index"
	StatFlushSize              = "flush-size"
	StatThrottledWrite         = "throttled-write"
	StatRejectedWriteRequests  = "rejected-write-requests"
	StatWriteCacheHits         = "write-cache-hits"
	StatWriteCacheMisses       = "write-cache-misses"
	StatReadCacheHits          = "read-cache-hits"
	StatReadCacheMisses        = "read-cache-misses"
	StatReadLocationsIndexTime = "read-locations-index-time"
	StatReadEntryLogTime       = "read-entrylog-time"
	StatReadAheadBatchCount    = "readahead-batch-count"
	StatReadAheadBatchSize     = "readahead-batch-size"
	StatReadAheadTime          = "readahead-time"
	StatThrottledWriteRequests = "throttled-write-requests"
	// StatDBStorageThreadTime is upstream's thread-scoped counter of the
	// milliseconds its db-storage thread spent flushing a full write
	// cache; DirMetrics.DBStorageThreadTime.
	StatDBStorageThreadTime = "db-storage-thread-time"
	// StatWriteCacheMaxSize and StatReadAheadMaxBatchSize are the gauges
	// upstream's DbLedgerStorage registers (not per directory): a
	// directory's write cache size and the read-ahead batch size.
	StatWriteCacheMaxSize     = "write-cache-max-size"
	StatReadAheadMaxBatchSize = "readahead-max-batch-size"
	StatWriteCacheSize        = "write-cache-size"
	StatWriteCacheCount       = "write-cache-count"
	StatReadCacheSize         = "read-cache-size"
	StatReadCacheCount        = "read-cache-count"
)

// DirMetrics is a snapshot of one ledger directory's statistics.
type DirMetrics struct {
	// LedgerDir and IndexDir are the directories' "current"
	// subdirectories, upstream's ledgerDir and indexDir labels.
	LedgerDir, IndexDir string

	// AddEntry and ReadEntry are add-entry and read-entry; their
	// latencies only with EnableStatistics. A read of an absent entry
	// counts as a failure.
	AddEntry, ReadEntry opstats.Stats
	// Flush is a checkpoint's write of a cache (flush); FlushEntryLog,
	// FlushLedgerIndex and FlushLocationsIndex its steps.
	Flush, FlushEntryLog, FlushLedgerIndex, FlushLocationsIndex opstats.Stats
	// FlushBytes and FlushEntries total what checkpoints wrote.
	FlushBytes, FlushEntries int64
	// FlushSize holds the bytes each checkpoint that wrote a cache
	// wrote, ReadAheadBatchCount and ReadAheadBatchSize the entries and
	// bytes each read-ahead brought in: values, not latencies (see
	// opstats.Recorder.AddValue), upstream's flush-size,
	// readahead-batch-count and readahead-batch-size.
	FlushSize, ReadAheadBatchCount, ReadAheadBatchSize opstats.Stats
	// ThrottledWrite times the adds that waited for room (throttled-write):
	// a success found room in time.
	ThrottledWrite opstats.Stats
	// RejectedWriteRequests counts the adds rejected with ErrRejected.
	RejectedWriteRequests int64

	WriteCacheHits, WriteCacheMisses int64
	ReadCacheHits, ReadCacheMisses   int64
	// ReadAheadBatches counts read-aheads, ReadAheadEntries and
	// ReadAheadBytes what they brought into the read cache.
	ReadAheadBatches, ReadAheadEntries, ReadAheadBytes int64
	// ReadAheadIndexLookups counts the index lookups read-aheads made:
	// one per record read ahead, to keep only entries' current copies.
	// Upstream's read-ahead makes none, so the index's
	// lookup-entry-location count minus this is what compares with
	// upstream's.
	ReadAheadIndexLookups int64
	// ReadLocationsIndexTime and ReadEntryLogTime are the time reads
	// spent in the index and in the entry logs, read-ahead excluded, as
	// upstream's read-locations-index-time and read-entrylog-time;
	// ReadAheadTime the time read-aheads took (readahead-time).
	ReadLocationsIndexTime, ReadEntryLogTime, ReadAheadTime time.Duration
	// WriteCacheMaxSize is the directory's write cache capacity, both
	// halves (upstream's write-cache-max-size); ReadAheadMaxBatchSize the
	// entries a read-ahead reads at most (readahead-max-batch-size).
	WriteCacheMaxSize, ReadAheadMaxBatchSize int64

	// WriteCacheSize and WriteCacheCount cover both write caches (the one
	// filling and the one being flushed); ReadCacheSize and ReadCacheCount
	// the read cache.
	WriteCacheSize, WriteCacheCount int64
	ReadCacheSize, ReadCacheCount   int64

	// Ledgers counts the existing ledgers; PendingPurgeLedgers the deleted
	// ones whose locations are not purged yet.
	Ledgers, PendingPurgeLedgers int64
	// Purges counts completed purges, PurgedLedgers the ledgers they
	// purged, PurgeFailures the failed ones.
	Purges, PurgedLedgers, PurgeFailures int64
	// ReadCorruptions counts reads that met damaged bytes (an index table
	// or an entry log record that fails its checksum or does not decode).
	ReadCorruptions int64
	// LastCheckpoint is when the last checkpoint completed; zero if none.
	LastCheckpoint time.Time

	// DBStorageThreadTime is the time the checkpoint worker spent in
	// checkpoints a full write cache asked for (upstream's
	// db-storage-thread-time: its db-storage thread runs only those).
	DBStorageThreadTime time.Duration

	// CheckpointFailures counts the checkpoints that failed in a row
	// (0 once one succeeds); see DirStorage.CheckpointError.
	CheckpointFailures int64

	// EntryLog is the entry logs' counters.
	EntryLog entrylog.Metrics
	// Index is the entry location index's.
	Index entrylocation.Metrics
}

// Metrics returns a snapshot of the directory's statistics. It works after
// Close too (with the index's metrics empty).
func (d *DirStorage) Metrics() DirMetrics {
	s := d.stats
	m := DirMetrics{
		LedgerDir:              d.ledgerDir,
		IndexDir:               d.indexDir,
		AddEntry:               s.addEntry.Snapshot(),
		ReadEntry:              s.readEntry.Snapshot(),
		Flush:                  s.flush.Snapshot(),
		FlushEntryLog:          s.flushEntryLog.Snapshot(),
		FlushLedgerIndex:       s.flushLedgerIdx.Snapshot(),
		FlushLocationsIndex:    s.flushLocationsIndex.Snapshot(),
		FlushBytes:             s.flushBytes.Load(),
		FlushEntries:           s.flushEntries.Load(),
		FlushSize:              s.flushSize.Snapshot(),
		ReadAheadBatchCount:    s.readAheadBatchCount.Snapshot(),
		ReadAheadBatchSize:     s.readAheadBatchSize.Snapshot(),
		ThrottledWrite:         s.throttledWrite.Snapshot(),
		RejectedWriteRequests:  s.rejectedWrites.Load(),
		WriteCacheHits:         s.writeCacheHits.Load(),
		WriteCacheMisses:       s.writeCacheMisses.Load(),
		ReadCacheHits:          s.readCacheHits.Load(),
		ReadCacheMisses:        s.readCacheMisses.Load(),
		ReadAheadBatches:       s.readAheadBatches.Load(),
		ReadAheadEntries:       s.readAheadEntries.Load(),
		ReadAheadBytes:         s.readAheadBytes.Load(),
		ReadLocationsIndexTime: time.Duration(s.readLocationsIndexNanos.Load()),
		ReadEntryLogTime:       time.Duration(s.readEntryLogNanos.Load()),
		ReadAheadTime:          time.Duration(s.readAheadNanos.Load()),
		ReadAheadIndexLookups:  s.readAheadIndexLookups.Load(),
		WriteCacheMaxSize:      2 * d.opts.writeCacheHalf(),
		ReadAheadMaxBatchSize:  int64(max(d.opts.ReadAheadBatchSize, 0)),
		Purges:                 s.purges.Load(),
		PurgedLedgers:          s.purgedLedgers.Load(),
		PurgeFailures:          s.purgeFailures.Load(),
		CheckpointFailures:     s.checkpointFailures.Load(),
		DBStorageThreadTime:    time.Duration(s.dbStorageThreadNanos.Load()),
		ReadCorruptions:        s.readCorruptions.Load(),
		EntryLog:               d.entryLog.Metrics(),
		Index:                  d.locations.Metrics(),
	}
	if ns := s.lastCheckpointNanos.Load(); ns != 0 {
		m.LastCheckpoint = time.Unix(0, ns)
	}
	d.cacheMu.RLock()
	caches := [2]*writeCache{d.writeCache, d.flushCache}
	d.cacheMu.RUnlock()
	for _, c := range caches {
		size, count := c.sizeAndCount()
		m.WriteCacheSize += size
		m.WriteCacheCount += count
	}
	m.ReadCacheSize, m.ReadCacheCount = d.readCache.sizeAndCount()
	m.Ledgers, m.PendingPurgeLedgers = d.ledgers.counts()
	return m
}

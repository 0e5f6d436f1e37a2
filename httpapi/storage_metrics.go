package httpapi

import (
	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/internal/opstats"
	"github.com/prometheus/client_golang/prometheus"
)

// storageCollector exports the storage's statistics with upstream's
// DbLedgerStorageStats names ("bookie_" + name, '-' → '_'), labelled by
// directory as upstream labels them, plus a few of ours
// (bookie_index_storage_*).
type storageCollector struct {
	storage LedgerStorage
	timed   bool

	opStats  []storageOpStat
	counters []storageValue
	gauges   []storageValue

	flushSize, readAheadCount, readAheadSize *prometheus.Desc
	// threadTime is upstream's thread-scoped db-storage-thread-time: its
	// labels name the thread pool and thread too.
	threadTime *prometheus.Desc
	// writeCacheMaxSize and readAheadMaxBatchSize are unlabelled, as
	// upstream's DbLedgerStorage registers them once for all directories.
	writeCacheMaxSize, readAheadMaxBatchSize *prometheus.Desc
}

type storageOpStat struct {
	desc  *prometheus.Desc
	stats func(m *bookie.DirMetrics) *opstats.Stats
	// timed: latencies exist whatever enableStatistics says.
	timed bool
}

type storageValue struct {
	desc  *prometheus.Desc
	value func(m *bookie.DirMetrics) float64
}

const storagePrefix = "bookie_index_storage_"

func newStorageCollector(storage LedgerStorage, timed bool) *storageCollector {
	c := &storageCollector{storage: storage, timed: timed}
	op := func(stat, help string, alwaysTimed bool, f func(m *bookie.DirMetrics) *opstats.Stats) {
		c.opStats = append(c.opStats, storageOpStat{prometheus.NewDesc(upstreamName(stat), help, labels("success"), nil), f, alwaysTimed})
	}
	op(bookie.StatAddEntry, "Entries added (to the write cache) and their latency in milliseconds (with enableStatistics).", false,
		func(m *bookie.DirMetrics) *opstats.Stats { return &m.AddEntry })
	op(bookie.StatReadEntry, "Entries read and their latency in milliseconds (with enableStatistics); an absent entry counts as success=\"false\".", false,
		func(m *bookie.DirMetrics) *opstats.Stats { return &m.ReadEntry })
	op(bookie.StatFlush, "Checkpoints that wrote a write cache, and their latency in milliseconds.", true,
		func(m *bookie.DirMetrics) *opstats.Stats { return &m.Flush })
	op(bookie.StatFlushEntryLog, "Entry-log syncs of checkpoints, and their latency in milliseconds.", true,
		func(m *bookie.DirMetrics) *opstats.Stats { return &m.FlushEntryLog })
	op(bookie.StatFlushLocationsIndex, "Writes of checkpoints' locations to the entry location index, and their latency in milliseconds.", true,
		func(m *bookie.DirMetrics) *opstats.Stats { return &m.FlushLocationsIndex })
	op(bookie.StatFlushLedgerIndex, "Writes of checkpoints' ledger changes to the ledgers index, and their latency in milliseconds.", true,
		func(m *bookie.DirMetrics) *opstats.Stats { return &m.FlushLedgerIndex })
	op(bookie.StatThrottledWrite, "Adds that waited for room in a full write cache, and how long, in milliseconds; success=\"false\" were rejected.", true,
		func(m *bookie.DirMetrics) *opstats.Stats { return &m.ThrottledWrite })

	counter := func(name, help string, f func(m *bookie.DirMetrics) float64) {
		c.counters = append(c.counters, storageValue{prometheus.NewDesc(name, help, dirLabels, nil), f})
	}
	gauge := func(name, help string, f func(m *bookie.DirMetrics) float64) {
		c.gauges = append(c.gauges, storageValue{prometheus.NewDesc(name, help, dirLabels, nil), f})
	}
	counter(upstreamName(bookie.StatRejectedWriteRequests), "Adds rejected because the write cache stayed full for dbStorage_maxThrottleTimeMs.",
		func(m *bookie.DirMetrics) float64 { return float64(m.RejectedWriteRequests) })
	counter(upstreamName(bookie.StatWriteCacheHits), "Reads served by a write cache.", func(m *bookie.DirMetrics) float64 { return float64(m.WriteCacheHits) })
	counter(upstreamName(bookie.StatWriteCacheMisses), "Reads not in a write cache.", func(m *bookie.DirMetrics) float64 { return float64(m.WriteCacheMisses) })
	counter(upstreamName(bookie.StatReadCacheHits), "Reads served by the read cache.", func(m *bookie.DirMetrics) float64 { return float64(m.ReadCacheHits) })
	counter(upstreamName(bookie.StatReadCacheMisses), "Reads not in the read cache (they look up the index).", func(m *bookie.DirMetrics) float64 { return float64(m.ReadCacheMisses) })
	counter(upstreamName(bookie.StatReadLocationsIndexTime), "Nanoseconds reads spent looking up the entry location index.",
		func(m *bookie.DirMetrics) float64 { return float64(m.ReadLocationsIndexTime) })
	counter(upstreamName(bookie.StatReadEntryLogTime), "Nanoseconds reads spent reading entry logs, read-ahead excluded.",
		func(m *bookie.DirMetrics) float64 { return float64(m.ReadEntryLogTime) })
	counter(upstreamName(bookie.StatReadAheadTime), "Nanoseconds read-aheads took (entry log reads and their index lookups).",
		func(m *bookie.DirMetrics) float64 { return float64(m.ReadAheadTime) })
	counter(upstreamName(bookie.StatThrottledWriteRequests), "Adds that had to wait for room in a full write cache.",
		func(m *bookie.DirMetrics) float64 {
			return float64(m.ThrottledWrite.SuccessCount + m.ThrottledWrite.FailureCount)
		})
	counter(storagePrefix+"readahead_index_lookups_total",
		"Entry location index lookups made by read-aheads, one per record read ahead (upstream's read-ahead makes none); bookie_lookup_entry_location counts them too.",
		func(m *bookie.DirMetrics) float64 { return float64(m.ReadAheadIndexLookups) })
	gauge(upstreamName(bookie.StatWriteCacheSize), "Bytes held by the write caches (the one filling and the one being flushed).",
		func(m *bookie.DirMetrics) float64 { return float64(m.WriteCacheSize) })
	gauge(upstreamName(bookie.StatWriteCacheCount), "Entries in the write caches.", func(m *bookie.DirMetrics) float64 { return float64(m.WriteCacheCount) })
	gauge(upstreamName(bookie.StatReadCacheSize), "Bytes held by the read cache.", func(m *bookie.DirMetrics) float64 { return float64(m.ReadCacheSize) })
	gauge(upstreamName(bookie.StatReadCacheCount), "Entries in the read cache.", func(m *bookie.DirMetrics) float64 { return float64(m.ReadCacheCount) })
	gauge(storagePrefix+"ledgers", "Ledgers that exist.", func(m *bookie.DirMetrics) float64 { return float64(m.Ledgers) })
	gauge(storagePrefix+"pending_purge_ledgers", "Deleted ledgers whose locations are not purged from the index yet.",
		func(m *bookie.DirMetrics) float64 { return float64(m.PendingPurgeLedgers) })
	gauge(storagePrefix+"last_checkpoint_timestamp_seconds", "When the last checkpoint completed, in seconds since the epoch; 0 if none.",
		func(m *bookie.DirMetrics) float64 {
			if m.LastCheckpoint.IsZero() {
				return 0
			}
			return float64(m.LastCheckpoint.UnixMilli()) / 1e3
		})
	gauge(storagePrefix+"checkpoint_failures", "Checkpoints that failed in a row (retried with backoff); 0 once one succeeds.",
		func(m *bookie.DirMetrics) float64 { return float64(m.CheckpointFailures) })
	counter(storagePrefix+"purges_total", "Purges of deleted ledgers' locations that completed.", func(m *bookie.DirMetrics) float64 { return float64(m.Purges) })
	counter(storagePrefix+"purged_ledgers_total", "Deleted ledgers whose locations were purged.", func(m *bookie.DirMetrics) float64 { return float64(m.PurgedLedgers) })
	counter(storagePrefix+"purge_failures_total", "Purges that failed (retried after the next checkpoint or garbage collection).",
		func(m *bookie.DirMetrics) float64 { return float64(m.PurgeFailures) })
	counter(storagePrefix+"read_corruptions_total", "Reads that met damaged bytes in an index table or an entry log (logged with the file and offset).",
		func(m *bookie.DirMetrics) float64 { return float64(m.ReadCorruptions) })
	counter(storagePrefix+"flushed_entries_total", "Entries written by checkpoints.", func(m *bookie.DirMetrics) float64 { return float64(m.FlushEntries) })
	counter(storagePrefix+"entry_log_bytes_written_total", "Bytes written to entry logs.", func(m *bookie.DirMetrics) float64 { return float64(m.EntryLog.BytesWritten) })
	counter(storagePrefix+"entry_log_syncs_total", "Entry log fsyncs.", func(m *bookie.DirMetrics) float64 { return float64(m.EntryLog.Syncs) })
	counter(storagePrefix+"entry_logs_created_total", "Entry logs created.", func(m *bookie.DirMetrics) float64 { return float64(m.EntryLog.LogsCreated) })
	counter(storagePrefix+"entry_log_write_failures_total", "Entry logs abandoned after a write or sync failure.",
		func(m *bookie.DirMetrics) float64 { return float64(m.EntryLog.WriteFailures) })
	gauge(storagePrefix+"current_entry_log_id", "Id of the entry log being written; -1 if none.", func(m *bookie.DirMetrics) float64 { return float64(m.EntryLog.CurrentLogID) })

	c.flushSize = prometheus.NewDesc(upstreamName(bookie.StatFlushSize), "Bytes each checkpoint that wrote a write cache wrote (quantiles, sum in bytes).", labels("success"), nil)
	c.readAheadCount = prometheus.NewDesc(upstreamName(bookie.StatReadAheadBatchCount), "Entries each read-ahead after a read-cache miss read (quantiles, sum in entries).", labels("success"), nil)
	c.readAheadSize = prometheus.NewDesc(upstreamName(bookie.StatReadAheadBatchSize), "Bytes each read-ahead after a read-cache miss read (quantiles, sum in bytes).", labels("success"), nil)
	c.threadTime = prometheus.NewDesc(upstreamName(bookie.StatDBStorageThreadTime),
		"Milliseconds the checkpoint worker spent in checkpoints a full write cache asked for (upstream's db-storage thread runs only those; "+
			"the periodic checkpoints are not counted).", append(append([]string(nil), dirLabels...), "threadPool", "thread"), nil)
	c.writeCacheMaxSize = prometheus.NewDesc(upstreamName(bookie.StatWriteCacheMaxSize), "Write cache capacity of one directory, in bytes.", nil, nil)
	c.readAheadMaxBatchSize = prometheus.NewDesc(upstreamName(bookie.StatReadAheadMaxBatchSize), "Entries one read-ahead reads at most (dbStorage_readAheadCacheBatchSize).", nil, nil)
	return c
}

// upstreamName is the Prometheus name upstream gives a statistic.
func upstreamName(stat string) string {
	b := []byte("bookie_" + stat)
	for i, c := range b {
		if c == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}

// Describe sends every descriptor.
func (c *storageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, o := range c.opStats {
		ch <- o.desc
	}
	for _, v := range append(append([]storageValue(nil), c.counters...), c.gauges...) {
		ch <- v.desc
	}
	ch <- c.flushSize
	ch <- c.readAheadCount
	ch <- c.readAheadSize
	ch <- c.threadTime
	ch <- c.writeCacheMaxSize
	ch <- c.readAheadMaxBatchSize
}

// Collect reads every directory's statistics.
func (c *storageCollector) Collect(ch chan<- prometheus.Metric) {
	metrics := c.storage.Metrics()
	if len(metrics) > 0 {
		ch <- prometheus.MustNewConstMetric(c.writeCacheMaxSize, prometheus.GaugeValue, float64(metrics[0].WriteCacheMaxSize))
		ch <- prometheus.MustNewConstMetric(c.readAheadMaxBatchSize, prometheus.GaugeValue, float64(metrics[0].ReadAheadMaxBatchSize))
	}
	for _, m := range metrics {
		dl := []string{m.LedgerDir, m.IndexDir}
		for _, o := range c.opStats {
			collectOpStats(ch, o.desc, o.stats(&m), c.timed || o.timed, dl)
		}
		for _, v := range c.counters {
			ch <- prometheus.MustNewConstMetric(v.desc, prometheus.CounterValue, v.value(&m), dl...)
		}
		for _, v := range c.gauges {
			ch <- prometheus.MustNewConstMetric(v.desc, prometheus.GaugeValue, v.value(&m), dl...)
		}
		ch <- prometheus.MustNewConstMetric(c.threadTime, prometheus.CounterValue, float64(m.DBStorageThreadTime.Milliseconds()),
			m.LedgerDir, m.IndexDir, "db-storage", "0")
		collectValueStats(ch, c.flushSize, &m.FlushSize, dl)
		collectValueStats(ch, c.readAheadCount, &m.ReadAheadBatchCount, dl)
		collectValueStats(ch, c.readAheadSize, &m.ReadAheadBatchSize, dl)
	}
}

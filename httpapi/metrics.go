package httpapi

import (
	"math"
	"strconv"
	"time"

	"github.com/bookie-index/bookie-index/internal/opstats"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names. The first three are BookKeeper's (EntryLocationIndexStats,
// exported as "bookie_" + name with '-' → '_'), so that dashboards keep
// working; the rest are ours.
const (
	metricEntriesCount         = "bookie_entries_count"
	metricLookupEntryLocation  = "bookie_lookup_entry_location"
	metricGetLastEntryInLedger = "bookie_get_last_entry_in_ledger"
	// metricEntryLocationCompactions keeps upstream's upper case.
	metricEntryLocationCompactions = "bookie_ENTRY_LOCATION_COMPACTION_TOTAL"

	lsmPrefix        = "bookie_index_lsm_"
	compactionPrefix = "bookie_index_entry_location_"
)

// dirLabels are BookKeeper's labels of a directory's metrics.
var dirLabels = []string{"ledgerDir", "indexDir"}

// labels returns dirLabels followed by extra.
func labels(extra ...string) []string {
	return append(append([]string(nil), dirLabels...), extra...)
}

// engineMetric describes one number of lsm.Metrics.
type engineMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(m *lsm.Metrics) float64
	// timed metrics exist only with statistics enabled.
	timed bool
}

// collector exports the Service's directories' metrics. It reads them when
// scraped, so the indexes pay nothing between scrapes.
type collector struct {
	s *Service

	entriesCount, lookup, lastEntry *prometheus.Desc

	levelTables, levelBytes, levelEntries, levelScore *prometheus.Desc
	writeStalls                                       *prometheus.Desc
	cacheHits, cacheMisses, cacheEvictions            *prometheus.Desc
	cacheInsertedBytes                                *prometheus.Desc
	engine                                            []engineMetric

	compactions, compacting, lastCompaction *prometheus.Desc
	// entryLocationCompactions is upstream's GarbageCollectorStats
	// counter of the same name.
	entryLocationCompactions *prometheus.Desc
}

func newCollector(s *Service) *collector {
	c := &collector{s: s}
	c.entriesCount = prometheus.NewDesc(metricEntriesCount,
		"Estimated number of entry locations in the index (RocksDB's estimate-num-keys upstream); -1 after the index is closed.",
		dirLabels, nil)
	c.lookup = prometheus.NewDesc(metricLookupEntryLocation,
		"GetLocation calls and their latency in milliseconds; a miss counts as success=\"false\". Quantiles and sum only with enableStatistics.",
		labels("success"), nil)
	c.lastEntry = prometheus.NewDesc(metricGetLastEntryInLedger,
		"GetLastEntryInLedger calls and their latency in milliseconds; a ledger with no entry counts as success=\"false\". Quantiles and sum only with enableStatistics.",
		labels("success"), nil)

	c.levelTables = prometheus.NewDesc(lsmPrefix+"level_tables", "Tables in each level.", labels("level"), nil)
	c.levelBytes = prometheus.NewDesc(lsmPrefix+"level_bytes", "Bytes of the tables of each level.", labels("level"), nil)
	c.levelEntries = prometheus.NewDesc(lsmPrefix+"level_entries", "Point entries (not range deletions) in the tables of each level.", labels("level"), nil)
	c.levelScore = prometheus.NewDesc(lsmPrefix+"level_score", "Compaction score of each level: its size over its target; >= 1 wants a compaction.", labels("level"), nil)
	c.writeStalls = prometheus.NewDesc(lsmPrefix+"write_stalls_total", "Writes delayed (kind=\"slowdown\") or stopped (kind=\"stop\") because flushes or L0 compactions fell behind.", labels("kind"), nil)
	c.cacheHits = prometheus.NewDesc(lsmPrefix+"block_cache_hits_total", "Block cache hits by kind of block (data, index, filter, top-level).", labels("block"), nil)
	c.cacheMisses = prometheus.NewDesc(lsmPrefix+"block_cache_misses_total", "Block cache misses by kind of block.", labels("block"), nil)
	c.cacheEvictions = prometheus.NewDesc(lsmPrefix+"block_cache_evictions_total", "Blocks evicted from the cache to make room, by kind of block.", labels("block"), nil)
	c.cacheInsertedBytes = prometheus.NewDesc(lsmPrefix+"block_cache_inserted_bytes_total", "Bytes of the blocks inserted into the cache, by kind of block.", labels("block"), nil)

	gauge := func(name, help string, f func(m *lsm.Metrics) float64) {
		c.engine = append(c.engine, engineMetric{prometheus.NewDesc(lsmPrefix+name, help, dirLabels, nil), prometheus.GaugeValue, f, false})
	}
	counter := func(name, help string, f func(m *lsm.Metrics) float64) {
		c.engine = append(c.engine, engineMetric{prometheus.NewDesc(lsmPrefix+name, help, dirLabels, nil), prometheus.CounterValue, f, false})
	}
	timedCounter := func(name, help string, f func(m *lsm.Metrics) float64) {
		c.engine = append(c.engine, engineMetric{prometheus.NewDesc(lsmPrefix+name, help, dirLabels, nil), prometheus.CounterValue, f, true})
	}
	gauge("memtables", "Memtables, the mutable one and those waiting for a flush.", func(m *lsm.Metrics) float64 { return float64(m.MemTables) })
	gauge("memtable_bytes", "Bytes in use in the memtables.", func(m *lsm.Metrics) float64 { return float64(m.MemTableBytes) })
	gauge("compactions_running", "Compactions running.", func(m *lsm.Metrics) float64 { return float64(m.CompactionsRunning) })
	gauge("write_amplification", "Bytes written by flushes and compactions over bytes flushed.", func(m *lsm.Metrics) float64 { return m.WriteAmplification })
	gauge("block_cache_capacity_bytes", "Block cache capacity.", func(m *lsm.Metrics) float64 { return float64(m.BlockCache.Capacity) })
	gauge("block_cache_usage_bytes", "Bytes the block cache holds.", func(m *lsm.Metrics) float64 { return float64(m.BlockCache.Usage) })
	gauge("block_cache_pinned_bytes", "Bytes of index and filter blocks pinned by open tables, taken from the cache's capacity.", func(m *lsm.Metrics) float64 { return float64(m.BlockCache.PinnedUsage) })
	gauge("block_cache_entries", "Blocks in the cache.", func(m *lsm.Metrics) float64 { return float64(m.BlockCache.Entries) })
	gauge("block_cache_allocated_bytes", "Memory of the blocks the cache has handed out: cached, held by readers or read for one lookup (outside the Go heap).",
		func(m *lsm.Metrics) float64 { return float64(m.BlockCache.AllocatedBytes) })
	gauge("block_cache_mapped_bytes", "Memory the block cache holds from the system for its blocks: the allocated bytes and the free space between them.",
		func(m *lsm.Metrics) float64 { return float64(m.BlockCache.MappedBytes) })
	gauge("snapshots", "Open snapshots.", func(m *lsm.Metrics) float64 { return float64(m.Snapshots) })
	gauge("out_of_space", "1 while writes are refused because a flush, WAL or manifest write failed for lack of space; retried in the background.",
		func(m *lsm.Metrics) float64 { return bool01(m.OutOfSpace) })
	gauge("compactions_out_of_space", "1 while compactions pause because one failed for lack of space.",
		func(m *lsm.Metrics) float64 { return bool01(m.CompactionsOutOfSpace) })
	counter("no_space_errors_total", "Flushes, WAL and manifest writes and compactions that failed for lack of space.",
		func(m *lsm.Metrics) float64 { return float64(m.NoSpaceErrors) })
	counter("no_space_recoveries_total", "Times writes were taken again after an out-of-space failure.",
		func(m *lsm.Metrics) float64 { return float64(m.NoSpaceRecoveries) })
	counter("block_cache_oversized_rejects_total", "Blocks not cached because they were larger than a cache shard.", func(m *lsm.Metrics) float64 { return float64(m.BlockCache.OversizedRejects) })
	counter("flushes_total", "Memtable flushes.", func(m *lsm.Metrics) float64 { return float64(m.ImmutableFlushes) })
	counter("flush_bytes_total", "Bytes written by memtable flushes.", func(m *lsm.Metrics) float64 { return float64(m.FlushBytes) })
	counter("compactions_total", "Compactions, automatic and manual.", func(m *lsm.Metrics) float64 { return float64(m.Compactions) })
	counter("compaction_read_bytes_total", "Bytes of tables read by compactions.", func(m *lsm.Metrics) float64 { return float64(m.CompactionBytesIn) })
	counter("compaction_written_bytes_total", "Bytes of tables written by compactions.", func(m *lsm.Metrics) float64 { return float64(m.CompactionBytesOut) })
	counter("trivial_moves_total", "Compactions that moved a table to the next level without rewriting it.", func(m *lsm.Metrics) float64 { return float64(m.TrivialMoves) })
	counter("batches_total", "Write batches committed.", func(m *lsm.Metrics) float64 { return float64(m.Batches) })
	counter("synced_batches_total", "Write batches committed with a WAL sync.", func(m *lsm.Metrics) float64 { return float64(m.SyncedBatches) })
	counter("keys_written_total", "Operations written (sets, deletions, range deletions).", func(m *lsm.Metrics) float64 { return float64(m.KeysWritten) })
	counter("wal_bytes_total", "Bytes written to the write-ahead log.", func(m *lsm.Metrics) float64 { return float64(m.WALBytes) })
	counter("wal_syncs_total", "Write-ahead log syncs.", func(m *lsm.Metrics) float64 { return float64(m.WALSyncs) })
	counter("gets_total", "Point lookups.", func(m *lsm.Metrics) float64 { return float64(m.Gets) })
	counter("iterators_total", "Iterators opened (GetLastEntryInLedger uses one).", func(m *lsm.Metrics) float64 { return float64(m.Iterators) })
	counter("range_deletion_skips_total", "Seeks that skipped a run of entries deleted by a range deletion instead of stepping through it.", func(m *lsm.Metrics) float64 { return float64(m.RangeDeletionSkips) })
	counter("obsolete_files_deleted_total", "Obsolete files (tables, logs, manifests) deleted.", func(m *lsm.Metrics) float64 { return float64(m.ObsoleteFilesGone) })
	timedCounter("write_stall_seconds_total", "Time writes spent delayed or stopped (with enableStatistics).", func(m *lsm.Metrics) float64 { return seconds(m.StallNanos) })
	timedCounter("commit_seconds_total", "Time spent committing batches (with enableStatistics).", func(m *lsm.Metrics) float64 { return seconds(m.CommitNanos) })

	c.compactions = prometheus.NewDesc(compactionPrefix+"compactions_total",
		"Full entry location index compactions that ended, by what started them (trigger=\"http\" or \"periodic\") and how they ended (result=\"completed\", \"cancelled\" or \"failed\").",
		labels("trigger", "result"), nil)
	c.compacting = prometheus.NewDesc(compactionPrefix+"compacting",
		"1 while the index is being fully compacted.", dirLabels, nil)
	c.lastCompaction = prometheus.NewDesc(compactionPrefix+"last_compaction_timestamp_seconds",
		"When the last full compaction started (upstream's lastEntryLocationCompactionTime), in seconds since the epoch; 0 if none.", dirLabels, nil)
	c.entryLocationCompactions = prometheus.NewDesc(metricEntryLocationCompactions,
		"Full entry location index compactions started (upstream's GarbageCollectorStats counter; the entryLocationCompactionCounter of gc_details).", dirLabels, nil)
	return c
}

// Describe sends every descriptor.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.entriesCount, c.lookup, c.lastEntry,
		c.levelTables, c.levelBytes, c.levelEntries, c.levelScore, c.writeStalls,
		c.cacheHits, c.cacheMisses, c.cacheEvictions, c.cacheInsertedBytes,
		c.compactions, c.compacting, c.lastCompaction, c.entryLocationCompactions,
	} {
		ch <- d
	}
	for _, e := range c.engine {
		ch <- e.desc
	}
}

// Collect reads every directory's metrics.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	timed := c.s.opts.EnableStatistics
	for _, d := range c.s.dirs {
		m := d.Index.Metrics()
		dl := []string{d.LedgerDir, d.IndexDir}
		ch <- prometheus.MustNewConstMetric(c.entriesCount, prometheus.GaugeValue, float64(m.EntriesCount), dl...)
		collectOpStats(ch, c.lookup, &m.LookupEntryLocation, timed, dl)
		collectOpStats(ch, c.lastEntry, &m.GetLastEntryInLedger, timed, dl)

		e := &m.Engine
		for level, lm := range e.Levels {
			l := append(dl[:2:2], strconv.Itoa(level))
			ch <- prometheus.MustNewConstMetric(c.levelTables, prometheus.GaugeValue, float64(lm.Tables), l...)
			ch <- prometheus.MustNewConstMetric(c.levelBytes, prometheus.GaugeValue, float64(lm.Bytes), l...)
			ch <- prometheus.MustNewConstMetric(c.levelEntries, prometheus.GaugeValue, float64(lm.Entries), l...)
			ch <- prometheus.MustNewConstMetric(c.levelScore, prometheus.GaugeValue, lm.Score, l...)
		}
		ch <- prometheus.MustNewConstMetric(c.writeStalls, prometheus.CounterValue, float64(e.WriteSlowdowns), append(dl[:2:2], "slowdown")...)
		ch <- prometheus.MustNewConstMetric(c.writeStalls, prometheus.CounterValue, float64(e.WriteStops), append(dl[:2:2], "stop")...)
		for _, k := range []struct {
			name string
			m    *lsm.CacheKindMetrics
		}{{"data", &e.BlockCache.Data}, {"index", &e.BlockCache.Index}, {"filter", &e.BlockCache.Filter}, {"top-level", &e.BlockCache.TopLevel}} {
			l := append(dl[:2:2], k.name)
			ch <- prometheus.MustNewConstMetric(c.cacheHits, prometheus.CounterValue, float64(k.m.Hits), l...)
			ch <- prometheus.MustNewConstMetric(c.cacheMisses, prometheus.CounterValue, float64(k.m.Misses), l...)
			ch <- prometheus.MustNewConstMetric(c.cacheEvictions, prometheus.CounterValue, float64(k.m.Evictions), l...)
			ch <- prometheus.MustNewConstMetric(c.cacheInsertedBytes, prometheus.CounterValue, float64(k.m.BytesInserted), l...)
		}
		for _, em := range c.engine {
			if em.timed && !timed {
				continue
			}
			ch <- prometheus.MustNewConstMetric(em.desc, em.kind, em.value(e), dl...)
		}
	}
	c.collectCompactions(ch)
}

// collectOpStats exports a Stats as upstream's Prometheus provider
// exports an OpStatsLogger: a summary per success="true|false" with
// quantiles and a sum in milliseconds. As upstream's, the quantiles are
// those of the last completed rollover window (NaN if it saw no
// operation), the count and the sum the whole life's. Without statistics
// only the counts are known: the sum is 0 and there are no quantiles.
func collectOpStats(ch chan<- prometheus.Metric, desc *prometheus.Desc, s *opstats.Stats, timed bool, dl []string) {
	collectSummary(ch, desc, s, timed, millis, dl)
}

// collectValueStats exports a Stats of values (opstats.Recorder.AddValue)
// as upstream's provider exports an OpStatsLogger fed with
// registerSuccessfulValue: the same summaries, the sums and quantiles in
// the values' own unit (bytes, entries).
func collectValueStats(ch chan<- prometheus.Metric, desc *prometheus.Desc, s *opstats.Stats, dl []string) {
	collectSummary(ch, desc, s, true, func(d time.Duration) float64 { return float64(d) / opstats.ValueUnit }, dl)
}

// collectSummary is collectOpStats with unit converting what the
// histograms hold into the exported unit.
func collectSummary(ch chan<- prometheus.Metric, desc *prometheus.Desc, s *opstats.Stats, timed bool, unit func(time.Duration) float64, dl []string) {
	for _, side := range []struct {
		success string
		count   int64
		latency *opstats.LatencyStats
		window  *opstats.LatencyStats
	}{{"true", s.SuccessCount, &s.SuccessLatency, &s.SuccessWindow}, {"false", s.FailureCount, &s.FailureLatency, &s.FailureWindow}} {
		var sum float64
		var quantiles map[float64]float64
		if timed {
			sum = unit(side.latency.Sum)
			quantiles = make(map[float64]float64)
			for _, q := range opstats.SummaryQuantiles() {
				v := math.NaN()
				if side.window.Count > 0 {
					v = unit(side.window.Quantile(q))
				}
				quantiles[q] = v
			}
		}
		ch <- prometheus.MustNewConstSummary(desc, uint64(max(side.count, 0)), sum, quantiles, append(dl[:len(dl):len(dl)], side.success)...)
	}
}

// collectCompactions exports the Service's record of full compactions.
func (c *collector) collectCompactions(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for _, d := range c.s.dirs {
		dl := []string{d.LedgerDir, d.IndexDir}
		for _, t := range []Trigger{TriggerHTTP, TriggerPeriodic} {
			for _, o := range []string{outcomeCompleted, outcomeCancelled, outcomeFailed} {
				ch <- prometheus.MustNewConstMetric(c.compactions, prometheus.CounterValue,
					float64(d.outcomes[outcomeKey{t, o}]), append(dl[:2:2], string(t), o)...)
			}
		}
		var compacting, last float64
		if d.compactingLocked() {
			compacting = 1
		}
		if !d.lastStart.IsZero() {
			last = float64(d.lastStart.UnixMilli()) / 1e3
		}
		ch <- prometheus.MustNewConstMetric(c.compacting, prometheus.GaugeValue, compacting, dl...)
		ch <- prometheus.MustNewConstMetric(c.lastCompaction, prometheus.GaugeValue, last, dl...)
		ch <- prometheus.MustNewConstMetric(c.entryLocationCompactions, prometheus.CounterValue, float64(d.counter), dl...)
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func seconds(nanos int64) float64 { return float64(nanos) / 1e9 }

// bool01 is a boolean as a Prometheus value.
func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

package httpapi

import (
	"strconv"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/internal/opstats"
	"github.com/prometheus/client_golang/prometheus"
)

// gcCollector exports the garbage collectors' statistics with upstream's
// GarbageCollectorStats names ("bookie_" + name), labelled by directory.
type gcCollector struct {
	gc       GarbageCollector
	counters []gcValue
	gauges   []gcValue
	opStats  []gcOpStat
	// usageBuckets[i] is entry_log_usage_buckets_le_<(i+1)*10>.
	usageBuckets [bookie.EntryLogUsageBuckets]*prometheus.Desc
}

type gcValue struct {
	desc  *prometheus.Desc
	value func(m *bookie.GCMetrics) float64
}

type gcOpStat struct {
	desc  *prometheus.Desc
	stats func(m *bookie.GCMetrics) *opstats.Stats
}

func newGCCollector(gc GarbageCollector) *gcCollector {
	c := &gcCollector{gc: gc}
	counter := func(stat, help string, f func(m *bookie.GCMetrics) float64) {
		c.counters = append(c.counters, gcValue{prometheus.NewDesc("bookie_"+stat, help, dirLabels, nil), f})
	}
	gauge := func(stat, help string, f func(m *bookie.GCMetrics) float64) {
		c.gauges = append(c.gauges, gcValue{prometheus.NewDesc("bookie_"+stat, help, dirLabels, nil), f})
	}
	op := func(stat, help string, f func(m *bookie.GCMetrics) *opstats.Stats) {
		c.opStats = append(c.opStats, gcOpStat{prometheus.NewDesc("bookie_"+stat, help, labels("success"), nil), f})
	}
	counter(bookie.StatMajorCompactionTotal, "Major compactions of entry logs run.", func(m *bookie.GCMetrics) float64 { return float64(m.MajorCompactions) })
	counter(bookie.StatMinorCompactionTotal, "Minor compactions of entry logs run.", func(m *bookie.GCMetrics) float64 { return float64(m.MinorCompactions) })
	counter(bookie.StatReclaimedDeletionSpaceBytes, "Bytes of entry logs removed because none of their ledgers was left.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ReclaimedDeletionBytes) })
	counter(bookie.StatReclaimedCompactionSpaceBytes, "Bytes of entry logs given back by compactions.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ReclaimedCompactionBytes) })
	counter(bookie.StatReclaimFailedToDelete, "Entry logs left with no live ledger whose removal failed (the cycle stops; the next one retries).",
		func(m *bookie.GCMetrics) float64 { return float64(m.ReclaimFailedToDelete) })
	counter(storagePrefix+"gc_failures_total", "Garbage-collection cycles that failed (the next one retries).",
		func(m *bookie.GCMetrics) float64 { return float64(m.Failures) })
	counter(bookie.StatDeletedLedgerTotal, "Deleted ledgers whose locations were purged.", func(m *bookie.GCMetrics) float64 { return float64(m.DeletedLedgers) })
	gauge(bookie.StatActiveLedgerTotal, "Ledgers that exist.", func(m *bookie.GCMetrics) float64 { return float64(m.ActiveLedgers) })
	gauge(bookie.StatActiveEntryLogTotal, "Rotated entry logs as of the last garbage-collection cycle.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ActiveEntryLogs) })
	gauge(bookie.StatActiveEntryLogSpaceBytes, "Bytes of live ledgers in the rotated entry logs as of the last garbage-collection cycle.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ActiveEntryLogBytes) })
	gauge(bookie.StatEntryLogSpaceBytes, "Bytes of the rotated entry logs as of the last garbage-collection cycle.",
		func(m *bookie.GCMetrics) float64 { return float64(m.EntryLogBytes) })
	gauge(bookie.StatEntryLogCompactRatio, "Fraction of the rotated entry logs the last compaction compacted.",
		func(m *bookie.GCMetrics) float64 { return m.EntryLogCompactRatio })
	op(bookie.StatThreadRuntime, "Garbage-collection cycles and their latency in milliseconds; success=\"false\" failed.",
		func(m *bookie.GCMetrics) *opstats.Stats { return &m.ThreadRuntime })
	op(bookie.StatGCLedgerRuntime, "Purges of deleted ledgers that start garbage-collection cycles, and their latency in milliseconds.",
		func(m *bookie.GCMetrics) *opstats.Stats { return &m.GCLedgerRuntime })
	op(bookie.StatExtractMetaRuntime, "Updates of the entry logs' usage and removals of the dead logs, and their latency in milliseconds.",
		func(m *bookie.GCMetrics) *opstats.Stats { return &m.ExtractMetaRuntime })
	op(bookie.StatCompactRuntime, "Compaction steps of garbage-collection cycles (one per cycle that reaches it, compacting or not), and their latency in milliseconds.",
		func(m *bookie.GCMetrics) *opstats.Stats { return &m.CompactRuntime })
	for i := range c.usageBuckets {
		le := strconv.Itoa((i + 1) * 100 / bookie.EntryLogUsageBuckets)
		bounds := "[" + strconv.Itoa(i*100/bookie.EntryLogUsageBuckets) + "%, " + le + "%)"
		if i == len(c.usageBuckets)-1 {
			bounds = bounds[:len(bounds)-1] + "]"
		}
		c.usageBuckets[i] = prometheus.NewDesc("bookie_"+bookie.StatEntryLogUsageBucketPrefix+le,
			"Rotated entry logs the last compaction found with a usage (live bytes / size) in "+bounds+".", dirLabels, nil)
	}
	return c
}

// Describe sends every descriptor.
func (c *gcCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range append(append([]gcValue(nil), c.counters...), c.gauges...) {
		ch <- v.desc
	}
	for _, o := range c.opStats {
		ch <- o.desc
	}
	for _, d := range c.usageBuckets {
		ch <- d
	}
}

// Collect reads every directory's statistics.
func (c *gcCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.gc.GCMetrics() {
		dl := []string{m.LedgerDir, m.IndexDir}
		for _, v := range c.counters {
			ch <- prometheus.MustNewConstMetric(v.desc, prometheus.CounterValue, v.value(&m), dl...)
		}
		for _, v := range c.gauges {
			ch <- prometheus.MustNewConstMetric(v.desc, prometheus.GaugeValue, v.value(&m), dl...)
		}
		for _, o := range c.opStats {
			collectOpStats(ch, o.desc, o.stats(&m), true, dl)
		}
		for i, d := range c.usageBuckets {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(m.EntryLogUsageBuckets[i]), dl...)
		}
	}
}

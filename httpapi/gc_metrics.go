package httpapi

import (
	"github.com/bookie-index/bookie-index/bookie"
	"github.com/prometheus/client_golang/prometheus"
)

// gcCollector exports the garbage collectors' statistics with upstream's
// GarbageCollectorStats names ("bookie_" + name), labelled by directory.
type gcCollector struct {
	gc       GarbageCollector
	counters []gcValue
	gauges   []gcValue
	runtime  *prometheus.Desc
}

type gcValue struct {
	desc  *prometheus.Desc
	value func(m *bookie.GCMetrics) float64
}

func newGCCollector(gc GarbageCollector) *gcCollector {
	c := &gcCollector{gc: gc}
	counter := func(stat, help string, f func(m *bookie.GCMetrics) float64) {
		c.counters = append(c.counters, gcValue{prometheus.NewDesc("bookie_"+stat, help, dirLabels, nil), f})
	}
	gauge := func(stat, help string, f func(m *bookie.GCMetrics) float64) {
		c.gauges = append(c.gauges, gcValue{prometheus.NewDesc("bookie_"+stat, help, dirLabels, nil), f})
	}
	counter(bookie.StatMajorCompactionTotal, "Major compactions of entry logs run.", func(m *bookie.GCMetrics) float64 { return float64(m.MajorCompactions) })
	counter(bookie.StatMinorCompactionTotal, "Minor compactions of entry logs run.", func(m *bookie.GCMetrics) float64 { return float64(m.MinorCompactions) })
	counter(bookie.StatReclaimedDeletionSpaceBytes, "Bytes of entry logs removed because none of their ledgers was left.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ReclaimedDeletionBytes) })
	counter(bookie.StatReclaimedCompactionSpaceBytes, "Bytes of entry logs given back by compactions.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ReclaimedCompactionBytes) })
	counter(storagePrefix+"gc_failures_total", "Garbage-collection cycles that failed (the next one retries).",
		func(m *bookie.GCMetrics) float64 { return float64(m.Failures) })
	counter(bookie.StatDeletedLedgerTotal, "Deleted ledgers whose locations were purged.", func(m *bookie.GCMetrics) float64 { return float64(m.DeletedLedgers) })
	gauge(bookie.StatActiveLedgerTotal, "Ledgers that exist.", func(m *bookie.GCMetrics) float64 { return float64(m.ActiveLedgers) })
	gauge(bookie.StatActiveEntryLogTotal, "Rotated entry logs as of the last garbage-collection cycle.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ActiveEntryLogs) })
	gauge(bookie.StatActiveEntryLogSpaceBytes, "Bytes of the rotated entry logs as of the last garbage-collection cycle.",
		func(m *bookie.GCMetrics) float64 { return float64(m.ActiveEntryLogBytes) })
	c.runtime = prometheus.NewDesc("bookie_"+bookie.StatThreadRuntime, "Garbage-collection cycles (count) and their total time in milliseconds (sum).", dirLabels, nil)
	return c
}

// Describe sends every descriptor.
func (c *gcCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range append(append([]gcValue(nil), c.counters...), c.gauges...) {
		ch <- v.desc
	}
	ch <- c.runtime
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
		ch <- prometheus.MustNewConstSummary(c.runtime, uint64(max(m.Cycles, 0)), float64(m.CycleNanos)/1e6, nil, dl...)
	}
}

package httpapi

import (
	"net/http"
	"strconv"

	"github.com/bookie-index/bookie-index/internal/opstats"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/prometheus/client_golang/prometheus"
)

// PathLastLogMark is upstream's GetLastLogMarkService.
const PathLastLogMark = "/api/v1/bookie/last_log_mark"

// msgLastLogMarkMethod is upstream's answer to another method than GET.
const msgLastLogMarkMethod = "Not found method. Should be GET method"

// Journals is what the last_log_mark endpoint and the journal metrics need
// from the bookie's journals; *journal.Set implements it.
type Journals interface {
	// LastLogMarks returns each journal's last log mark, as its lastMark
	// files hold it.
	LastLogMarks() []journal.LogMark
	// Metrics returns each journal's statistics.
	Metrics() []journal.Metrics
}

// serveLastLogMark answers each journal's last log mark, the position the
// last checkpoint recorded in the lastMark files (a restart replays the
// journal from there), in upstream's shape:
//
//	{"LastLogMark: Journal Id - 1797003339234(1a26a1c7ae2.txn)" : "Pos - 4096"}
//
// one field per journal, in journal order (upstream's is a hash map's).
// Other methods get 404, as upstream answers them.
func (s *Service) serveLastLogMark(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotServed(w, http.StatusNotFound, "GET", msgLastLogMarkMethod)
		return
	}
	marks := s.opts.Journals.LastLogMarks()
	obj := make(jsonObject, 0, len(marks))
	for _, m := range marks {
		obj = append(obj, jsonField{
			"LastLogMark: Journal Id - " + strconv.FormatInt(m.FileID, 10) + "(" + journal.FileName(m.FileID) + ")",
			"Pos - " + strconv.FormatInt(m.Offset, 10),
		})
	}
	writeJSON(w, http.StatusOK, obj)
}

// journalPrefix is the Prometheus prefix of upstream's journal scope.
const journalPrefix = "bookie_journal_"

// journalCollector exports the journals' statistics with upstream's
// JournalStats names ("bookie_journal_" + name), labelled journalIndex as
// upstream labels them, and a few of ours (bookie_index_journal_*).
type journalCollector struct {
	journals Journals

	opStats    []journalOpStat
	valueStats []journalOpStat
	counters   []journalValue
	gauges     []journalValue
}

type journalOpStat struct {
	desc  *prometheus.Desc
	stats func(m *journal.Metrics) *opstats.Stats
}

type journalValue struct {
	desc  *prometheus.Desc
	value func(m *journal.Metrics) float64
}

var journalLabels = []string{"journalIndex"}

func newJournalCollector(journals Journals) *journalCollector {
	c := &journalCollector{journals: journals}
	op := func(list *[]journalOpStat, stat, help string, f func(m *journal.Metrics) *opstats.Stats) {
		*list = append(*list, journalOpStat{prometheus.NewDesc(journalPrefix+stat, help, append(journalLabels[:1:1], "success"), nil), f})
	}
	op(&c.opStats, journal.StatAddEntry, "Adds journaled (entries, master keys, fences, explicit LACs), and their latency in milliseconds from queueing to durability (the fsync that covers them, with journalSyncData).",
		func(m *journal.Metrics) *opstats.Stats { return &m.AddEntry })
	op(&c.opStats, journal.StatForceLedger, "Force-ledger requests, and their latency in milliseconds.",
		func(m *journal.Metrics) *opstats.Stats { return &m.ForceLedger })
	op(&c.opStats, journal.StatSync, "Fsyncs of journal files, and their latency in milliseconds.",
		func(m *journal.Metrics) *opstats.Stats { return &m.Sync })
	op(&c.opStats, journal.StatFlushLatency, "Writes of batches to journal files (written, not yet synced), and their latency in milliseconds.",
		func(m *journal.Metrics) *opstats.Stats { return &m.Flush })
	op(&c.opStats, journal.StatCreationLatency, "Journal files created (header synced), and how long it took in milliseconds.",
		func(m *journal.Metrics) *opstats.Stats { return &m.Creation })
	op(&c.valueStats, journal.StatForceWriteBatchCount, "Adds in each batch written (quantiles, sum in adds).",
		func(m *journal.Metrics) *opstats.Stats { return &m.BatchEntries })
	op(&c.valueStats, journal.StatForceWriteBatchBytes, "Bytes of each batch written, padding included (quantiles, sum in bytes).",
		func(m *journal.Metrics) *opstats.Stats { return &m.BatchBytes })
	op(&c.valueStats, journal.StatForceWriteGrouping, "Batches each fsync covered (quantiles, sum in batches).",
		func(m *journal.Metrics) *opstats.Stats { return &m.SyncGrouping })
	value := func(list *[]journalValue, name, help string, f func(m *journal.Metrics) float64) {
		*list = append(*list, journalValue{prometheus.NewDesc(name, help, journalLabels, nil), f})
	}
	value(&c.counters, journalPrefix+journal.StatWriteBytes, "Bytes written to journal files, padding included.",
		func(m *journal.Metrics) float64 { return float64(m.WriteBytes) })
	value(&c.counters, journalPrefix+journal.StatFlushMaxWait, "Batches written because their first add had waited journalMaxGroupWaitMSec.",
		func(m *journal.Metrics) float64 { return float64(m.FlushMaxWait) })
	value(&c.counters, journalPrefix+journal.StatFlushMaxOutstanding, "Batches written because they held more than journalBufferedWritesThreshold bytes or journalBufferedEntriesThreshold adds.",
		func(m *journal.Metrics) float64 { return float64(m.FlushMaxOutstanding) })
	value(&c.counters, journalPrefix+journal.StatFlushEmptyQueue, "Batches written because nothing more was queued (journalFlushWhenQueueEmpty, a group wait of 0, or a close).",
		func(m *journal.Metrics) float64 { return float64(m.FlushEmptyQueue) })
	value(&c.counters, "bookie_index_journal_flush_adaptive_total", "Batches written because they held as many adds as the batch before (journalAdaptiveGroupWrites).",
		func(m *journal.Metrics) float64 { return float64(m.FlushAdaptive) })
	value(&c.counters, "bookie_index_journal_syncs_total", "Fsyncs of journal files.",
		func(m *journal.Metrics) float64 { return float64(m.Syncs) })
	value(&c.gauges, journalPrefix+journal.StatQueueSize, "Adds queued and not written yet.",
		func(m *journal.Metrics) float64 { return float64(m.QueueSize) })
	value(&c.gauges, journalPrefix+journal.StatForceWriteQueueSize, "Batches written and not synced yet.",
		func(m *journal.Metrics) float64 { return float64(m.ForceWriteQueueSize) })
	value(&c.gauges, "bookie_index_journal_failed", "1 once a write or an fsync of the journal failed (it refuses adds until a restart), else 0.",
		func(m *journal.Metrics) float64 { return bool01(m.Failed) })
	value(&c.gauges, "bookie_index_journal_last_log_mark_file_id", "The journal file id of the last log mark the lastMark files hold (the last checkpoint's).",
		func(m *journal.Metrics) float64 { return float64(m.LastMark.FileID) })
	value(&c.gauges, "bookie_index_journal_last_log_mark_offset", "The offset of that mark in its file.",
		func(m *journal.Metrics) float64 { return float64(m.LastMark.Offset) })
	return c
}

// Describe sends every descriptor.
func (c *journalCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, o := range append(append([]journalOpStat(nil), c.opStats...), c.valueStats...) {
		ch <- o.desc
	}
	for _, v := range append(append([]journalValue(nil), c.counters...), c.gauges...) {
		ch <- v.desc
	}
}

// Collect reads every journal's statistics.
func (c *journalCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.journals.Metrics() {
		l := []string{strconv.Itoa(m.Index)}
		for _, o := range c.opStats {
			collectOpStats(ch, o.desc, o.stats(&m), true, l)
		}
		for _, o := range c.valueStats {
			collectValueStats(ch, o.desc, o.stats(&m), l)
		}
		for _, v := range c.counters {
			ch <- prometheus.MustNewConstMetric(v.desc, prometheus.CounterValue, v.value(&m), l...)
		}
		for _, v := range c.gauges {
			ch <- prometheus.MustNewConstMetric(v.desc, prometheus.GaugeValue, v.value(&m), l...)
		}
	}
}

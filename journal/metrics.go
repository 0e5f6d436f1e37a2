package journal

import (
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/internal/opstats"
)

// Names of the journal's statistics, as upstream's JournalStats registers
// them in its "journal" scope, labelled journalIndex. A Prometheus
// exporter names them "bookie_journal_" + the name.
const (
	StatAddEntry             = "JOURNAL_ADD_ENTRY"
	StatForceLedger          = "JOURNAL_FORCE_LEDGER"
	StatSync                 = "JOURNAL_SYNC"
	StatFlushLatency         = "JOURNAL_FLUSH_LATENCY"
	StatCreationLatency      = "JOURNAL_CREATION_LATENCY"
	StatForceWriteBatchCount = "JOURNAL_FORCE_WRITE_BATCH_ENTRIES"
	StatForceWriteBatchBytes = "JOURNAL_FORCE_WRITE_BATCH_BYTES"
	StatForceWriteGrouping   = "JOURNAL_FORCE_WRITE_GROUPING_TOTAL"
	StatQueueSize            = "JOURNAL_QUEUE_SIZE"
	StatForceWriteQueueSize  = "JOURNAL_FORCE_WRITE_QUEUE_SIZE"
	StatWriteBytes           = "JOURNAL_WRITE_BYTES"
	StatFlushMaxWait         = "JOURNAL_NUM_FLUSH_MAX_WAIT"
	StatFlushMaxOutstanding  = "JOURNAL_NUM_FLUSH_MAX_OUTSTANDING_BYTES"
	StatFlushEmptyQueue      = "JOURNAL_NUM_FLUSH_EMPTY_QUEUE"
)

// Metrics is a snapshot of one journal's statistics, named after
// upstream's JournalStats.
type Metrics struct {
	// Index is the journal's position in the Set (upstream's journalIndex
	// label); Dir its directory.
	Index int
	Dir   string
	// AddEntry times each add (entries and meta-entries) from its queueing
	// to its completion (JOURNAL_ADD_ENTRY): with journalSyncData, the
	// fsync that covers it; a failed add counts as a failure.
	// ForceLedger likewise for ForceLedger requests (JOURNAL_FORCE_LEDGER).
	AddEntry, ForceLedger opstats.Stats
	// Sync times the fsyncs of journal files (JOURNAL_SYNC); Flush the
	// writes of batches to the file (JOURNAL_FLUSH_LATENCY: written, not
	// yet synced); Creation the creation of journal files, header synced
	// (JOURNAL_CREATION_LATENCY).
	Sync, Flush, Creation opstats.Stats
	// BatchEntries and BatchBytes hold the adds and the bytes (padding
	// included) of each batch written (JOURNAL_FORCE_WRITE_BATCH_ENTRIES,
	// _BYTES); SyncGrouping the batches each fsync covered
	// (JOURNAL_FORCE_WRITE_GROUPING_TOTAL). Values, not latencies.
	BatchEntries, BatchBytes, SyncGrouping opstats.Stats
	// FlushMaxWait, FlushMaxOutstanding and FlushEmptyQueue count the
	// batches written because their first add had waited
	// journalMaxGroupWaitMSec, because they held more than the buffered
	// thresholds, or because nothing more was queued
	// (journalFlushWhenQueueEmpty, a group wait of 0, or Close);
	// FlushAdaptive those written because they held as many adds as the
	// batch before (journalAdaptiveGroupWrites, ours).
	FlushMaxWait, FlushMaxOutstanding, FlushEmptyQueue, FlushAdaptive int64
	// QueueSize is the adds queued and not written yet
	// (JOURNAL_QUEUE_SIZE); ForceWriteQueueSize the batches written and
	// not synced yet (JOURNAL_FORCE_WRITE_QUEUE_SIZE).
	QueueSize, ForceWriteQueueSize int64
	// WriteBytes counts the bytes written, padding included
	// (JOURNAL_WRITE_BYTES).
	WriteBytes int64
	// Adds, Batches and Syncs are Stats' counts.
	Adds, Batches, Syncs int64
	// CurrentMark is the end of what a completed fsync covers; LastMark
	// the mark the lastMark files hold (the last checkpoint's).
	CurrentMark, LastMark LogMark
	// Failed reports whether a write or an fsync failed (the journal
	// refuses adds).
	Failed bool
}

// journalStats are a journal's recorders and counters.
type journalStats struct {
	// epoch is the origin of the adds' queueing times (batch.starts).
	epoch time.Time

	addEntry, forceLedger, sync, flush, creation opstats.Recorder
	batchEntries, batchBytes, syncGrouping       opstats.Recorder
	flushMaxWait, flushMaxOutstanding            atomic.Int64
	flushEmptyQueue, flushAdaptive               atomic.Int64
	queued, unsynced                             atomic.Int64
}

func (s *journalStats) init() {
	s.epoch = time.Now()
	for _, r := range []*opstats.Recorder{&s.addEntry, &s.forceLedger, &s.sync, &s.flush, &s.creation} {
		r.Timed = true
	}
}

// since returns the time since the epoch, an add's queueing time.
func (s *journalStats) since() int64 { return int64(time.Since(s.epoch)) }

// recordAdds records the completion of a batch's adds at now.
func (s *journalStats) recordAdds(b *batch, now time.Time) {
	ok := b.err == nil
	for _, start := range b.starts {
		s.addEntry.DoneAt(ok, s.epoch.Add(time.Duration(start)), now)
	}
	for _, start := range b.forceStarts {
		s.forceLedger.DoneAt(ok, s.epoch.Add(time.Duration(start)), now)
	}
}

// Metrics returns a snapshot of the journal's statistics.
func (j *Journal) Metrics(index int) Metrics {
	s := &j.m
	st := j.Stats()
	return Metrics{
		Index:               index,
		Dir:                 j.root,
		AddEntry:            s.addEntry.Snapshot(),
		ForceLedger:         s.forceLedger.Snapshot(),
		Sync:                s.sync.Snapshot(),
		Flush:               s.flush.Snapshot(),
		Creation:            s.creation.Snapshot(),
		BatchEntries:        s.batchEntries.Snapshot(),
		BatchBytes:          s.batchBytes.Snapshot(),
		SyncGrouping:        s.syncGrouping.Snapshot(),
		FlushMaxWait:        s.flushMaxWait.Load(),
		FlushMaxOutstanding: s.flushMaxOutstanding.Load(),
		FlushEmptyQueue:     s.flushEmptyQueue.Load(),
		FlushAdaptive:       s.flushAdaptive.Load(),
		QueueSize:           max(s.queued.Load(), 0),
		ForceWriteQueueSize: max(s.unsynced.Load(), 0),
		WriteBytes:          st.Bytes,
		Adds:                st.Adds,
		Batches:             st.Batches,
		Syncs:               st.Syncs,
		CurrentMark:         j.CurrentMark(),
		LastMark:            j.LastLogMark(),
		Failed:              j.Err() != nil,
	}
}

// Metrics returns every journal's statistics, in directory order.
func (s *Set) Metrics() []Metrics {
	m := make([]Metrics, len(s.journals))
	for i, j := range s.journals {
		m[i] = j.Metrics(i)
	}
	return m
}

// LastLogMarks returns every journal's last log mark, as its lastMark
// files hold it (upstream's last_log_mark endpoint reads them), in
// directory order.
func (s *Set) LastLogMarks() []LogMark {
	m := make([]LogMark, len(s.journals))
	for i, j := range s.journals {
		m[i] = j.LastLogMark()
	}
	return m
}

package bookie

import (
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/internal/opstats"
)

// opRecorder counts always, latencies when Timed.
type opRecorder = opstats.Recorder

// dirStats are a directory's counters, named after upstream's
// DbLedgerStorageStats.
type dirStats struct {
	addEntry, readEntry                 opRecorder
	flush, flushEntryLog                opRecorder
	flushLocationsIndex, flushLedgerIdx opRecorder
	throttledWrite                      opRecorder
	rejectedWrites                      atomic.Int64
	writeCacheHits, writeCacheMisses    atomic.Int64
	readCacheHits, readCacheMisses      atomic.Int64
	readAheadBatches, readAheadEntries  atomic.Int64
	readAheadBytes                      atomic.Int64
	readLocationsIndexNanos             atomic.Int64
	readEntryLogNanos                   atomic.Int64
	readAheadNanos                      atomic.Int64
	readAheadIndexLookups               atomic.Int64
	flushBytes, flushEntries            atomic.Int64
	purges, purgeFailures               atomic.Int64
	purgedLedgers                       atomic.Int64
	readCorruptions                     atomic.Int64
	lastCheckpointNanos                 atomic.Int64 // Unix nanos of the last completed checkpoint
	checkpointFailures                  atomic.Int64 // checkpoints failed in a row
	dbStorageThreadNanos                atomic.Int64 // checkpoints a full write cache asked for

	// flushSize, readAheadBatchCount and readAheadBatchSize take values
	// (AddValue), as upstream's flush-size, readahead-batch-count and
	// readahead-batch-size OpStatsLoggers: bytes per checkpoint, entries
	// and bytes per read-ahead.
	flushSize, readAheadBatchCount, readAheadBatchSize opRecorder
}

func newDirStats(timed bool, rollover time.Duration) *dirStats {
	s := &dirStats{}
	for _, r := range []*opRecorder{&s.addEntry, &s.readEntry, &s.flush, &s.flushEntryLog, &s.flushLocationsIndex, &s.flushLedgerIdx, &s.throttledWrite,
		&s.flushSize, &s.readAheadBatchCount, &s.readAheadBatchSize} {
		r.Rollover = rollover
	}
	s.addEntry.Timed, s.readEntry.Timed = timed, timed
	// Checkpoints are few: always timed.
	for _, r := range []*opRecorder{&s.flush, &s.flushEntryLog, &s.flushLocationsIndex, &s.flushLedgerIdx, &s.throttledWrite} {
		r.Timed = true
	}
	return s
}

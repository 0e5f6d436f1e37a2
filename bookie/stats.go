package bookie

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
)

// Latency histogram layout, the one entrylocation.LatencyStats documents:
// bucket 0 below 64ns, then four buckets per power of two.
const (
	latencyMinShift       = 6
	latencySubBucketsLog2 = 2
	latencySubBuckets     = 1 << latencySubBucketsLog2
)

// latencyBucket returns the entrylocation.LatencyStats bucket of a latency
// of ns nanoseconds.
func latencyBucket(ns int64) int {
	if ns < 1<<latencyMinShift {
		return 0
	}
	e := bits.Len64(uint64(ns)) - 1
	sub := int(ns>>(e-latencySubBucketsLog2)) & (latencySubBuckets - 1)
	return min(1+(e-latencyMinShift)*latencySubBuckets+sub, entrylocation.NumLatencyBuckets-1)
}

// latencyRecorder accumulates latencies with atomics.
type latencyRecorder struct {
	count, sum, max atomic.Int64
	buckets         [entrylocation.NumLatencyBuckets]atomic.Int64
}

func (r *latencyRecorder) add(d time.Duration) {
	ns := max(int64(d), 0)
	r.count.Add(1)
	r.sum.Add(ns)
	for {
		m := r.max.Load()
		if ns <= m || r.max.CompareAndSwap(m, ns) {
			break
		}
	}
	r.buckets[latencyBucket(ns)].Add(1)
}

func (r *latencyRecorder) snapshot() entrylocation.LatencyStats {
	s := entrylocation.LatencyStats{Count: r.count.Load(), Sum: time.Duration(r.sum.Load()), Max: time.Duration(r.max.Load())}
	for i := range r.buckets {
		s.Buckets[i] = r.buckets[i].Load()
	}
	return s
}

// opRecorder keeps one operation's entrylocation.OpStats, as upstream's
// OpStatsLogger: counts always, latencies only when timed (callers then
// read the clock; otherwise they pass the zero time).
type opRecorder struct {
	timed            bool
	success, failure atomic.Int64
	successLatency   latencyRecorder
	failureLatency   latencyRecorder
}

// start returns the start time of an operation: the clock when timed.
func (r *opRecorder) start() time.Time {
	if r.timed {
		return time.Now()
	}
	return time.Time{}
}

func (r *opRecorder) done(ok bool, start time.Time) {
	if ok {
		r.success.Add(1)
	} else {
		r.failure.Add(1)
	}
	if !r.timed {
		return
	}
	d := time.Since(start)
	if ok {
		r.successLatency.add(d)
	} else {
		r.failureLatency.add(d)
	}
}

func (r *opRecorder) snapshot() entrylocation.OpStats {
	return entrylocation.OpStats{
		SuccessCount:   r.success.Load(),
		FailureCount:   r.failure.Load(),
		SuccessLatency: r.successLatency.snapshot(),
		FailureLatency: r.failureLatency.snapshot(),
	}
}

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
	flushBytes, flushEntries            atomic.Int64
	purges, purgeFailures               atomic.Int64
	purgedLedgers                       atomic.Int64
	lastCheckpointNanos                 atomic.Int64 // Unix nanos of the last completed checkpoint
}

func newDirStats(timed bool) *dirStats {
	s := &dirStats{}
	s.addEntry.timed, s.readEntry.timed = timed, timed
	// Checkpoints are few: always timed.
	for _, r := range []*opRecorder{&s.flush, &s.flushEntryLog, &s.flushLocationsIndex, &s.flushLedgerIdx, &s.throttledWrite} {
		r.timed = true
	}
	return s
}

// nanosSince returns the nanoseconds since start, or 0 when start is zero
// (statistics off).
func nanosSince(start time.Time) int64 {
	if start.IsZero() {
		return 0
	}
	return int64(time.Since(start))
}

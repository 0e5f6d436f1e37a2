package entrylocation

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
)

// Names of the index's statistics, as BookKeeper's EntryLocationIndexStats
// registers them. A Prometheus exporter names them "bookie_" + the name
// with '-' turned into '_' (bookie_entries_count, a gauge;
// bookie_lookup_entry_location and bookie_get_last_entry_in_ledger,
// summaries labelled success="true" or "false", in milliseconds).
const (
	StatEntriesCount         = "entries-count"
	StatLookupEntryLocation  = "lookup-entry-location"
	StatGetLastEntryInLedger = "get-last-entry-in-ledger"
)

// SummaryQuantiles returns the quantiles BookKeeper's Prometheus provider
// exports for an OpStats summary.
func SummaryQuantiles() []float64 {
	return []float64{0.5, 0.75, 0.95, 0.99, 0.999, 0.9999, 1.0}
}

// Metrics is a snapshot of an Index's statistics.
type Metrics struct {
	// EntriesCount is the engine's estimate of the keys it holds (entries
	// in tables and memtables before overwritten and range-deleted ones are
	// compacted away), like upstream's rocksdb.estimate-num-keys. It is -1
	// after Close, as upstream's gauge.
	EntriesCount int64
	// LookupEntryLocation is GetLocation's: a miss (location 0) and an
	// error count as failures.
	LookupEntryLocation OpStats
	// GetLastEntryInLedger is GetLastEntryInLedger's: a ledger with no
	// entry or marked deleted, and an error, count as failures.
	GetLastEntryInLedger OpStats
	// Engine is the lsm engine's metrics; zero after Close.
	Engine lsm.Metrics
}

// OpStats count one operation's successes and failures and, when
// Options.EnableStatistics is set, their latencies (otherwise the latency
// stats stay zero).
type OpStats struct {
	SuccessCount, FailureCount     int64
	SuccessLatency, FailureLatency LatencyStats
}

// Latency histogram layout: bucket 0 holds latencies below 64ns; then
// every power of two from 64ns up to 2^38ns (about 4.6 minutes) is split
// into four equal buckets, so a bucket's bounds are within 25% of each
// other; the last bucket also takes everything longer.
const (
	latencyMinShift       = 6 // 64ns
	latencyOctaves        = 32
	latencySubBucketsLog2 = 2
	latencySubBuckets     = 1 << latencySubBucketsLog2
	// NumLatencyBuckets is the number of buckets of LatencyStats.
	NumLatencyBuckets = 1 + latencyOctaves*latencySubBuckets
)

// LatencyStats describe a set of latencies.
type LatencyStats struct {
	Count int64
	Sum   time.Duration
	Max   time.Duration
	// Buckets[i] counts the latencies in [LatencyBucketLowerBound(i),
	// LatencyBucketUpperBound(i)).
	Buckets [NumLatencyBuckets]int64
}

// Mean returns the average latency, 0 if there is none.
func (l *LatencyStats) Mean() time.Duration {
	if l.Count == 0 {
		return 0
	}
	return l.Sum / time.Duration(l.Count)
}

// Quantile returns an upper estimate of the q-quantile (0 <= q <= 1): the
// upper bound of the bucket holding it, at most Max. q >= 1 is Max.
func (l *LatencyStats) Quantile(q float64) time.Duration {
	if l.Count == 0 || math.IsNaN(q) {
		return 0
	}
	if q >= 1 {
		return l.Max
	}
	rank := int64(math.Ceil(max(q, 0) * float64(l.Count)))
	rank = max(rank, 1)
	var seen int64
	for i, n := range l.Buckets {
		if seen += n; seen >= rank {
			return min(LatencyBucketUpperBound(i), l.Max)
		}
	}
	return l.Max
}

// LatencyBucketLowerBound returns the smallest latency of bucket i.
func LatencyBucketLowerBound(i int) time.Duration {
	if i <= 0 {
		return 0
	}
	j := i - 1
	shift := latencyMinShift + j/latencySubBuckets - latencySubBucketsLog2
	return time.Duration(int64(latencySubBuckets+j%latencySubBuckets) << shift)
}

// LatencyBucketUpperBound returns the exclusive upper bound of bucket i;
// the last bucket's is math.MaxInt64.
func LatencyBucketUpperBound(i int) time.Duration {
	if i >= NumLatencyBuckets-1 {
		return math.MaxInt64
	}
	return LatencyBucketLowerBound(i + 1)
}

// latencyBucket returns the bucket of a latency of ns nanoseconds.
func latencyBucket(ns int64) int {
	if ns < 1<<latencyMinShift {
		return 0
	}
	e := bits.Len64(uint64(ns)) - 1 // ns in [2^e, 2^(e+1))
	sub := int(ns>>(e-latencySubBucketsLog2)) & (latencySubBuckets - 1)
	return min(1+(e-latencyMinShift)*latencySubBuckets+sub, NumLatencyBuckets-1)
}

// latencyRecorder accumulates latencies with atomics.
type latencyRecorder struct {
	count, sum, max atomic.Int64
	buckets         [NumLatencyBuckets]atomic.Int64
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

func (r *latencyRecorder) snapshot() LatencyStats {
	s := LatencyStats{Count: r.count.Load(), Sum: time.Duration(r.sum.Load()), Max: time.Duration(r.max.Load())}
	for i := range r.buckets {
		s.Buckets[i] = r.buckets[i].Load()
	}
	return s
}

// OpRecorder keeps one operation's OpStats, as upstream's OpStatsLogger:
// counts always, latencies only when Timed (then callers read the clock;
// otherwise Start returns the zero time and no clock is read). The bookie
// storage records its own operations with it too.
//
//	start := r.Start()
//	...
//	r.Done(ok, start)
type OpRecorder struct {
	// Timed turns latency measurement on. Set it before use.
	Timed            bool
	success, failure atomic.Int64
	successLatency   latencyRecorder
	failureLatency   latencyRecorder
}

// Start returns the start time of an operation: the clock when Timed.
func (r *OpRecorder) Start() time.Time {
	if r.Timed {
		return time.Now()
	}
	return time.Time{}
}

// Done records an operation's outcome, and its latency when Timed.
func (r *OpRecorder) Done(ok bool, start time.Time) {
	if ok {
		r.success.Add(1)
	} else {
		r.failure.Add(1)
	}
	if !r.Timed {
		return
	}
	d := time.Since(start)
	if ok {
		r.successLatency.add(d)
	} else {
		r.failureLatency.add(d)
	}
}

// Snapshot returns the statistics so far.
func (r *OpRecorder) Snapshot() OpStats {
	return OpStats{
		SuccessCount:   r.success.Load(),
		FailureCount:   r.failure.Load(),
		SuccessLatency: r.successLatency.snapshot(),
		FailureLatency: r.failureLatency.snapshot(),
	}
}

// Metrics returns a snapshot of the index's statistics.
func (ix *Index) Metrics() Metrics {
	m := Metrics{
		EntriesCount:         -1,
		LookupEntryLocation:  ix.lookupStats.Snapshot(),
		GetLastEntryInLedger: ix.lastEntryStats.Snapshot(),
	}
	if ix.enter("Metrics") != nil {
		return m
	}
	defer ix.exit()
	m.Engine = ix.db.Metrics()
	m.EntriesCount = int64(min(m.Engine.EstimatedKeys, math.MaxInt64))
	return m
}

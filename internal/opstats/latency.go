package opstats

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// SummaryQuantiles returns the quantiles BookKeeper's Prometheus provider
// exports for a Stats summary.
func SummaryQuantiles() []float64 {
	return []float64{0.5, 0.75, 0.95, 0.99, 0.999, 0.9999, 1.0}
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

// reset zeroes the recorder; callers keep adds away meanwhile or accept
// that one lands on either side.
func (r *latencyRecorder) reset() {
	r.count.Store(0)
	r.sum.Store(0)
	r.max.Store(0)
	for i := range r.buckets {
		r.buckets[i].Store(0)
	}
}

func (r *latencyRecorder) snapshot() LatencyStats {
	s := LatencyStats{Count: r.count.Load(), Sum: time.Duration(r.sum.Load()), Max: time.Duration(r.max.Load())}
	for i := range r.buckets {
		s.Buckets[i] = r.buckets[i].Load()
	}
	return s
}

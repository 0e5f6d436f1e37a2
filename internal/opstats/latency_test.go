package opstats

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func timeMicros(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

func TestLatencyBuckets(t *testing.T) {
	require.Equal(t, 0, latencyBucket(0))
	require.Equal(t, 0, latencyBucket(63))
	require.Equal(t, 1, latencyBucket(64))
	require.Equal(t, NumLatencyBuckets-1, latencyBucket(math.MaxInt64))
	for _, ns := range []int64{64, 79, 80, 95, 96, 127, 128, 1000, 1023, 1024, 12345, 1e6, 1e9, 1 << 37, 1<<38 - 1} {
		b := latencyBucket(ns)
		require.LessOrEqual(t, int64(LatencyBucketLowerBound(b)), ns, "ns %d bucket %d", ns, b)
		require.Less(t, ns, int64(LatencyBucketUpperBound(b)), "ns %d bucket %d", ns, b)
	}
	for i := 1; i < NumLatencyBuckets; i++ {
		require.Equal(t, LatencyBucketUpperBound(i-1), LatencyBucketLowerBound(i))
		require.Less(t, LatencyBucketLowerBound(i-1), LatencyBucketLowerBound(i))
	}

	var r latencyRecorder
	for i := int64(1); i <= 100; i++ {
		r.add(timeMicros(i))
	}
	s := r.snapshot()
	require.EqualValues(t, 100, s.Count)
	require.Equal(t, timeMicros(100), s.Max)
	require.Equal(t, timeMicros(5050)/100, s.Mean())
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99} {
		exact := timeMicros(int64(math.Ceil(q * 100)))
		got := s.Quantile(q)
		require.GreaterOrEqual(t, got, exact, "q %v", q)
		require.LessOrEqual(t, float64(got), 1.25*float64(exact), "q %v", q)
	}
	require.Equal(t, s.Max, s.Quantile(1))
	require.Zero(t, (&LatencyStats{}).Quantile(0.5))
	require.Zero(t, (&LatencyStats{}).Mean())
}

package opstats

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecorderValues checks AddValue: counts and sums are exact, the
// last completed window's quantiles are within the histogram's 25% of the
// exact ones, small values included, and Timed does not matter.
func TestRecorderValues(t *testing.T) {
	r := Recorder{Rollover: time.Minute}
	t0 := time.Unix(6000, 0)
	var sum int64
	for v := int64(1); v <= 100; v++ {
		r.AddValueAt(true, v, t0.Add(time.Second))
		sum += v
	}
	r.AddValueAt(false, 7, t0.Add(2*time.Second))
	r.AddValueAt(true, -5, t0.Add(3*time.Second)) // counted, as 0

	s := r.SnapshotAt(t0.Add(61 * time.Second))
	require.EqualValues(t, 101, s.SuccessCount)
	require.EqualValues(t, 1, s.FailureCount)
	require.EqualValues(t, sum*ValueUnit, s.SuccessLatency.Sum)
	require.EqualValues(t, 7*ValueUnit, s.FailureLatency.Sum)
	require.EqualValues(t, 101, s.SuccessWindow.Count)
	value := func(d time.Duration) float64 { return float64(d) / ValueUnit }
	require.Equal(t, 100.0, value(s.SuccessWindow.Quantile(1)))
	for _, c := range []struct{ q, exact float64 }{{0.5, 50}, {0.9, 90}, {0.05, 5}, {0.02, 2}} {
		got := value(s.SuccessWindow.Quantile(c.q))
		require.GreaterOrEqual(t, got, c.exact, "q=%v", c.q)
		require.LessOrEqual(t, got, c.exact*1.25+1, "q=%v", c.q)
	}

	// A huge value is clamped, not wrapped.
	var big Recorder
	big.AddValue(true, 1<<62)
	require.Positive(t, big.Snapshot().SuccessLatency.Max)
}

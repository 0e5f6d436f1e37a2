package opstats

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecorderRollover checks that quantiles come from the last completed
// window while counts and sums cover everything, as upstream's provider
// reports them.
func TestRecorderRollover(t *testing.T) {
	r := Recorder{Timed: true, Rollover: time.Minute}
	t0 := time.Unix(6000, 0) // a window boundary
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	// Window 0: slow operations.
	for i := 0; i < 10; i++ {
		r.DoneAt(true, at(time.Second), at(time.Second+100*time.Millisecond))
	}
	s := r.SnapshotAt(at(30 * time.Second))
	require.Zero(t, s.SuccessWindow.Count, "no window has completed yet")
	require.EqualValues(t, 10, s.SuccessLatency.Count)

	// Window 1: fast ones; the snapshot in it still shows window 0.
	for i := 0; i < 10; i++ {
		r.DoneAt(true, at(61*time.Second), at(61*time.Second+time.Millisecond))
	}
	r.DoneAt(false, at(62*time.Second), at(62*time.Second+time.Millisecond))
	s = r.SnapshotAt(at(90 * time.Second))
	require.EqualValues(t, 10, s.SuccessWindow.Count)
	require.Equal(t, 100*time.Millisecond, s.SuccessWindow.Max)
	require.Zero(t, s.FailureWindow.Count)

	// In window 2 the quantiles are window 1's: the slow ones are gone.
	s = r.SnapshotAt(at(125 * time.Second))
	require.EqualValues(t, 10, s.SuccessWindow.Count)
	require.Equal(t, time.Millisecond, s.SuccessWindow.Max)
	require.LessOrEqual(t, s.SuccessWindow.Quantile(0.99), time.Millisecond)
	require.EqualValues(t, 1, s.FailureWindow.Count)
	require.EqualValues(t, 20, s.SuccessLatency.Count, "the cumulative count keeps everything")
	require.EqualValues(t, 20, s.SuccessCount)

	// Window 3 reuses window 1's slot: its first add clears it.
	r.DoneAt(true, at(181*time.Second), at(181*time.Second+time.Microsecond))
	s = r.SnapshotAt(at(245 * time.Second))
	require.EqualValues(t, 1, s.SuccessWindow.Count)
	require.Equal(t, time.Microsecond, s.SuccessWindow.Max)
	// A window with no operation shows nothing.
	s = r.SnapshotAt(at(305 * time.Second))
	require.Zero(t, s.SuccessWindow.Count)
	require.Zero(t, s.FailureWindow.Count)
}

// TestRecorderDoneAllocs checks that recording allocates nothing, window
// starts included.
func TestRecorderDoneAllocs(t *testing.T) {
	r := Recorder{Timed: true, Rollover: time.Nanosecond * 1000}
	start := time.Now()
	allocs := testing.AllocsPerRun(1000, func() {
		r.Done(true, start)
		r.Done(false, start)
	})
	require.Zero(t, allocs)
}

package opstats

import (
	"math"
	"sync/atomic"
	"time"
)

// Stats count one operation's successes and failures and, when its
// Recorder is timed, their latencies (otherwise the latency stats stay
// zero).
type Stats struct {
	SuccessCount, FailureCount int64
	// SuccessLatency and FailureLatency cover the Recorder's whole life:
	// their Count and Sum are a Prometheus summary's _count and _sum.
	SuccessLatency, FailureLatency LatencyStats
	// SuccessWindow and FailureWindow cover the last completed rollover
	// window only: a summary's quantiles, as upstream's provider reads
	// them. Empty before the first window completes and after a window
	// without operations.
	SuccessWindow, FailureWindow LatencyStats
}

// Recorder keeps one operation's Stats, as upstream's OpStatsLogger:
// counts always, latencies only when Timed (then callers read the clock;
// otherwise Start returns the zero time and no clock is read).
//
//	start := r.Start()
//	...
//	r.Done(ok, start)
type Recorder struct {
	// Timed turns latency measurement on. Set it before use.
	Timed bool
	// Rollover is the length of the latency windows whose quantiles
	// Snapshot reports (upstream's prometheusStatsLatencyRolloverSeconds).
	// Zero: DefaultRollover. Set it before use.
	Rollover                     time.Duration
	success, failure             atomic.Int64
	successLatency               latencyRecorder
	failureLatency               latencyRecorder
	successWindow, failureWindow windowedLatency
}

// Start returns the start time of an operation: the clock when Timed.
func (r *Recorder) Start() time.Time {
	if r.Timed {
		return time.Now()
	}
	return time.Time{}
}

// Done records an operation's outcome, and its latency when Timed.
func (r *Recorder) Done(ok bool, start time.Time) {
	if !r.Timed {
		if ok {
			r.success.Add(1)
		} else {
			r.failure.Add(1)
		}
		return
	}
	r.DoneAt(ok, start, time.Now())
}

// DoneAt records an operation that started at start and ended at end; its
// latency goes into end's window. Done calls it with the clock when Timed;
// tests call it with chosen instants.
func (r *Recorder) DoneAt(ok bool, start, end time.Time) {
	r.record(ok, end.Sub(start), end)
}

// ValueUnit is how a Recorder keeps the values given to AddValue: the
// value v as the latency v*ValueUnit, so that values from 1 up get the
// histogram's 25% resolution (its bucket 0 holds everything below 64).
// Values up to 2^32 fall in their own bucket, larger ones in the last
// (their Max stays exact); the sums hold 2^57.
const ValueUnit = 64

// AddValue records a value (a size, a count) instead of a latency, as
// upstream's registerSuccessfulValue and registerFailedValue: it counts
// the event and adds v to the sum and the histograms, which then hold
// values times ValueUnit. It does not depend on Timed. A Recorder takes
// either values or latencies, not both.
func (r *Recorder) AddValue(ok bool, v int64) { r.AddValueAt(ok, v, time.Now()) }

// AddValueAt records a value at instant now (for tests).
func (r *Recorder) AddValueAt(ok bool, v int64, now time.Time) {
	v = min(max(v, 0), math.MaxInt64/ValueUnit)
	r.record(ok, time.Duration(v*ValueUnit), now)
}

// record counts an outcome and adds d, into the window of instant at.
func (r *Recorder) record(ok bool, d time.Duration, at time.Time) {
	window := windowOf(at, r.Rollover)
	if ok {
		r.success.Add(1)
		r.successLatency.add(d)
		r.successWindow.add(window, d)
	} else {
		r.failure.Add(1)
		r.failureLatency.add(d)
		r.failureWindow.add(window, d)
	}
}

// Snapshot returns the statistics so far.
func (r *Recorder) Snapshot() Stats { return r.SnapshotAt(time.Now()) }

// SnapshotAt returns the statistics so far, with the windows of the one
// completed before now.
func (r *Recorder) SnapshotAt(now time.Time) Stats {
	prev := windowOf(now, r.Rollover) - 1
	return Stats{
		SuccessCount:   r.success.Load(),
		FailureCount:   r.failure.Load(),
		SuccessLatency: r.successLatency.snapshot(),
		FailureLatency: r.failureLatency.snapshot(),
		SuccessWindow:  r.successWindow.completed(prev),
		FailureWindow:  r.failureWindow.completed(prev),
	}
}

package opstats

import (
	"sync/atomic"
	"time"
)

// Stats count one operation's successes and failures and, when its
// Recorder is timed, their latencies (otherwise the latency stats stay
// zero).
type Stats struct {
	SuccessCount, FailureCount     int64
	SuccessLatency, FailureLatency LatencyStats
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
	Timed            bool
	success, failure atomic.Int64
	successLatency   latencyRecorder
	failureLatency   latencyRecorder
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
func (r *Recorder) Snapshot() Stats {
	return Stats{
		SuccessCount:   r.success.Load(),
		FailureCount:   r.failure.Load(),
		SuccessLatency: r.successLatency.snapshot(),
		FailureLatency: r.failureLatency.snapshot(),
	}
}

package opstats

import (
	"sync"
	"sync/atomic"
	"time"
)

// DefaultRollover is how long a latency window lasts unless a Recorder
// says otherwise: upstream's prometheusStatsLatencyRolloverSeconds default.
const DefaultRollover = 60 * time.Second

// windowedLatency keeps the latencies of the current window and of the
// one before it, as upstream's DataSketchesOpStatsLogger swaps its current
// and replacement sketches every rollover: quantiles read from the last
// completed window follow the recent latencies instead of flattening over
// the process's life.
//
// Windows are aligned on multiples of the rollover since the epoch, so no
// goroutine has to rotate them: window n lives in slot n%2, and the first
// add of a window clears its slot (the window two before). Adding costs
// the atomics of latencyRecorder.add plus one load; only the first add of
// a window takes the mutex. An add that raced past a window's end by a
// whole window (a goroutine descheduled for a minute) may land in a
// cleared slot: a rounding error of one sample, never a lost count (the
// cumulative counters are kept apart).
type windowedLatency struct {
	// mu serializes clearing a slot.
	mu sync.Mutex
	// windows[i] is 1 + the number of the window slots[i] holds; 0: none.
	windows [2]atomic.Int64
	slots   [2]latencyRecorder
}

func (w *windowedLatency) add(window int64, d time.Duration) {
	i := window & 1
	if w.windows[i].Load() != window+1 {
		w.start(i, window)
	}
	w.slots[i].add(d)
}

// start clears slot i for window, once.
func (w *windowedLatency) start(i, window int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.windows[i].Load() == window+1 {
		return
	}
	w.slots[i].reset()
	w.windows[i].Store(window + 1)
}

// completed returns the latencies of window, empty if nothing was recorded
// in it (or it was already cleared).
func (w *windowedLatency) completed(window int64) LatencyStats {
	i := window & 1
	if w.windows[i].Load() != window+1 {
		return LatencyStats{}
	}
	s := w.slots[i].snapshot()
	if w.windows[i].Load() != window+1 {
		return LatencyStats{} // cleared while read
	}
	return s
}

// windowOf returns the number of the window holding the instant now.
func windowOf(now time.Time, rollover time.Duration) int64 {
	if rollover <= 0 {
		rollover = DefaultRollover
	}
	return now.UnixNano() / int64(rollover)
}

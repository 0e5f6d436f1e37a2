package httpapi

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// periodicCounts returns each directory's periodic compactions that ended.
func periodicCounts(s *Service) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := make([]int64, len(s.dirs))
	for i, d := range s.dirs {
		for k, n := range d.outcomes {
			if k.trigger == TriggerPeriodic {
				counts[i] += n
			}
		}
	}
	return counts
}

// TestPeriodicCompaction runs the periodic compaction with a short
// interval and checks that every directory compacts repeatedly, that the
// delay is drawn again each time within [0, interval), and that it stops
// with its context.
func TestPeriodicCompaction(t *testing.T) {
	const interval = 20 * time.Millisecond
	var mu sync.Mutex
	var draws []time.Duration
	f1, f2 := instantIndex(path1), instantIndex(path2)
	s := testService(t, func(o *Options) {
		o.RandomCompactionDelay = func(iv time.Duration) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, interval, iv)
			draws = append(draws, time.Duration(len(draws))*time.Millisecond)
			return draws[len(draws)-1]
		}
	}, f1, f2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() {
		s.RunPeriodicCompaction(ctx, interval)
		close(done)
	}()
	eventually(t, "three periodic compactions each", func() bool {
		c := periodicCounts(s)
		return c[0] >= 3 && c[1] >= 3
	})
	// Three periods of at least the interval each.
	require.GreaterOrEqual(t, time.Since(start), 3*interval)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunPeriodicCompaction did not return after its context was cancelled")
	}
	mu.Lock()
	require.GreaterOrEqual(t, len(draws), 8, "one draw per directory at start and after each compaction")
	mu.Unlock()
	for _, d := range gcDetails(t, s) {
		require.Equal(t, outcomeCompleted, d.LastEntryLocationCompactionOutcome)
		require.GreaterOrEqual(t, d.EntryLocationCompactionCounter, int64(3))
	}
}

// TestRandomDelayClamped keeps an out-of-range delay within [0, interval).
func TestRandomDelayClamped(t *testing.T) {
	for _, tc := range []struct{ drawn, want time.Duration }{
		{-5, 0}, {0, 0}, {99, 99}, {100, 99}, {1 << 40, 99},
	} {
		s := &Service{opts: Options{RandomCompactionDelay: func(time.Duration) time.Duration { return tc.drawn }}}
		require.Equal(t, tc.want, s.randomDelay(100), "drawn %d", tc.drawn)
	}
	for range 100 {
		d := uniformDelay(10)
		require.True(t, d >= 0 && d < 10)
	}
	require.Zero(t, uniformDelay(0))
}

// TestPeriodicDisabled returns at once for a non-positive interval.
func TestPeriodicDisabled(t *testing.T) {
	s := testService(t, nil, instantIndex(path1))
	for _, iv := range []time.Duration{0, -time.Second} {
		s.RunPeriodicCompaction(context.Background(), iv)
	}
	require.Zero(t, periodicCounts(s)[0])
}

// TestPeriodicStopsOnClose returns when the Service closes.
func TestPeriodicStopsOnClose(t *testing.T) {
	s := testService(t, nil, instantIndex(path1))
	done := make(chan struct{})
	go func() {
		s.RunPeriodicCompaction(context.Background(), time.Hour)
		close(done)
	}()
	s.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunPeriodicCompaction did not return after Close")
	}
}

// TestHTTPPostponesPeriodic: a compaction triggered over HTTP restarts its
// directory's period. The margins are wide (hundreds of milliseconds) so
// that a slow machine cannot make the test fail: delays only make the
// HTTP trigger later, which postpones the periodic one further.
func TestHTTPPostponesPeriodic(t *testing.T) {
	const interval = 600 * time.Millisecond
	f1 := instantIndex(path1)
	s := testService(t, func(o *Options) {
		o.RandomCompactionDelay = func(time.Duration) time.Duration { return 0 }
	}, f1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	go s.RunPeriodicCompaction(ctx, interval)
	time.Sleep(100 * time.Millisecond)
	code, _ := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code)
	triggered := time.Now()
	// The periodic compaction was due at start+interval; it is now due at
	// triggered+interval.
	time.Sleep(time.Until(start.Add(interval + 100*time.Millisecond)))
	if time.Since(triggered) < interval {
		require.Zero(t, periodicCounts(s)[0], "the periodic compaction ran although HTTP compacted %v ago", time.Since(triggered))
	}
	eventually(t, "the postponed periodic compaction", func() bool { return periodicCounts(s)[0] == 1 })
	require.GreaterOrEqual(t, time.Since(triggered), interval)
}

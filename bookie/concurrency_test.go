package bookie

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestConcurrent runs writers, readers, deletions, checkpoints (every few
// milliseconds and on full caches), purges and metrics together, then
// closes the storage under them. Run it with -race.
func TestConcurrent(t *testing.T) {
	env := newTestEnv("/d0", "/d1")
	env.tweak = func(o *Options) {
		o.FlushInterval = 3 * time.Millisecond
		o.GCWaitTime = 7 * time.Millisecond
		o.WriteCacheSize = 2 * 2 * (64 << 10)
		o.ReadCacheSize = 2 * (32 << 10)
		o.LogSizeLimit = 32 << 10
	}
	s := env.open(t)
	const writers, perWriter = 4, 300
	// written[w] is how many entries writer w's ledger has acknowledged.
	var written [writers]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := int64(w)
			for e := range int64(perWriter) {
				if err := s.AddEntry(l, e, payload(l, e, 0)); err != nil {
					errs <- errors.Wrapf(err, "writer %d entry %d", w, e)
					return
				}
				written[w].Store(e + 1)
			}
		}()
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	for r := range 3 {
		bg.Add(1)
		go func() {
			defer bg.Done()
			rng := newRand(int64(r))
			for {
				select {
				case <-stop:
					return
				default:
				}
				w := rng.Intn(writers)
				n := written[w].Load()
				if n == 0 {
					continue
				}
				l, e := int64(w), rng.Int63n(n)
				got, err := s.GetEntry(l, e)
				if err != nil || string(got) != string(payload(l, e, 0)) {
					errs <- fmt.Errorf("read of entry %d of ledger %d: %v", e, l, err)
					return
				}
				if last, _, err := s.GetLastEntry(l); err != nil || last < n-1 {
					errs <- fmt.Errorf("last entry of ledger %d: %d, %v (want >= %d)", l, last, err, n-1)
					return
				}
			}
		}()
	}
	// Ledgers 100-103 are deleted and written again over and over.
	var deleterSteps atomic.Int64
	bg.Add(1)
	go func() {
		defer bg.Done()
		rng := newRand(99)
		for i := 0; ; i++ {
			deleterSteps.Add(1)
			select {
			case <-stop:
				return
			default:
			}
			l := 100 + int64(rng.Intn(4))
			if rng.Intn(3) == 0 {
				if _, err := s.DeleteLedger(l); err != nil {
					errs <- err
					return
				}
				if _, err := s.GetEntry(l, 0); !errors.Is(err, ErrNoLedger) {
					errs <- fmt.Errorf("ledger %d read after its deletion: %v", l, err)
					return
				}
				continue
			}
			e := int64(rng.Intn(50))
			p := fmt.Appendf(nil, "%d", i)
			if err := s.AddEntry(l, e, p); err != nil {
				errs <- err
				return
			}
			if got, err := s.GetEntry(l, e); err != nil || string(got) != string(p) {
				errs <- fmt.Errorf("ledger %d entry %d after its write: %q, %v", l, e, got, err)
				return
			}
		}
	}()
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			_ = s.Metrics()
			if err := s.Purge(); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	purged := func() bool {
		var n int64
		for _, m := range s.Metrics() {
			n += m.Purges
		}
		return n > 0
	}
	waitFor(t, "the deleter's work and a purge", func() bool { return deleterSteps.Load() >= 300 && purged() })
	close(stop)
	bg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var checkpoints int64
	for _, m := range s.Metrics() {
		checkpoints += m.Flush.SuccessCount
	}
	require.Greater(t, checkpoints, int64(2), "periodic checkpoints ran")
	require.NoError(t, s.Close())
	s = env.open(t)
	defer s.Close()
	for w := range writers {
		for e := range int64(perWriter) {
			requireEntry(t, s, int64(w), e, payload(int64(w), e, 0))
		}
	}
}

// TestCloseUnderLoad closes the storage while writers and readers run:
// their calls either succeed or fail with ErrClosed, and every write that
// succeeded before Close began is durable.
func TestCloseUnderLoad(t *testing.T) {
	env := newTestEnv()
	env.tweak = func(o *Options) { o.FlushInterval = 2 * time.Millisecond }
	s := env.open(t)
	var acked sync.Map
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := int64(w)
			for e := int64(0); e < 1000; e++ {
				err := s.AddEntry(l, e, payload(l, e, 0))
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("writer %d: %v", w, err)
					}
					return
				}
				acked.Store([2]int64{l, e}, true)
				if _, err := s.GetEntry(l, e); err != nil && !errors.Is(err, ErrClosed) {
					t.Errorf("reader %d: %v", w, err)
					return
				}
			}
		}()
	}
	time.Sleep(30 * time.Millisecond)
	require.NoError(t, s.Close())
	wg.Wait()
	s = env.open(t)
	defer s.Close()
	n := 0
	acked.Range(func(k, _ any) bool {
		key := k.([2]int64)
		requireEntry(t, s, key[0], key[1], payload(key[0], key[1], 0))
		n++
		return true
	})
	require.Positive(t, n)
}

// TestCloseReleasesThrottledWriters: a writer waiting for room in a full
// write cache gives up with ErrClosed when the storage closes, without
// waiting for its throttle time.
func TestCloseReleasesThrottledWriters(t *testing.T) {
	env := newTestEnv()
	env.tweak = func(o *Options) {
		o.WriteCacheSize = 64 << 10
		o.MaxThrottleTime = time.Minute
	}
	s := env.open(t)
	release := make(chan struct{})
	s.Dirs()[0].hooks.Store(&testHooks{afterEntryLogFlush: func() error {
		<-release
		return nil
	}})
	big := make([]byte, 10<<10)
	done := make(chan error, 1)
	go func() {
		for e := int64(0); ; e++ {
			if err := s.AddEntry(1, e, big); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond) // the writer waits for room
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting writer did not give up")
	}
	close(release) // the stuck checkpoint goes on; Close finishes
	require.NoError(t, <-closed)
}

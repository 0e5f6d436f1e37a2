package cache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// startFlight runs n concurrent GetOrLoad calls of (1, 0) whose load blocks
// until every caller has missed (so all of them join one flight), then
// returns value and err. It returns each caller's results and the number of
// load calls.
func startFlight(t *testing.T, c *Cache, n int, value []byte, err error) (hs []Handle, errs []error, loads int64) {
	t.Helper()
	var calls atomic.Int64
	allJoined := make(chan struct{})
	load := func() ([]byte, error) {
		calls.Add(1)
		<-allJoined
		return value, err
	}
	hs = make([]Handle, n)
	errs = make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var hit bool
			hs[i], hit, errs[i] = c.getOrLoadBytes(1, 0, KindFilter, PriorityHigh, load)
			if hit {
				errs[i] = errors.New("unexpected hit")
			}
		}()
	}
	// Every caller counts its miss under the shard lock before it loads or
	// waits, so once all misses are counted they are all in the flight.
	deadline := time.Now().Add(10 * time.Second)
	for c.Metrics().Kinds[KindFilter].Misses < int64(n) {
		require.True(t, time.Now().Before(deadline), "callers did not join")
		time.Sleep(time.Millisecond)
	}
	close(allJoined)
	wg.Wait()
	return hs, errs, calls.Load()
}

func TestGetOrLoadSingleFlight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity int64
		cached   bool
	}{
		{"cached", 1 << 20, true},
		{"oversized", 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 16
			c := newTestCache(t, Options{Capacity: tc.capacity, NumShardBits: OneShard})
			want := valueFor(1, 0, 4096)
			hs, errs, loads := startFlight(t, c, n, want, nil)
			require.Equal(t, int64(1), loads, "one file read for all callers")
			for i := range hs {
				require.NoError(t, errs[i])
				require.Equal(t, want, hs[i].Value())
				require.Same(t, &hs[0].Value()[0], &hs[i].Value()[0], "callers share one value")
			}
			m := c.Metrics()
			require.Equal(t, int64(n), m.Kinds[KindFilter].Misses)
			require.Equal(t, int64(0), m.Kinds[KindFilter].Hits)
			if tc.cached {
				require.Equal(t, int64(1), m.Kinds[KindFilter].Inserts)
				require.Equal(t, charge(4096), m.EntryPinnedUsage)
			} else {
				require.Equal(t, int64(1), m.OversizedRejects)
				require.Equal(t, int64(0), m.Entries)
			}
			for _, h := range hs {
				h.Release()
			}
			require.Equal(t, int64(0), c.Metrics().EntryPinnedUsage)
			require.Empty(t, c.shards[0].flights)
			checkInvariants(t, c, true)

			h, hit, err := c.getOrLoadBytes(1, 0, KindFilter, PriorityHigh, func() ([]byte, error) { return want, nil })
			require.NoError(t, err)
			require.Equal(t, tc.cached, hit)
			h.Release()
		})
	}
}

func TestGetOrLoadErrorReachesEveryCaller(t *testing.T) {
	const n = 8
	c := newTestCache(t, Options{Capacity: 1 << 20, NumShardBits: OneShard})
	errRead := errors.New("read failed")
	hs, errs, loads := startFlight(t, c, n, nil, errRead)
	require.Equal(t, int64(1), loads)
	for i := range hs {
		require.True(t, errors.Is(errs[i], errRead), "caller %d: %v", i, errs[i])
		require.False(t, hs[i].Valid())
	}
	m := c.Metrics()
	require.Equal(t, int64(0), m.Entries)
	require.Equal(t, int64(n), m.Kinds[KindFilter].Misses)
	require.Empty(t, c.shards[0].flights)

	// Nothing was cached, so the next call loads again.
	h, hit, err := c.getOrLoadBytes(1, 0, KindFilter, PriorityHigh, func() ([]byte, error) { return []byte("ok"), nil })
	require.NoError(t, err)
	require.False(t, hit)
	require.Equal(t, []byte("ok"), h.Value())
	h.Release()
}

func TestGetOrLoadPanicReleasesWaiters(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20, NumShardBits: OneShard})
	started := make(chan struct{})
	proceed := make(chan struct{})
	leaderDone := make(chan any)
	go func() {
		defer func() { leaderDone <- recover() }()
		_, _, _ = c.getOrLoadBytes(1, 0, KindData, PriorityLow, func() ([]byte, error) {
			close(started)
			<-proceed
			panic("loader bug")
		})
	}()
	<-started
	waiterErr := make(chan error)
	go func() {
		_, _, err := c.getOrLoadBytes(1, 0, KindData, PriorityLow, func() ([]byte, error) { return []byte("x"), nil })
		waiterErr <- err
	}()
	for c.Metrics().Kinds[KindData].Misses < 2 {
		time.Sleep(time.Millisecond)
	}
	close(proceed)
	require.Equal(t, "loader bug", <-leaderDone, "the panic continues in the loading goroutine")
	err := <-waiterErr
	require.ErrorContains(t, err, "panicked")
	require.Empty(t, c.shards[0].flights)

	h, hit, err := c.getOrLoadBytes(1, 0, KindData, PriorityLow, func() ([]byte, error) { return []byte("x"), nil })
	require.NoError(t, err)
	require.False(t, hit)
	h.Release()
}

func TestGetOrLoadDifferentKeysDoNotWait(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20, NumShardBits: OneShard})
	block := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		h, _, err := c.getOrLoadBytes(1, 0, KindData, PriorityLow, func() ([]byte, error) {
			<-block
			return []byte("slow"), nil
		})
		if err == nil {
			h.Release()
		}
	}()
	for c.Metrics().Kinds[KindData].Misses < 1 {
		time.Sleep(time.Millisecond)
	}
	// Same shard, other key: not blocked by the slow load (it runs
	// without the shard lock).
	for i := uint64(1); i < 10; i++ {
		h, hit, err := c.getOrLoadBytes(1, i, KindData, PriorityLow, func() ([]byte, error) {
			return []byte(fmt.Sprint(i)), nil
		})
		require.NoError(t, err)
		require.False(t, hit)
		h.Release()
	}
	close(block)
	<-done
	require.Equal(t, int64(10), c.Metrics().Entries)
}

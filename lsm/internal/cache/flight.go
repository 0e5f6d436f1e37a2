package cache

import (
	"github.com/bookie-index/bookie-index/lsm/internal/manual"
	"github.com/cockroachdb/errors"
)

// flight is one GetOrLoad load in progress. Callers that miss on a key with
// a flight wait for it instead of loading the block again. waiters is
// guarded by the shard's mutex; entry and err are written before done is
// closed and read only after it is.
type flight struct {
	done    chan struct{}
	waiters int    // callers waiting on done; the loader acquires a reference for each
	entry   *entry // the loaded block (cached or detached) when err is nil
	err     error
}

// GetOrLoad returns a handle on the block (id, offset), loading it with load
// on a miss: load returns the block in a buffer from Alloc, which the cache
// takes over (on error load must free what it allocated). hit reports whether it was cached. The caller must Release the
// handle.
//
// Loads are single-flight per key: callers that miss while another caller's
// load of the same key is running wait for it and share its result, so the
// file is read once. If load fails, its error is returned to every caller of
// that flight and nothing is cached. load runs without any lock held.
//
// The loaded value is inserted as by Insert, except that a value refused by
// the strict capacity limit is still returned, on a detached handle, with a
// nil error: the read succeeds without being cached. An oversized value is
// likewise returned detached (see the package documentation).
func (c *Cache) GetOrLoad(id, offset uint64, kind Kind, pri Priority,
	load func() (manual.Buf, error)) (h Handle, hit bool, err error) {
	if err := checkKindAndPriority(kind, pri); err != nil {
		return Handle{}, false, err
	}
	if load == nil {
		return Handle{}, false, errors.New("cache: GetOrLoad needs a load function")
	}
	k := key{id: id, offset: offset}
	s := c.shardFor(k)
	s.mu.Lock()
	if e := s.entries[k]; e != nil {
		s.counters[kind].Hits++
		s.touchLocked(e)
		s.acquireLocked(e, 1)
		s.mu.Unlock()
		return Handle{e: e}, true, nil
	}
	s.counters[kind].Misses++
	if f := s.flights[k]; f != nil {
		f.waiters++
		s.mu.Unlock()
		<-f.done
		if f.err != nil {
			return Handle{}, false, f.err
		}
		return Handle{e: f.entry}, false, nil
	}
	f := &flight{done: make(chan struct{})}
	if s.flights == nil {
		s.flights = make(map[key]*flight)
	}
	s.flights[k] = f
	s.mu.Unlock()

	e, err := c.runFlight(s, f, k, kind, pri, load)
	if err != nil {
		return Handle{}, false, err
	}
	return Handle{e: e}, false, nil
}

// runFlight calls load, publishes its result to the flight's waiters and
// caches the value. If load panics, the waiters are released with an error
// and the panic continues in the loading goroutine.
func (c *Cache) runFlight(s *shard, f *flight, k key, kind Kind, pri Priority,
	load func() (manual.Buf, error)) (*entry, error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		s.mu.Lock()
		delete(s.flights, k)
		s.mu.Unlock()
		f.err = errors.Newf("cache: load of block of file %d at offset %d panicked", k.id, k.offset)
		close(f.done)
	}()
	value, err := load()
	returned = true

	s.mu.Lock()
	delete(s.flights, k)
	if err != nil {
		s.mu.Unlock()
		f.err = err
		close(f.done)
		return nil, err
	}
	e, outcome := c.insertLocked(s, k, kind, pri, value)
	if outcome == outcomeStrictReject {
		e = newDetachedEntry(s, k, kind, value)
	}
	s.acquireLocked(e, f.waiters)
	s.mu.Unlock()
	f.entry = e
	close(f.done)
	return e, nil
}

package httpapi

import (
	"container/list"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Admission control of the data API. Three limits, each a queue that a
// request waits in for at most Options.AdmissionWait before it gets 503
// with Retry-After:
//
//   - adds in progress (PUT of an entry), Options.MaxAddsInProgress:
//     upstream's maxAddsInProgressLimit;
//   - reads in progress (GET or HEAD of an entry or a last entry),
//     Options.MaxReadsInProgress: upstream's maxReadsInProgressLimit;
//   - bytes of entry bodies in flight, Options.MaxEntryBytesInFlight: a
//     PUT reserves its Content-Length before it reads a byte of the body
//     and holds it until the entry is in the write cache (the body is read
//     straight into the memory the cache keeps); a read reserves its
//     payload (and its base64 text for last_entry) once it has it, until
//     the answer is written.
//
// Upstream's limits are counts of the requests of its binary protocol; a
// request beyond one stops its connection's reading until a slot frees,
// however long that takes. Over HTTP a waiting request holds a connection
// and a goroutine, so ours wait briefly and are then refused: the client
// retries, and memory stays bounded whatever the number of clients.

// DefaultAdmissionWait is how long a data API request waits for room by
// default.
const DefaultAdmissionWait = time.Second

// DefaultMaxEntryBytesInFlight is the default budget of entry bytes in
// flight, for a Service built without one (serve derives its own from
// the write cache).
const DefaultMaxEntryBytesInFlight = 64 << 20

// admission holds the data API's limits and their statistics.
type admission struct {
	wait        time.Duration
	bytes       *limiter // nil: no limit
	adds, reads *limiter // nil: no limit

	addsInProgress, readsInProgress atomic.Int64
	addsBlocked, readsBlocked       atomic.Int64
	addsRejected, readsRejected     atomic.Int64
}

func newAdmission(opts *Options) *admission {
	a := &admission{wait: opts.AdmissionWait, bytes: newLimiter(opts.MaxEntryBytesInFlight)}
	if opts.MaxAddsInProgress > 0 {
		a.adds = newLimiter(int64(opts.MaxAddsInProgress))
	}
	if opts.MaxReadsInProgress > 0 {
		a.reads = newLimiter(int64(opts.MaxReadsInProgress))
	}
	return a
}

// opKind says which count limit a request is under.
type opKind int

const (
	opAdd opKind = iota
	opRead
)

// admitOp takes a slot among the adds or reads in progress. When none
// frees within the wait it answers 503 and returns false; otherwise the
// caller must call the returned release.
func (a *admission) admitOp(w http.ResponseWriter, r *http.Request, op opKind) (release func(), ok bool) {
	l, inProgress, blocked, rejected := a.adds, &a.addsInProgress, &a.addsBlocked, &a.addsRejected
	what, key := "adds", "maxAddsInProgressLimit"
	if op == opRead {
		l, inProgress, blocked, rejected = a.reads, &a.readsInProgress, &a.readsBlocked, &a.readsRejected
		what, key = "reads", "maxReadsInProgressLimit"
	}
	if !a.acquire(r.Context(), l, 1, blocked) {
		rejected.Add(1)
		busy(w, fmt.Sprintf("Too many %s in progress (%s=%d): retry later.", what, key, l.limit))
		return nil, false
	}
	inProgress.Add(1)
	return func() {
		inProgress.Add(-1)
		l.release(1)
	}, true
}

// admitBytes reserves n bytes of the budget of entry bytes in flight (a
// request larger than the whole budget takes all of it, alone). When they
// do not free within the wait it answers 503 and returns false; otherwise
// the caller must call the returned release.
func (a *admission) admitBytes(w http.ResponseWriter, r *http.Request, op opKind, n int64) (release func(), ok bool) {
	blocked, rejected := &a.addsBlocked, &a.addsRejected
	if op == opRead {
		blocked, rejected = &a.readsBlocked, &a.readsRejected
	}
	if !a.acquire(r.Context(), a.bytes, n, blocked) {
		rejected.Add(1)
		busy(w, fmt.Sprintf("The entry bytes in flight are at their limit (%d bytes, httpServerMaxEntryBytesInFlight): retry later.", a.bytes.limit))
		return nil, false
	}
	return func() { a.bytes.release(n) }, true
}

// acquire takes n of l, counting the request in blocked while it waits.
func (a *admission) acquire(ctx context.Context, l *limiter, n int64, blocked *atomic.Int64) bool {
	if l.tryAcquire(n) {
		return true
	}
	blocked.Add(1)
	defer blocked.Add(-1)
	return l.acquire(ctx, n, a.wait)
}

// busy answers 503 with Retry-After.
func busy(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", "1")
	writeText(w, http.StatusServiceUnavailable, msg)
}

// limiter is a semaphore of a number of units (bytes, requests) whose
// waiters are served in order: a large request is not passed over for
// ever by small ones. A nil *limiter admits everything.
type limiter struct {
	limit int64

	mu      sync.Mutex
	used    int64
	waiters list.List // of *limitWaiter, first come first served
}

// limitWaiter is a request waiting for n units; ready is closed once they
// are its.
type limitWaiter struct {
	n     int64
	ready chan struct{}
}

// newLimiter returns a limiter of limit units, or nil (no limit) if limit
// is not positive.
func newLimiter(limit int64) *limiter {
	if limit <= 0 {
		return nil
	}
	return &limiter{limit: limit}
}

// tryAcquire takes n units if they are free and nobody waits.
func (l *limiter) tryAcquire(n int64) bool {
	if l == nil {
		return true
	}
	n = min(n, l.limit)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiters.Len() == 0 && l.used+n <= l.limit {
		l.used += n
		return true
	}
	return false
}

// acquire takes n units (at most the limit), waiting for them in line for
// at most wait, or until ctx is done. It reports whether it took them.
func (l *limiter) acquire(ctx context.Context, n int64, wait time.Duration) bool {
	if l == nil {
		return true
	}
	n = min(n, l.limit)
	l.mu.Lock()
	if l.waiters.Len() == 0 && l.used+n <= l.limit {
		l.used += n
		l.mu.Unlock()
		return true
	}
	if wait <= 0 {
		l.mu.Unlock()
		return false
	}
	lw := &limitWaiter{n: n, ready: make(chan struct{})}
	elem := l.waiters.PushBack(lw)
	l.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-lw.ready:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-lw.ready: // granted as the wait ended
		return true
	default:
	}
	first := l.waiters.Front() == elem
	l.waiters.Remove(elem)
	if first {
		// Those behind it may fit in what it was waiting for.
		l.grantLocked()
	}
	return false
}

// release gives n units back (n as passed to acquire).
func (l *limiter) release(n int64) {
	if l == nil {
		return
	}
	n = min(n, l.limit)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used -= n
	l.grantLocked()
}

// grantLocked hands free units to the waiters, in order, while the first
// one fits.
func (l *limiter) grantLocked() {
	for e := l.waiters.Front(); e != nil; e = l.waiters.Front() {
		lw := e.Value.(*limitWaiter)
		if l.used+lw.n > l.limit {
			return
		}
		l.used += lw.n
		l.waiters.Remove(e)
		close(lw.ready)
	}
}

// inUse returns the units taken.
func (l *limiter) inUse() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}

// admissionCollector exports the admission's statistics: upstream's
// request gauges and rejection counters (bookkeeper_server_*), and the
// bytes in flight.
type admissionCollector struct {
	a                                 *admission
	addsInProgress, addsBlocked       *prometheus.Desc
	readsInProgress, readsBlocked     *prometheus.Desc
	addsRejected, readsRejected       *prometheus.Desc
	bytesInFlight, bytesInFlightLimit *prometheus.Desc
}

func newAdmissionCollector(a *admission) *admissionCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &admissionCollector{
		a:               a,
		addsInProgress:  d("bookkeeper_server_ADD_ENTRY_IN_PROGRESS", "Entry PUTs of the data API in progress (admitted under maxAddsInProgressLimit)."),
		addsBlocked:     d("bookkeeper_server_ADD_ENTRY_BLOCKED", "Entry PUTs of the data API waiting for admission (maxAddsInProgressLimit, httpServerMaxEntryBytesInFlight)."),
		readsInProgress: d("bookkeeper_server_READ_ENTRY_IN_PROGRESS", "Entry reads of the data API in progress (admitted under maxReadsInProgressLimit)."),
		readsBlocked:    d("bookkeeper_server_READ_ENTRY_BLOCKED", "Entry reads of the data API waiting for admission (maxReadsInProgressLimit, httpServerMaxEntryBytesInFlight)."),
		addsRejected:    d("bookkeeper_server_ADD_ENTRY_REJECTED", "Entry PUTs of the data API refused with 503 because no room freed within the admission wait."),
		readsRejected:   d("bookkeeper_server_READ_ENTRY_REJECTED", "Entry reads of the data API refused with 503 because no room freed within the admission wait."),
		bytesInFlight:   d("bookie_index_http_entry_bytes_in_flight", "Bytes of entry bodies the data API holds: PUT bodies being read or waiting for the write cache, payloads being answered."),
		bytesInFlightLimit: d("bookie_index_http_entry_bytes_in_flight_limit",
			"The budget of entry bytes in flight (httpServerMaxEntryBytesInFlight); 0: none."),
	}
}

func (c *admissionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.addsInProgress, c.addsBlocked, c.readsInProgress, c.readsBlocked,
		c.addsRejected, c.readsRejected, c.bytesInFlight, c.bytesInFlightLimit} {
		ch <- d
	}
}

func (c *admissionCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.a
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	gauge(c.addsInProgress, a.addsInProgress.Load())
	gauge(c.addsBlocked, a.addsBlocked.Load())
	gauge(c.readsInProgress, a.readsInProgress.Load())
	gauge(c.readsBlocked, a.readsBlocked.Load())
	ch <- prometheus.MustNewConstMetric(c.addsRejected, prometheus.CounterValue, float64(a.addsRejected.Load()))
	ch <- prometheus.MustNewConstMetric(c.readsRejected, prometheus.CounterValue, float64(a.readsRejected.Load()))
	gauge(c.bytesInFlight, a.bytes.inUse())
	var limit int64
	if a.bytes != nil {
		limit = a.bytes.limit
	}
	gauge(c.bytesInFlightLimit, limit)
}

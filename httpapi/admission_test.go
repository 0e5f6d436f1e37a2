package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/stretchr/testify/require"
)

// TestLimiter: units are granted in order of arrival, a waiter gives up
// after its wait or when its context ends (letting those behind it in),
// and a request larger than the limit takes the whole limit.
func TestLimiter(t *testing.T) {
	ctx := context.Background()
	l := newLimiter(10)
	require.True(t, l.acquire(ctx, 6, 0))
	require.False(t, l.acquire(ctx, 5, 0), "no wait: refused at once")
	require.False(t, l.acquire(ctx, 5, 10*time.Millisecond), "nothing frees in time")

	// A large waiter in front blocks a small one behind it (no
	// starvation), until it gives up.
	bigDone := make(chan bool)
	go func() { bigDone <- l.acquire(ctx, 8, 50*time.Millisecond) }()
	eventually(t, "the large waiter queues", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.waiters.Len() == 1 })
	smallDone := make(chan bool)
	go func() { smallDone <- l.acquire(ctx, 2, 5*time.Second) }()
	eventually(t, "the small waiter queues", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.waiters.Len() == 2 })
	require.False(t, <-bigDone, "the large one times out")
	require.True(t, <-smallDone, "then the small one fits")
	require.Equal(t, int64(8), l.inUse())

	// Release hands units to the waiters in order.
	next := make(chan bool)
	go func() { next <- l.acquire(ctx, 9, 5*time.Second) }()
	eventually(t, "a waiter queues", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.waiters.Len() == 1 })
	l.release(6)
	l.release(2)
	require.True(t, <-next)
	require.Equal(t, int64(9), l.inUse())
	l.release(9)

	// A context that ends stops the wait.
	require.True(t, l.acquire(ctx, 10, 0))
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan bool)
	go func() { done <- l.acquire(cctx, 1, time.Minute) }()
	eventually(t, "a waiter queues", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.waiters.Len() == 1 })
	cancel()
	require.False(t, <-done)
	l.release(10)

	// Larger than the limit: the whole limit, alone.
	require.True(t, l.acquire(ctx, 100, 0))
	require.Equal(t, int64(10), l.inUse())
	l.release(100)
	require.Equal(t, int64(0), l.inUse())

	var none *limiter
	require.True(t, none.acquire(ctx, 1<<40, 0), "a nil limiter admits everything")
	none.release(1 << 40)
}

// gateStorage is a LedgerStorage whose adds and reads wait at a gate: the
// test sees them arrive and lets them through.
type gateStorage struct {
	errStorage
	arrived chan string
	open    chan struct{}

	mu      sync.Mutex
	entries map[[2]int64][]byte
}

func newGateStorage() *gateStorage {
	return &gateStorage{arrived: make(chan string, 100), open: make(chan struct{}), entries: map[[2]int64][]byte{}}
}

func (g *gateStorage) AddEntryFrom(l, e int64, size int, r io.Reader) error {
	p := make([]byte, size)
	if _, err := io.ReadFull(r, p); err != nil {
		return err
	}
	g.arrived <- "add"
	<-g.open
	g.mu.Lock()
	g.entries[[2]int64{l, e}] = p
	g.mu.Unlock()
	return nil
}

func (g *gateStorage) GetEntry(l, e int64) ([]byte, error) {
	g.arrived <- "read"
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.entries[[2]int64{l, e}]
	if !ok {
		return nil, bookie.ErrNoEntry
	}
	return p, nil
}

// serveAsync runs a request in the background; its recorder arrives on
// the returned channel when the handler returns.
func serveAsync(h http.Handler, method, target, body string) <-chan *httptest.ResponseRecorder {
	done := make(chan *httptest.ResponseRecorder, 1)
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		done <- rec
	}()
	return done
}

// TestAdmission: entry bytes in flight, adds in progress and reads in
// progress are bounded; a request over a limit waits AdmissionWait and
// then gets 503 with Retry-After, and is counted; one that fits once room
// frees goes through.
func TestAdmission(t *testing.T) {
	g := newGateStorage()
	s := testService(t, func(o *Options) {
		o.Storage = g
		o.MaxEntryBytesInFlight = 10
		o.MaxAddsInProgress = 2
		o.MaxReadsInProgress = 1
		o.AdmissionWait = 30 * time.Millisecond
	}, instantIndex(path1))

	// 8 bytes in flight: another 8 do not fit, 2 do.
	first := serveAsync(s, http.MethodPut, entryURL(1, 0), "12345678")
	require.Equal(t, "add", <-g.arrived)
	code, body := do(t, s, http.MethodPut, entryURL(1, 1), "abcdefgh")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "The entry bytes in flight are at their limit (10 bytes, httpServerMaxEntryBytesInFlight)")
	second := serveAsync(s, http.MethodPut, entryURL(1, 2), "ab")
	require.Equal(t, "add", <-g.arrived)
	// Two adds in progress: a third waits for a slot, then gives up.
	code, body = do(t, s, http.MethodPut, entryURL(1, 3), "")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "Too many adds in progress (maxAddsInProgressLimit=2)")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, entryURL(1, 3), nil))
	require.Equal(t, "1", rec.Header().Get("Retry-After"))

	// A waiter admitted when room frees.
	s.admission.wait = time.Minute
	third := serveAsync(s, http.MethodPut, entryURL(1, 4), "abcdefgh")
	eventually(t, "the third PUT waits", func() bool { return s.admission.addsBlocked.Load() == 1 })
	g.open <- struct{}{} // one of the two PUTs at the gate completes: the third gets its slot and its bytes
	require.Equal(t, "add", <-g.arrived)
	g.open <- struct{}{}
	g.open <- struct{}{}
	for _, done := range []<-chan *httptest.ResponseRecorder{first, second, third} {
		rec := <-done
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	require.Equal(t, int64(0), s.admission.bytes.inUse())
	s.admission.wait = 30 * time.Millisecond

	// One read in progress: a second gets 503. A read's payload counts
	// against the bytes in flight while it is answered.
	read := serveAsync(s, http.MethodGet, entryURL(1, 0), "")
	require.Equal(t, "read", <-g.arrived)
	code, body = do(t, s, http.MethodGet, entryURL(1, 2), "")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "Too many reads in progress (maxReadsInProgressLimit=1)")
	g.open <- struct{}{}
	r := <-read
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, "12345678", r.Body.String())

	code, scrape := do(t, s, http.MethodGet, PathMetrics, "")
	require.Equal(t, http.StatusOK, code)
	for _, line := range []string{
		"bookkeeper_server_ADD_ENTRY_REJECTED 3", "bookkeeper_server_READ_ENTRY_REJECTED 1",
		"bookkeeper_server_ADD_ENTRY_IN_PROGRESS 0", "bookkeeper_server_READ_ENTRY_BLOCKED 0",
		"bookie_index_http_entry_bytes_in_flight 0", "bookie_index_http_entry_bytes_in_flight_limit 10",
	} {
		require.Contains(t, scrape, "\n"+line+"\n")
	}
}

// failReader fails the test if it is read.
type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("the body was read")
	return 0, io.EOF
}

// TestPutEntryBody: a PUT must say how long its body is (411), is refused
// above the entry limit before its body is read (413), and a body shorter
// than its Content-Length is the client's error (400): nothing is added.
func TestPutEntryBody(t *testing.T) {
	s, st := storageService(t, "")
	put := func(length int64, body io.Reader) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPut, entryURL(1, 0), body)
		req.ContentLength = length
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	rec := put(-1, failReader{t})
	require.Equal(t, http.StatusLengthRequired, rec.Code, rec.Body.String())
	rec = put(1<<20+1, failReader{t})
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "the limit is 1048576 (nettyMaxFrameSizeBytes: raise it to take larger entries)")
	rec = put(10, strings.NewReader("short"))
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "Failed to read request body")
	_, err := st.GetEntry(1, 0)
	require.ErrorIs(t, err, bookie.ErrNoLedger)
	payload := bytes.Repeat([]byte("z"), 1<<20)
	rec = put(int64(len(payload)), bytes.NewReader(payload))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got, err := st.GetEntry(1, 0)
	require.NoError(t, err)
	require.Equal(t, payload, got)
}

// TestEntryLimitFollowsStorage: the data API's entry limit is the smaller
// of MaxEntryBytes and what the storage's write cache holds.
func TestEntryLimitFollowsStorage(t *testing.T) {
	s, st := storageService(t, "") // write caches of 2 MiB per directory, MaxEntryBytes 1 MiB
	require.Equal(t, int64(1<<20), s.maxEntryBytes)
	s2, err := New(Options{Directories: s.opts.Directories, Storage: st, MaxEntryBytes: 64 << 20, Registry: nil})
	require.NoError(t, err)
	defer s2.Close()
	require.Equal(t, int64(st.MaxEntrySize()), s2.maxEntryBytes)
	require.Less(t, st.MaxEntrySize(), 2<<20)
	// The 413 names what sets the limit: the write cache, not the key
	// set above it.
	req := httptest.NewRequest(http.MethodPut, entryURL(1, 0), failReader{t})
	req.ContentLength = int64(st.MaxEntrySize()) + 1
	rec := httptest.NewRecorder()
	s2.ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
	require.Equal(t, fmt.Sprintf("Entry too large: %d bytes, the limit is %d (what half of a directory's write cache holds, "+
		"below nettyMaxFrameSizeBytes=67108864: raise dbStorage_writeCacheMaxSizeMb to take larger entries).",
		st.MaxEntrySize()+1, st.MaxEntrySize()), strings.TrimSpace(rec.Body.String()))
}

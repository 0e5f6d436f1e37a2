package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/stretchr/testify/require"
)

// The paths of BookKeeper's TestHttpService.
const (
	path1 = "/data1/bookkeeper/ledgers/current/locations"
	path2 = "/data2/bookkeeper/ledgers/current/locations"
)

// fakeIndex is an Index whose Compact blocks until the test sends the
// result on release, or its context is cancelled.
type fakeIndex struct {
	path       string
	release    chan error
	compacting atomic.Bool
	calls      atomic.Int64
	metrics    entrylocation.Metrics
}

func newFakeIndex(path string) *fakeIndex {
	return &fakeIndex{path: path, release: make(chan error)}
}

func (f *fakeIndex) Path() string       { return f.path }
func (f *fakeIndex) IsCompacting() bool { return f.compacting.Load() }

func (f *fakeIndex) Metrics() entrylocation.Metrics { return f.metrics }

func (f *fakeIndex) Compact(ctx context.Context) error {
	f.calls.Add(1)
	f.compacting.Store(true)
	defer f.compacting.Store(false)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-f.release:
		return err
	}
}

// instantIndex is a fakeIndex whose compactions finish at once.
func instantIndex(path string) *fakeIndex {
	f := newFakeIndex(path)
	close(f.release)
	return f
}

// testService returns a Service over fakes at the given paths, closed at
// the end of the test.
func testService(t *testing.T, mutate func(*Options), fakes ...*fakeIndex) *Service {
	t.Helper()
	opts := Options{BookieID: "bookie1:3181"}
	for _, f := range fakes {
		dir := strings.TrimSuffix(f.path, "/locations")
		opts.Directories = append(opts.Directories, Directory{LedgerDir: dir, IndexDir: dir, Index: f})
	}
	if mutate != nil {
		mutate(&opts)
	}
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// do sends a request to the handler and returns the status and body.
func do(t *testing.T, h http.Handler, method, target, body string, header ...string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// jsonString is s as a JSON string, as upstream answers its messages.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// eventually polls cond every few milliseconds for up to 5 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// compactionState GETs the compaction endpoint and decodes it.
func compactionState(t *testing.T, h http.Handler) map[string]bool {
	t.Helper()
	code, body := do(t, h, http.MethodGet, PathEntryLocationCompact, "")
	require.Equal(t, http.StatusOK, code)
	var m map[string]bool
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

// gcDetails GETs gc_details and decodes it.
type gcDetail struct {
	LedgerDir                             string `json:"ledgerDir"`
	IndexDir                              string `json:"indexDir"`
	EntryLocationDBPath                   string `json:"entryLocationDBPath"`
	EntryLocationCompacting               bool   `json:"entryLocationCompacting"`
	LastEntryLocationCompactionTime       int64  `json:"lastEntryLocationCompactionTime"`
	EntryLocationCompactionCounter        int64  `json:"entryLocationCompactionCounter"`
	LastEntryLocationCompactionDurationMs int64  `json:"lastEntryLocationCompactionDurationMs"`
	LastEntryLocationCompactionOutcome    string `json:"lastEntryLocationCompactionOutcome"`
	LastEntryLocationCompactionError      string `json:"lastEntryLocationCompactionError"`
}

func gcDetails(t *testing.T, h http.Handler) []gcDetail {
	t.Helper()
	code, body := do(t, h, http.MethodGet, PathGCDetails, "")
	require.Equal(t, http.StatusOK, code)
	var list []gcDetail
	require.NoError(t, json.Unmarshal([]byte(body), &list), body)
	return list
}

// idle reports whether no directory is compacting.
func idle(t *testing.T, h http.Handler) bool {
	for _, c := range compactionState(t, h) {
		if c {
			return false
		}
	}
	return true
}

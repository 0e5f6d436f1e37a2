package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// storageService returns a Service over a real storage of two
// directories, on in-memory file systems.
func storageService(t *testing.T, token string) (*Service, *bookie.Storage) {
	t.Helper()
	st, err := bookie.Open(&bookie.Options{
		LedgerDirs:     []string{"/d1/ledgers", "/d2/ledgers"},
		FlushInterval:  -1,
		GCWaitTime:     -1,
		WriteCacheSize: 8 << 20,
		ReadCacheSize:  2 << 20,
		FS:             vfs.NewMem(),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	opts := Options{BookieID: "bookie1:3181", AuthToken: token, Storage: st, MaxEntryBytes: 1 << 20}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, st
}

func entryURL(l, e int64) string {
	return fmt.Sprintf("%s?ledgerId=%d&entryId=%d", PathLedgerEntry, l, e)
}

func TestDataAPI(t *testing.T) {
	const token = "secret"
	s, st := storageService(t, token)
	auth := []string{"Authorization", "Bearer " + token}

	// Writes need the token.
	code, _ := do(t, s, http.MethodPut, entryURL(1, 0), "payload")
	require.Equal(t, http.StatusUnauthorized, code)
	for l := int64(1); l <= 4; l++ {
		for e := int64(0); e < 5; e++ {
			code, body := do(t, s, http.MethodPut, entryURL(l, e), fmt.Sprintf("entry %d of %d", e, l), auth...)
			require.Equal(t, http.StatusOK, code, body)
			require.Contains(t, body, fmt.Sprintf(`"entryId" : %d`, e))
		}
	}
	code, _ = do(t, s, http.MethodPut, entryURL(1, 5), "", auth...)
	require.Equal(t, http.StatusOK, code, "an empty payload is an entry")

	read := func(l, e int64) (int, string, http.Header) {
		req := httptest.NewRequest(http.MethodGet, entryURL(l, e), nil)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String(), rec.Header()
	}
	check := func() {
		for l := int64(1); l <= 4; l++ {
			for e := int64(0); e < 5; e++ {
				code, body, h := read(l, e)
				require.Equal(t, http.StatusOK, code, body)
				require.Equal(t, fmt.Sprintf("entry %d of %d", e, l), body)
				require.Equal(t, "application/octet-stream", h.Get("Content-Type"))
				require.Equal(t, fmt.Sprint(e), h.Get("X-Entry-Id"))
			}
		}
		code, body, h := read(2, -1)
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, "entry 4 of 2", body)
		require.Equal(t, "4", h.Get("X-Entry-Id"))
	}
	check()
	code, body := do(t, s, http.MethodPut, PathCheckpoint, "", auth...)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"checkpoint" : "done"`)
	check()

	code, body = do(t, s, http.MethodGet, PathLedgerLastEntry+"?ledgerId=3", "")
	require.Equal(t, http.StatusOK, code, body)
	var last struct {
		LedgerID int64  `json:"ledgerId"`
		EntryID  int64  `json:"entryId"`
		Size     int    `json:"size"`
		Payload  []byte `json:"payload"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &last))
	require.Equal(t, int64(3), last.LedgerID)
	require.Equal(t, int64(4), last.EntryID)
	require.Equal(t, "entry 4 of 3", string(last.Payload))

	// Absent: 404.
	code, body, _ = read(1, 77)
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, "Entry 77 not found in 1")
	code, body, _ = read(99, 0)
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, "Ledger 99 not found")
	code, _ = do(t, s, http.MethodGet, PathLedgerLastEntry+"?ledgerId=99", "")
	require.Equal(t, http.StatusNotFound, code)

	// Delete.
	code, _ = do(t, s, http.MethodDelete, PathLedger+"?ledgerId=2", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body = do(t, s, http.MethodDelete, PathLedger+"?ledgerId=2", "", auth...)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"existed" : true`)
	code, _, _ = read(2, 0)
	require.Equal(t, http.StatusNotFound, code)
	code, body = do(t, s, http.MethodDelete, PathLedger+"?ledgerId=2", "", auth...)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"existed" : false`)

	// Bad requests.
	for _, target := range []string{
		PathLedgerEntry, PathLedgerEntry + "?ledgerId=1", PathLedgerEntry + "?ledgerId=x&entryId=0",
		PathLedgerEntry + "?ledgerId=-1&entryId=0", PathLedgerEntry + "?ledgerId=1&entryId=-2",
		PathLedgerLastEntry, PathLedgerLastEntry + "?ledgerId=1.5",
	} {
		code, body := do(t, s, http.MethodGet, target, "")
		require.Equal(t, http.StatusBadRequest, code, target)
		require.Contains(t, strings.ToLower(body), "query parameter")
	}
	code, _ = do(t, s, http.MethodPut, entryURL(1, -1), "x", auth...)
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = do(t, s, http.MethodPut, entryURL(1, 9), strings.Repeat("x", 1<<20+1), auth...)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	for _, c := range []struct{ method, target string }{
		{http.MethodPost, entryURL(1, 1)}, {http.MethodDelete, entryURL(1, 1)},
		{http.MethodPut, PathLedgerLastEntry + "?ledgerId=1"}, {http.MethodGet, PathLedger + "?ledgerId=1"},
		{http.MethodGet, PathCheckpoint},
	} {
		code, _ := do(t, s, c.method, c.target, "", auth...)
		require.Equal(t, http.StatusNotFound, code, "%s %s", c.method, c.target)
	}

	// The storage's metrics, with upstream's names and labels.
	code, scrape := do(t, s, http.MethodGet, PathMetrics, "")
	require.Equal(t, http.StatusOK, code)
	for _, name := range []string{
		"bookie_add_entry_count", "bookie_read_entry_count", "bookie_flush_count", "bookie_flush_entrylog_count",
		"bookie_flush_locations_index_count", "bookie_flush_ledger_index_count", "bookie_flush_size_sum",
		"bookie_write_cache_hits", "bookie_read_cache_misses", "bookie_write_cache_size", "bookie_rejected_write_requests",
		"bookie_read_locations_index_time", "bookie_readahead_batch_count_count", "bookie_index_storage_ledgers",
		"bookie_throttled_write_count", "bookie_index_storage_last_checkpoint_timestamp_seconds",
	} {
		require.Regexp(t, regexp.MustCompile(`(?m)^`+name+`\{`), scrape, name)
	}
	require.Regexp(t, regexp.MustCompile(`(?m)^bookie_add_entry_count\{indexDir="/d2/ledgers/current",ledgerDir="/d2/ledgers/current",success="true"\} 11$`), scrape)
	require.Regexp(t, regexp.MustCompile(`(?m)^bookie_flush_count\{indexDir="/d2/ledgers/current",ledgerDir="/d2/ledgers/current",success="true"\} 1$`), scrape)

	// Through the storage directly: the same entries.
	p, err := st.GetEntry(4, 3)
	require.NoError(t, err)
	require.Equal(t, "entry 3 of 4", string(p))
}

// errStorage fails every call with err.
type errStorage struct{ err error }

func (f errStorage) AddEntry(int64, int64, []byte) error       { return f.err }
func (f errStorage) GetEntry(int64, int64) ([]byte, error)     { return nil, f.err }
func (f errStorage) GetLastEntry(int64) (int64, []byte, error) { return 0, nil, f.err }
func (f errStorage) DeleteLedger(int64) (bool, error)          { return false, f.err }
func (f errStorage) Checkpoint() error                         { return f.err }
func (f errStorage) Metrics() []bookie.DirMetrics              { return nil }

func TestDataAPIErrors(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
	}{
		{errors.Wrap(bookie.ErrRejected, "full"), http.StatusServiceUnavailable},
		{errors.Wrap(bookie.ErrClosed, "closing"), http.StatusServiceUnavailable},
		{errors.Wrap(bookie.ErrNoEntry, "x"), http.StatusNotFound},
		{errors.Wrap(bookie.ErrNoLedger, "x"), http.StatusNotFound},
		{errors.Wrap(bookie.ErrInvalidArgument, "x"), http.StatusBadRequest},
		{errors.Wrap(entrylog.ErrCorruption, "bad"), http.StatusInternalServerError},
	} {
		s := testService(t, func(o *Options) { o.Storage = errStorage{c.err} }, instantIndex(path1))
		for _, r := range []struct{ method, target string }{
			{http.MethodPut, entryURL(1, 1)}, {http.MethodGet, entryURL(1, 1)}, {http.MethodGet, entryURL(1, -1)},
			{http.MethodGet, PathLedgerLastEntry + "?ledgerId=1"}, {http.MethodDelete, PathLedger + "?ledgerId=1"},
			{http.MethodPut, PathCheckpoint},
		} {
			code, body := do(t, s, r.method, r.target, "x")
			require.Equal(t, c.status, code, "%v: %s %s: %s", c.err, r.method, r.target, body)
		}
	}
	// Without a storage there is no data API.
	s := testService(t, nil, instantIndex(path1))
	code, _ := do(t, s, http.MethodGet, entryURL(1, 1), "")
	require.Equal(t, http.StatusNotFound, code)
}

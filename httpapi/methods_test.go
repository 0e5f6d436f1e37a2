package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestUnservedMethods sends every route every method it does not serve and
// checks upstream's status (see methods.go), a body naming the methods the
// route serves, and the Allow header. The bodies of the routes upstream has
// are upstream's, verbatim.
func TestUnservedMethods(t *testing.T) {
	fs := vfs.NewMem()
	st, err := bookie.Open(&bookie.Options{
		LedgerDirs: []string{"/d1/ledgers"}, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 1 << 20, ReadCacheSize: -1, FS: fs,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	opts := Options{BookieID: "bookie1:3181", Storage: st, GC: st, Settings: map[string]string{"httpServerPort": "8080"}}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)

	upstream404 := http.StatusNotFound
	for _, c := range []struct {
		path   string
		served []string // methods the route serves (HEAD is served as GET)
		status int
		body   string // "" for our routes: the body must name the served methods
	}{
		// DELETE is ours: the Allow header names it, upstream's body does not.
		{PathEntryLocationCompact, []string{"GET", "PUT", "DELETE"}, http.StatusMethodNotAllowed,
			"Not found method. Should be PUT to trigger entry location compact, Or GET to get entry location compact state."},
		{PathGCDetails, []string{"GET"}, upstream404,
			"Only support GET method to retrieve GC details. If you want to trigger gc, send a POST to gc endpoint."},
		{PathGC, []string{"GET", "PUT"}, http.StatusMethodNotAllowed,
			"Not allowed method. Should be PUT to trigger GC, Or GET to get Force GC state."},
		{PathSuspendCompaction, []string{"GET", "PUT"}, upstream404,
			"Not found method. Should be PUT to suspend major or minor compaction, Or GET to get compaction state."},
		{PathResumeCompaction, []string{"PUT"}, upstream404,
			"Not found method. Should be PUT to resume major or minor compaction, Or GET to get compaction state."},
		{PathState, []string{"GET"}, upstream404, "Only support GET method to retrieve bookie state."},
		{PathStateReadOnly, []string{"GET", "PUT"}, upstream404, "Unsupported method. Should be GET or PUT method"},
		{PathIsReady, []string{"GET"}, upstream404, "Only support GET method check if bookie is ready."},
		{PathBookieInfo, []string{"GET"}, upstream404, "Only GET is supported."},
		{PathServerConfig, []string{"GET"}, upstream404, ""},
		{PathMetrics, []string{"GET"}, http.StatusForbidden, ""},
		{PathLedgerEntry + "?ledgerId=1&entryId=0", []string{"GET", "PUT"}, upstream404, ""},
		{PathLedgerLastEntry + "?ledgerId=1", []string{"GET"}, upstream404, ""},
		{PathLedger + "?ledgerId=1", []string{"DELETE"}, upstream404, ""},
		{PathCheckpoint, []string{"PUT"}, upstream404, ""},
		{PathIndexCheckpoint + "?dir=/backup", []string{"PUT", "POST"}, upstream404, ""},
	} {
		served := map[string]bool{}
		for _, m := range c.served {
			served[m] = true
		}
		allow := strings.Join(c.served, ", ")
		if served["GET"] {
			allow = strings.Replace(allow, "GET", "GET, HEAD", 1)
		}
		for _, m := range []string{"GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"} {
			if served[m] {
				continue
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(m, c.path, nil))
			what := m + " " + c.path
			require.Equal(t, c.status, rec.Code, what)
			body := rec.Body.String()
			if c.body != "" {
				require.Equal(t, c.body, body, what)
			}
			for _, sm := range c.served {
				if c.path == PathEntryLocationCompact && sm == "DELETE" {
					continue
				}
				require.Contains(t, body, sm, "%s: the answer does not name %s", what, sm)
			}
			require.Equal(t, allow, rec.Header().Get("Allow"), what)
		}
	}

	// Upstream's HeartbeatService answers OK to every method.
	for _, m := range []string{"GET", "HEAD", "PUT", "POST", "DELETE"} {
		code, _ := do(t, s, m, PathHeartbeat, "")
		require.Equal(t, http.StatusOK, code, m)
	}
}

package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
)

// The fuzzed service's directories: its data (two ledger directories with
// their indexes) and the backup root. Nothing may be written anywhere
// else.
var (
	fuzzLedgerDirs = []string{"/data/l1", "/data/l2"}
	fuzzBackupRoot = "/backup"
	fuzzToken      = "token"
)

// fuzzRoutes are the paths a fuzzed request goes to, by index; an index
// past the end takes the fuzzed path itself.
var fuzzRoutes = []string{
	PathLedgerEntry, PathLedgerLastEntry, PathLedger, PathCheckpoint, PathIndexCheckpoint,
	PathStateReadOnly, PathEntryLocationCompact, PathGCDetails, PathState, PathBookieInfo,
	PathServerConfig, PathGC, PathSuspendCompaction, PathResumeCompaction, PathHeartbeat,
	PathIsReady, PathMetrics,
}

var fuzzMethods = []string{
	http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodHead,
	http.MethodPatch, http.MethodOptions, "PROPFIND",
}

// fuzzEnv is a Service over a real storage on a MemFS.
type fuzzEnv struct {
	fs   *vfs.MemFS
	st   *bookie.Storage
	svc  *Service
	root bool // backups must go under fuzzBackupRoot
}

// newFuzzEnv returns a fuzzed service; with root, its backups must go
// under fuzzBackupRoot.
func newFuzzEnv(t testing.TB, root bool) *fuzzEnv {
	fs := vfs.NewMem()
	st, err := bookie.Open(&bookie.Options{LedgerDirs: fuzzLedgerDirs, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20, MaxThrottleTime: time.Millisecond, FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Storage: st, GC: st, FS: fs, AuthToken: fuzzToken,
		Settings: map[string]string{"k": "v"}, MaxEntryBytesInFlight: 1 << 20, MaxAddsInProgress: 4,
		MaxReadsInProgress: 4, AdmissionWait: time.Millisecond}
	if root {
		opts.BackupRoot = fuzzBackupRoot
	}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	svc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fuzzEnv{fs: fs, st: st, svc: svc, root: root}
}

func (e *fuzzEnv) close() {
	e.svc.Close()
	_ = e.st.Close()
}

// storageDirs are the directories a storage makes in a ledger directory
// (its index directory too, here the same); a checkpoint makes others.
var storageDirs = map[string]bool{
	"current": true, "current/locations": true, "current/ledgers": true,
	"current/locations/lost": true, "current/ledgers/lost": true,
}

// strayPaths returns the directories inside a data directory that the
// storage does not make there (a checkpoint gone into it), and, with
// root, what the file system holds outside the data directories and the
// backup root (their ancestors aside).
func strayPaths(fs vfs.FS, root bool) []string {
	var stray []string
	allowed := append([]string{fuzzBackupRoot}, fuzzLedgerDirs...)
	var walk func(dir string)
	walk = func(dir string) {
		names, err := fs.List(dir)
		if err != nil {
			return
		}
		for _, n := range names {
			p := path.Join(dir, n)
			inside, ancestor := false, false
			for _, a := range allowed {
				inside = inside || within(p, a)
				ancestor = ancestor || within(a, p)
			}
			switch {
			case inside:
			case ancestor:
				walk(p)
			default:
				stray = append(stray, p)
			}
		}
	}
	if root {
		walk("/")
	}
	var inData func(root, dir string)
	inData = func(root, dir string) {
		names, err := fs.List(dir)
		if err != nil {
			return
		}
		for _, n := range names {
			p := path.Join(dir, n)
			if fi, err := fs.Stat(p); err != nil || !fi.IsDir() {
				continue
			}
			if !storageDirs[strings.TrimPrefix(p, root+"/")] {
				stray = append(stray, p)
				continue
			}
			inData(root, p)
		}
	}
	for _, d := range fuzzLedgerDirs {
		inData(d, d)
	}
	return stray
}

// FuzzHTTPAPI sends requests of every method, to every route (and any
// path), with any query and body, with or without the token, to a service
// over a real storage on a MemFS. Whatever the request, the answer is not a
// server error (500, or any 5xx but 503, which the admission control and a
// forced read-only mode answer), the handler does not panic, no directory
// appears in a data directory but the storage's own, and, when backups
// have a root, nothing appears outside the data directories and the root.
// flags: 1 sends the token, 2 no Content-Length, 4 the service without a
// backup root.
func FuzzHTTPAPI(f *testing.F) {
	for _, s := range []struct {
		method, route uint8
		path, query   string
		body          []byte
		flags         uint8
	}{
		{1, 0, "", "ledgerId=1&entryId=0", []byte("payload"), 1},
		{0, 0, "", "ledgerId=1&entryId=0", nil, 0},
		{0, 0, "", "ledgerId=1&entryId=-1", nil, 0},
		{0, 1, "", "ledgerId=1", nil, 0},
		{3, 2, "", "ledgerId=1", nil, 1},
		{1, 3, "", "", nil, 1},
		{1, 4, "", "dir=/backup/a", nil, 1},
		{2, 4, "", "dir=/backup/a", nil, 1},
		{1, 4, "", "dir=/data/l1/current", nil, 1},
		{1, 4, "", "dir=/backup/../data/l1", nil, 1},
		{1, 4, "", "dir=/backup/a%00b", nil, 1},
		{1, 4, "", "dir=/elsewhere", nil, 1},
		{1, 4, "", "dir=/elsewhere", nil, 5},
		{1, 4, "", "dir=/data/l1/current", nil, 5},
		{1, 4, "", "dir=/data", nil, 5},
		{1, 4, "", "dir=/data/l2/current/locations/x", nil, 5},
		{1, 4, "", "dir=" + strings.Repeat("x", 300), nil, 1},
		{1, 5, "", "", []byte(`{"readOnly": true}`), 1},
		{1, 5, "", "", []byte(`{"readOnly": false}`), 1},
		{1, 6, "", "", []byte(`{"entryLocationRocksDBCompact": true}`), 1},
		{1, 6, "", "", []byte(`{"entryLocationRocksDBCompact": "true", "entryLocations": ["/x"]}`), 1},
		{3, 6, "", "entryLocations=/data/l1/current/locations", nil, 1},
		{1, 11, "", "", []byte(`{"forceMajor": true}`), 1},
		{1, 12, "", "", []byte(`{"suspendMajor": true}`), 1},
		{1, 13, "", "", []byte(`{"resumeMajor": true, "resumeMinor": true}`), 1},
		{0, 17, "/api/v1/../heartbeat", "", nil, 0},
		{1, 0, "", "ledgerId=1&entryId=0&ledgerId=2", []byte("x"), 1},
		{1, 0, "", "ledgerId=1&entryId=1", []byte("chunked"), 3},
	} {
		f.Add(s.method, s.route, s.path, s.query, s.body, s.flags)
	}
	// Two services: backups under a root, or anywhere outside the data
	// directories.
	var envs [2]*fuzzEnv
	runs := 0
	f.Cleanup(func() {
		for _, e := range envs {
			if e != nil {
				e.close()
			}
		}
	})
	f.Fuzz(func(t *testing.T, method, route uint8, rawPath, query string, body []byte, flags uint8) {
		// A fresh storage now and then: state accumulates (entries,
		// checkpoints, a forced read-only mode).
		if runs%500 == 0 {
			for i, e := range envs {
				if e != nil {
					e.close()
				}
				envs[i] = newFuzzEnv(t, i == 0)
			}
		}
		runs++
		env := envs[flags>>2&1]
		p := rawPath
		if int(route) < len(fuzzRoutes) {
			p = fuzzRoutes[route]
		}
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		req := &http.Request{
			Method:     fuzzMethods[int(method)%len(fuzzMethods)],
			URL:        &url.URL{Path: p, RawQuery: query},
			Proto:      "HTTP/1.1",
			ProtoMajor: 1,
			ProtoMinor: 1,
			Header:     http.Header{},
			Body:       io.NopCloser(bytes.NewReader(body)),
			Host:       "bookie",
			RemoteAddr: "127.0.0.1:1234",
		}
		req.RequestURI = req.URL.RequestURI()
		req.ContentLength = int64(len(body))
		if flags&2 != 0 {
			req.ContentLength = -1 // chunked: no length
		}
		if flags&1 != 0 {
			req.Header.Set("Authorization", "Bearer "+fuzzToken)
		}
		rec := httptest.NewRecorder()
		env.svc.ServeHTTP(rec, req)
		if code := rec.Code; code >= 500 && code != http.StatusServiceUnavailable {
			t.Fatalf("%s %s: %d for a client's request: %s", req.Method, req.RequestURI, code, rec.Body.String())
		}
		if stray := strayPaths(env.fs, env.root); len(stray) > 0 {
			t.Fatalf("%s %s wrote where it must not: %v", req.Method, req.RequestURI, stray)
		}
	})
}

package httpapi

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpstreamTable sends every row of upstream's PUT table (reference §4)
// and checks status and body byte for byte, then which directories
// started compacting.
func TestUpstreamTable(t *testing.T) {
	triggeredAll := jsonString("Triggered entry Location RocksDB compact on bookie:bookie1:3181")
	triggered := func(locations string) string {
		return jsonString("Triggered entry Location RocksDB: " + locations + " compact on bookie:bookie1:3181.")
	}
	invalid := func(locations string) string {
		return jsonString("Specified trigger compact entryLocations: " + locations +
			" is invalid. Bookie entry location RocksDB path: [" + path1 + ", " + path2 + "].")
	}
	badJSON := jsonString("Failed to deserialize Object from Json string")
	for _, tc := range []struct {
		name    string
		body    string
		code    int
		want    string // exact body
		compact []bool // per directory: a compaction started
	}{
		{"empty body", "", 400, "Empty request body", []bool{false, false}},
		{"blank body", " \n\t", 400, "Empty request body", []bool{false, false}},
		{"invalid JSON", `{"entryLocationRocksDBCompact":`, 400, badJSON, []bool{false, false}},
		{"not JSON", `entryLocationRocksDBCompact=true`, 400, badJSON, []bool{false, false}},
		{"JSON array", `[true]`, 400, badJSON, []bool{false, false}},
		{"JSON null", `null`, 400, badJSON, []bool{false, false}},
		{"JSON string", `"true"`, 400, badJSON, []bool{false, false}},
		{"trailing data", `{"entryLocationRocksDBCompact":true} x`, 400, badJSON, []bool{false, false}},
		{"flag missing", `{}`, 200, "Not trigger Entry Location RocksDB compact.", []bool{false, false}},
		{"flag false", `{"entryLocationRocksDBCompact":false}`, 200, "Not trigger Entry Location RocksDB compact.", []bool{false, false}},
		{"flag false with an unknown path", `{"entryLocationRocksDBCompact":false,"entryLocations":"/nope"}`, 200, "Not trigger Entry Location RocksDB compact.", []bool{false, false}},
		{"flag null", `{"entryLocationRocksDBCompact":null}`, 200, "Not trigger Entry Location RocksDB compact.", []bool{false, false}},
		{"true, all", `{"entryLocationRocksDBCompact":true}`, 200, triggeredAll, []bool{true, true}},
		{"true, blank locations", `{"entryLocationRocksDBCompact":true,"entryLocations":"  "}`, 200, triggeredAll, []bool{true, true}},
		{"true, null locations", `{"entryLocationRocksDBCompact":true,"entryLocations":null}`, 200, triggeredAll, []bool{true, true}},
		{"true, one path", `{"entryLocationRocksDBCompact":true,"entryLocations":"` + path1 + `"}`, 200, triggered(path1), []bool{true, false}},
		{"true, both paths", `{"entryLocationRocksDBCompact":true,"entryLocations":"` + path1 + `,` + path2 + `"}`, 200, triggered(path1 + "," + path2), []bool{true, true}},
		{"true, unknown path", `{"entryLocationRocksDBCompact":true,"entryLocations":"/invalid1/locations,` + path2 + `"}`, 400, invalid("/invalid1/locations," + path2), []bool{false, false}},
		{"true, empty item only", `{"entryLocationRocksDBCompact":true,"entryLocations":","}`, 400, invalid(","), []bool{false, false}},
		// Improvements: upstream answers these with a 500.
		{"string true", `{"entryLocationRocksDBCompact":"true"}`, 200, triggeredAll, []bool{true, true}},
		{"string TRUE with path", `{"entryLocationRocksDBCompact":" TRUE ","entryLocations":"` + path2 + `"}`, 200, triggered(path2), []bool{false, true}},
		{"string false", `{"entryLocationRocksDBCompact":"false"}`, 200, "Not trigger Entry Location RocksDB compact.", []bool{false, false}},
		{"locations array", `{"entryLocationRocksDBCompact":true,"entryLocations":["` + path2 + `"]}`, 200, triggered(path2), []bool{false, true}},
		{"items trimmed, trailing comma", `{"entryLocationRocksDBCompact":true,"entryLocations":" ` + path1 + ` ,"}`, 200, triggered(" " + path1 + " ,"), []bool{true, false}},
		{"uncleaned path", `{"entryLocationRocksDBCompact":true,"entryLocations":"` + path1 + `/"}`, 200, triggered(path1 + "/"), []bool{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f1, f2 := instantIndex(path1), instantIndex(path2)
			s := testService(t, nil, f1, f2)
			code, body := do(t, s, http.MethodPut, PathEntryLocationCompact, tc.body)
			require.Equal(t, tc.code, code, body)
			require.Equal(t, tc.want, body)
			s.Close() // waits for the compactions
			for i, f := range []*fakeIndex{f1, f2} {
				require.Equal(t, tc.compact[i], f.calls.Load() == 1, "directory %d", i)
			}
		})
	}
}

// TestWrongTypes checks that values of the wrong type get 400 with a
// message naming the field (upstream: 500).
func TestWrongTypes(t *testing.T) {
	f1, f2 := instantIndex(path1), instantIndex(path2)
	s := testService(t, nil, f1, f2)
	for _, tc := range []struct{ body, field string }{
		{`{"entryLocationRocksDBCompact":1}`, "entryLocationRocksDBCompact"},
		{`{"entryLocationRocksDBCompact":"yes"}`, "entryLocationRocksDBCompact"},
		{`{"entryLocationRocksDBCompact":{}}`, "entryLocationRocksDBCompact"},
		{`{"entryLocationRocksDBCompact":true,"entryLocations":5}`, "entryLocations"},
		{`{"entryLocationRocksDBCompact":true,"entryLocations":[1,2]}`, "entryLocations"},
		{`{"entryLocationRocksDBCompact":false,"entryLocations":{"a":1}}`, "entryLocations"},
		{`{"entryLocationRocksDBCompact":"` + strings.Repeat("x", 1000) + `"}`, "entryLocationRocksDBCompact"},
	} {
		code, body := do(t, s, http.MethodPut, PathEntryLocationCompact, tc.body)
		require.Equal(t, http.StatusBadRequest, code, tc.body)
		require.True(t, strings.HasPrefix(body, `"`+tc.field+" must be "), body)
		require.Less(t, len(body), 300, "the client's value is shortened")
	}
	s.Close()
	require.Zero(t, f1.calls.Load()+f2.calls.Load())
}

// TestHttpServiceCases is upstream's
// TestHttpService.testTriggerEntryLocationCompactService.
func TestHttpServiceCases(t *testing.T) {
	f1, f2 := instantIndex(path1), newFakeIndex(path2)
	s := testService(t, nil, f1, f2)

	code, _ := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code)
	code, body := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true,"entryLocations":"`+path1+`"}`)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "Triggered entry Location RocksDB")
	code, body = do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true,"entryLocations":"/invalid1/locations,/invalid2/locations"}`)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "is invalid")
	code, _ = do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true,"entryLocations":"`+path1+`,`+path2+`"}`)
	require.Equal(t, http.StatusOK, code)
	code, _ = do(t, s, http.MethodPut, PathEntryLocationCompact, "")
	require.Equal(t, http.StatusBadRequest, code)

	// path2's first compaction still runs (its fake blocks); path1's are
	// instant.
	eventually(t, "path1 idle", func() bool { return !compactionState(t, s)[path1] })
	code, body = do(t, s, http.MethodGet, PathEntryLocationCompact, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "{\n  \""+path1+"\" : false,\n  \""+path2+"\" : true\n}", body)
	require.Contains(t, body, `"/data2/bookkeeper/ledgers/current/locations" : true`)
	require.Contains(t, body, `"/data1/bookkeeper/ledgers/current/locations" : false`)
	// The compaction's goroutine may not have called Compact yet.
	eventually(t, "path2's compaction running", func() bool { return f2.calls.Load() > 0 })
	require.Equal(t, int64(1), f2.calls.Load(), "a trigger while compacting is skipped")

	for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodOptions, "BREW"} {
		code, body = do(t, s, m, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
		require.Equal(t, http.StatusMethodNotAllowed, code, m)
		require.Equal(t, "Not found method. Should be PUT to trigger entry location compact, Or GET to get entry location compact state.", body)
	}
	f2.release <- nil
	eventually(t, "idle", func() bool { return idle(t, s) })
	d := gcDetails(t, s)
	require.Equal(t, int64(1), d[1].EntryLocationCompactionCounter)
	require.Equal(t, outcomeCompleted, d[1].LastEntryLocationCompactionOutcome)
	// path1's were instant, but a trigger can still arrive while the
	// previous one runs and be skipped.
	require.GreaterOrEqual(t, d[0].EntryLocationCompactionCounter, int64(1))
	require.LessOrEqual(t, d[0].EntryLocationCompactionCounter, int64(3))
}

// TestCancel covers DELETE: all directories or the named ones; the answer
// says which running compactions were told to stop.
func TestCancel(t *testing.T) {
	f1, f2 := newFakeIndex(path1), newFakeIndex(path2)
	s := testService(t, nil, f1, f2)

	code, body := do(t, s, http.MethodDelete, PathEntryLocationCompact, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "{\n  \""+path1+"\" : false,\n  \""+path2+"\" : false\n}", body)

	code, _ = do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]bool{path1: true, path2: true}, compactionState(t, s))

	code, body = do(t, s, http.MethodDelete, PathEntryLocationCompact+"?entryLocations="+path2, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "{\n  \""+path2+"\" : true\n}", body)
	eventually(t, "path2 stops", func() bool { return !compactionState(t, s)[path2] })
	require.True(t, compactionState(t, s)[path1])

	code, body = do(t, s, http.MethodDelete, PathEntryLocationCompact+"?entryLocations=/invalid/locations", "")
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, jsonString("Specified cancel compact entryLocations: /invalid/locations is invalid. Bookie entry location RocksDB path: ["+path1+", "+path2+"]."), body)
	code, body = do(t, s, http.MethodDelete, PathEntryLocationCompact+"?entryLocations=%zz", "")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "Malformed query string")

	// Repeated and comma-separated parameters both name directories.
	code, body = do(t, s, http.MethodDelete, PathEntryLocationCompact+"?entryLocations="+path2+"&entryLocations="+path1, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "{\n  \""+path2+"\" : false,\n  \""+path1+"\" : true\n}", body)
	eventually(t, "idle", func() bool { return idle(t, s) })

	d := gcDetails(t, s)
	for i := range d {
		require.Equal(t, outcomeCancelled, d[i].LastEntryLocationCompactionOutcome)
		require.Equal(t, int64(1), d[i].EntryLocationCompactionCounter)
		require.False(t, d[i].EntryLocationCompacting)
	}

	// A cancelled directory compacts again on the next trigger.
	code, _ = do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true,"entryLocations":"`+path1+`"}`)
	require.Equal(t, http.StatusOK, code)
	require.True(t, compactionState(t, s)[path1])
	f1.release <- nil
	eventually(t, "idle", func() bool { return idle(t, s) })
	require.Equal(t, outcomeCompleted, gcDetails(t, s)[0].LastEntryLocationCompactionOutcome)
}

// TestCompactionFailure records a failed compaction's error.
func TestCompactionFailure(t *testing.T) {
	f1 := newFakeIndex(path1)
	s := testService(t, nil, f1)
	code, _ := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code)
	f1.release <- errDisk
	eventually(t, "idle", func() bool { return idle(t, s) })
	d := gcDetails(t, s)[0]
	require.Equal(t, outcomeFailed, d.LastEntryLocationCompactionOutcome)
	require.Equal(t, errDisk.Error(), d.LastEntryLocationCompactionError)
}

// TestAuth checks that PUT and DELETE need the bearer token when one is
// configured, and reads do not.
func TestAuth(t *testing.T) {
	f1 := instantIndex(path1)
	s := testService(t, func(o *Options) { o.AuthToken = "s3cret-token" }, f1)
	put := `{"entryLocationRocksDBCompact":true}`
	for _, tc := range []struct {
		name, method string
		header       []string
	}{
		{"PUT without a token", http.MethodPut, nil},
		{"PUT with a wrong token", http.MethodPut, []string{"Authorization", "Bearer s3cret-tokeN"}},
		{"PUT with a prefix of the token", http.MethodPut, []string{"Authorization", "Bearer s3cret"}},
		{"PUT with another scheme", http.MethodPut, []string{"Authorization", "Basic s3cret-token"}},
		{"PUT with the bare token", http.MethodPut, []string{"Authorization", "s3cret-token"}},
		{"DELETE without a token", http.MethodDelete, nil},
	} {
		code, body := do(t, s, tc.method, PathEntryLocationCompact, put, tc.header...)
		require.Equal(t, http.StatusUnauthorized, code, tc.name)
		require.Contains(t, body, "Unauthorized", tc.name)
	}
	require.Zero(t, f1.calls.Load())

	code, _ := do(t, s, http.MethodPut, PathEntryLocationCompact, put, "Authorization", "Bearer s3cret-token")
	require.Equal(t, http.StatusOK, code)
	code, _ = do(t, s, http.MethodDelete, PathEntryLocationCompact, "", "Authorization", "bearer  s3cret-token")
	require.Equal(t, http.StatusOK, code)
	for _, p := range []string{PathEntryLocationCompact, PathGCDetails, PathState, PathHeartbeat, PathMetrics} {
		code, _ = do(t, s, http.MethodGet, p, "")
		require.Equal(t, http.StatusOK, code, p)
	}
	// A wrong method is 405 before the token is looked at.
	code, _ = do(t, s, http.MethodPost, PathEntryLocationCompact, put)
	require.Equal(t, http.StatusMethodNotAllowed, code)
}

// TestBodyLimit checks that oversized bodies get 413, with and without a
// Content-Length, and a body at the limit is read.
func TestBodyLimit(t *testing.T) {
	f1 := instantIndex(path1)
	s := testService(t, func(o *Options) { o.MaxBodyBytes = 1024 }, f1)
	atLimit := `{"entryLocationRocksDBCompact":false,"x":"` + strings.Repeat("a", 1024-44) + `"}`
	require.Len(t, atLimit, 1024)
	code, body := do(t, s, http.MethodPut, PathEntryLocationCompact, atLimit)
	require.Equal(t, http.StatusOK, code, body)

	code, body = do(t, s, http.MethodPut, PathEntryLocationCompact, atLimit+" ")
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Contains(t, body, "too large")

	// Chunked, so that the handler finds out while reading.
	req, rec := newChunkedPut(strings.Repeat(" ", 4096))
	s.ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	require.Zero(t, f1.calls.Load())
}

// TestRelativeAndAbsolutePaths: an index whose path is relative (a
// directory configured relative to the working directory, by an embedder
// that did not make it absolute) is named by its absolute form too, and an
// absolute index by a relative form, both resolved against the working
// directory.
func TestRelativeAndAbsolutePaths(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	rel := filepath.Join("data", "ledgers", "current", "locations")
	f1, f2 := instantIndex(rel), instantIndex(filepath.Join(wd, "other", "current", "locations"))
	s := testService(t, nil, f1, f2)
	for _, name := range []string{filepath.Join(wd, rel), "./" + rel, filepath.Join("other", "current", "locations")} {
		code, body := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true,"entryLocations":"`+name+`"}`)
		require.Equal(t, http.StatusOK, code, "%s: %s", name, body)
		require.Contains(t, body, "Triggered entry Location RocksDB: "+name)
		eventually(t, "idle", func() bool { return idle(t, s) })
	}
	s.Close()
	require.Equal(t, int64(2), f1.calls.Load())
	require.Equal(t, int64(1), f2.calls.Load())
}

// noIndexSpace is an IndexFileSpace that refuses.
type noIndexSpace struct{}

func (noIndexSpace) CanCreateIndexFiles() error {
	return errors.New("the storage is read-only and index directory /d has 5 bytes usable, less than minUsableSizeForIndexFileCreation (100)")
}

// TestCompactionNeedsIndexSpace: a directory that may not create index
// files now (a read-only storage short of minUsableSizeForIndexFileCreation)
// starts no compaction; the other directories do.
func TestCompactionNeedsIndexSpace(t *testing.T) {
	f1, f2 := instantIndex(path1), instantIndex(path2)
	s := testService(t, func(o *Options) { o.Directories[0].IndexFiles = noIndexSpace{} }, f1, f2)
	code, body := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code, body)
	s.Close()
	require.Zero(t, f1.calls.Load())
	require.Equal(t, int64(1), f2.calls.Load())
}

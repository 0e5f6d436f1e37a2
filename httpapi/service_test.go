package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var errDisk = errors.New("disk on fire")

// newChunkedPut returns a PUT of the compaction endpoint whose body has no
// known length.
func newChunkedPut(body string) (*http.Request, *httptest.ResponseRecorder) {
	req := httptest.NewRequest(http.MethodPut, PathEntryLocationCompact, io.MultiReader(strings.NewReader(body)))
	req.ContentLength = -1
	return req, httptest.NewRecorder()
}

func TestNewRejects(t *testing.T) {
	_, err := New(Options{})
	require.ErrorContains(t, err, "no directories")
	_, err = New(Options{Directories: []Directory{{LedgerDir: "a"}}})
	require.ErrorContains(t, err, "no index")
	_, err = New(Options{Directories: []Directory{{LedgerDir: "a", Index: instantIndex("")}}})
	require.ErrorContains(t, err, "empty path")
	_, err = New(Options{Directories: []Directory{
		{LedgerDir: "a", IndexDir: "a", Index: instantIndex("/x")},
		{LedgerDir: "b", IndexDir: "b", Index: instantIndex("/x")},
	}})
	require.ErrorContains(t, err, "listed twice")
	_, err = New(Options{Directories: []Directory{
		{LedgerDir: "a", IndexDir: "a", Index: instantIndex("/x")},
		{LedgerDir: "a", IndexDir: "a", Index: instantIndex("/y")},
	}})
	require.ErrorContains(t, err, "same metric labels")
	_, err = New(Options{MaxBodyBytes: -1, Directories: []Directory{{Index: instantIndex("/x")}}})
	require.ErrorContains(t, err, "negative")
}

func TestSmallEndpoints(t *testing.T) {
	s := testService(t, func(o *Options) {
		o.Settings = map[string]string{"httpServerPort": "8080", "gcWaitTime": "600000"}
	}, instantIndex(path1), instantIndex(path2))

	code, body := do(t, s, http.MethodGet, PathHeartbeat, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "OK\n", body)

	code, body = do(t, s, http.MethodGet, PathState, "")
	require.Equal(t, http.StatusOK, code)
	require.True(t, strings.HasPrefix(body, "{\n  \"running\" : true,\n  \"readOnly\" : false,"), body)
	var state struct {
		Running, ReadOnly bool
		Directories       []struct{ LedgerDir, IndexDir, EntryLocationDBPath string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &state))
	require.True(t, state.Running)
	require.Len(t, state.Directories, 2)
	require.Equal(t, path2, state.Directories[1].EntryLocationDBPath)
	require.Equal(t, "/data2/bookkeeper/ledgers/current", state.Directories[1].LedgerDir)

	code, body = do(t, s, http.MethodGet, PathServerConfig, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "{\n  \"gcWaitTime\" : \"600000\",\n  \"httpServerPort\" : \"8080\"\n}", body)

	d := gcDetails(t, s)
	require.Len(t, d, 2)
	require.Equal(t, gcDetail{
		LedgerDir: "/data1/bookkeeper/ledgers/current", IndexDir: "/data1/bookkeeper/ledgers/current",
		EntryLocationDBPath: path1,
	}, d[0])

	for _, p := range []string{PathState, PathServerConfig, PathGCDetails} {
		code, _ = do(t, s, http.MethodPut, p, "{}")
		require.Equal(t, http.StatusNotFound, code, p)
	}
	code, _ = do(t, s, http.MethodPut, PathHeartbeat, "{}")
	require.Equal(t, http.StatusOK, code)
	code, body = do(t, s, http.MethodPost, PathMetrics, "")
	require.Equal(t, http.StatusForbidden, code)
	require.Equal(t, "POST is forbidden. Should be GET method", body)
	code, _ = do(t, s, http.MethodGet, "/api/v1/bookie/nope", "")
	require.Equal(t, http.StatusNotFound, code)
	code, _ = do(t, s, http.MethodGet, PathHeartbeat+"/", "")
	require.Equal(t, http.StatusNotFound, code)

	// Without Settings there is no server_config endpoint.
	s2 := testService(t, nil, instantIndex(path1))
	code, _ = do(t, s2, http.MethodGet, PathServerConfig, "")
	require.Equal(t, http.StatusNotFound, code)
}

// TestClose checks that Close cancels a running compaction and waits for
// it, and that triggers after Close are skipped.
func TestClose(t *testing.T) {
	f1 := newFakeIndex(path1)
	s := testService(t, nil, f1)
	code, _ := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code)
	eventually(t, "Compact called", func() bool { return f1.IsCompacting() })
	s.Close()
	require.False(t, f1.IsCompacting())
	require.Equal(t, outcomeCancelled, gcDetails(t, s)[0].LastEntryLocationCompactionOutcome)

	code, _ = do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, int64(1), f1.calls.Load())
	code, body := do(t, s, http.MethodGet, PathState, "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"shuttingDown" : true`)
	s.Close() // twice is fine
}

// TestSkipsIndexCompactingElsewhere: a directory whose index compacts on
// behalf of someone else is not compacted again.
func TestSkipsIndexCompactingElsewhere(t *testing.T) {
	f1 := instantIndex(path1)
	f1.compacting.Store(true)
	s := testService(t, nil, f1)
	require.True(t, compactionState(t, s)[path1])
	code, _ := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
	require.Equal(t, http.StatusOK, code)
	s.Close()
	require.Zero(t, f1.calls.Load())
	// Only the Service's own compactions can be cancelled.
	code, body := do(t, s, http.MethodDelete, PathEntryLocationCompact, "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `: false`)
}

func TestJackson(t *testing.T) {
	v := jsonObject{
		{"a", 1},
		{"b", []any{1, "x"}},
		{"c", []any{jsonObject{{"d", true}}, jsonObject{}}},
		{"e", jsonObject{{"f", "<&>/é"}}},
		{"g", []any{}},
	}
	want := "{\n" +
		"  \"a\" : 1,\n" +
		"  \"b\" : [ 1, \"x\" ],\n" +
		"  \"c\" : [ {\n" +
		"    \"d\" : true\n" +
		"  }, { } ],\n" +
		"  \"e\" : {\n" +
		"    \"f\" : \"<&>/é\"\n" +
		"  },\n" +
		"  \"g\" : [ ]\n" +
		"}"
	require.Equal(t, want, string(appendJackson(nil, v, 0)))
	require.Equal(t, "{ }", string(appendJackson(nil, jsonObject{}, 0)))
	require.Equal(t, `"a\"b"`, string(appendJackson(nil, `a"b`, 0)))
	require.Equal(t, "null", string(appendJackson(nil, func() {}, 0)))
}

// TestConcurrentRequests hammers the Service from several goroutines
// (run with -race) and then checks it is consistent and idle.
func TestConcurrentRequests(t *testing.T) {
	f1, f2 := instantIndex(path1), instantIndex(path2)
	s := testService(t, nil, f1, f2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.RunPeriodicCompaction(ctx, 1) // as often as possible
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 150 {
				var code int
				switch rng.IntN(5) {
				case 0:
					code, _ = do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
				case 1:
					code, _ = do(t, s, http.MethodDelete, PathEntryLocationCompact, "")
				case 2:
					code, _ = do(t, s, http.MethodGet, PathEntryLocationCompact, "")
				case 3:
					code, _ = do(t, s, http.MethodGet, PathGCDetails, "")
				case 4:
					code, _ = do(t, s, http.MethodGet, PathMetrics, "")
				}
				if code != http.StatusOK {
					t.Errorf("status %d", code)
					return
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	s.Close()
	d := gcDetails(t, s)
	for i, f := range []*fakeIndex{f1, f2} {
		require.Equal(t, f.calls.Load(), d[i].EntryLocationCompactionCounter, fmt.Sprint("directory ", i))
		require.False(t, d[i].EntryLocationCompacting)
	}
}

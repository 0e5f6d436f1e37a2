package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// readOnlyService is a Service over a real storage on an in-memory disk
// whose used fraction the test sets (a ballast file beside the storage;
// the monitor is off; the test calls CheckDisks).
func readOnlyService(t *testing.T, token string) (*Service, *bookie.Storage, func(used float64)) {
	t.Helper()
	mem := vfs.NewMem()
	mem.SetCapacity(64 << 20)
	fill := func(used float64) {
		require.NoError(t, mem.Remove("/ballast"))
		u, err := mem.DiskUsage("/")
		require.NoError(t, err)
		f, err := mem.Create("/ballast")
		require.NoError(t, err)
		_, err = f.Write(make([]byte, int64(used*float64(u.Total))-int64(u.UsedBytes())))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	f, err := mem.Create("/ballast")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fill(0.5)
	st, err := bookie.Open(&bookie.Options{
		LedgerDirs:        []string{"/d1/ledgers"},
		FlushInterval:     -1,
		GCWaitTime:        -1,
		WriteCacheSize:    8 << 20,
		FS:                mem,
		DiskCheckInterval: -1,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	opts := Options{AuthToken: token, Storage: st}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, st, func(u float64) {
		fill(u)
		st.CheckDisks()
	}
}

func stateReadOnly(t *testing.T, s *Service) bool {
	t.Helper()
	code, body := do(t, s, http.MethodGet, PathState, "")
	require.Equal(t, http.StatusOK, code)
	var st struct{ ReadOnly bool }
	require.NoError(t, json.Unmarshal([]byte(body), &st), body)
	return st.ReadOnly
}

func serverStatus(t *testing.T, s *Service) string {
	t.Helper()
	_, body := do(t, s, http.MethodGet, PathMetrics, "")
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "bookie_SERVER_STATUS ") {
			return strings.TrimPrefix(line, "bookie_SERVER_STATUS ")
		}
	}
	t.Fatalf("no bookie_SERVER_STATUS in /metrics")
	return ""
}

// TestReadOnlyDiskFullHTTP: a full disk shows in state, the gauge and the
// readonly endpoint; writes get 503 with the reason (never 500); reads of
// checkpointed entries go on; the disk below the low-water mark makes it
// writable again.
func TestReadOnlyDiskFullHTTP(t *testing.T) {
	s, st, setUsed := readOnlyService(t, "")
	code, _ := do(t, s, http.MethodPut, entryURL(1, 0), "zero")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, st.Checkpoint())
	require.False(t, stateReadOnly(t, s))
	require.Equal(t, "1", serverStatus(t, s))

	setUsed(0.97)
	require.True(t, stateReadOnly(t, s))
	require.Equal(t, "0", serverStatus(t, s))
	code, body := do(t, s, http.MethodPut, entryURL(1, 1), "one")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "read-only")
	require.Contains(t, body, "diskUsageThreshold")
	code, body = do(t, s, http.MethodGet, entryURL(1, 0), "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "zero", body)
	code, body = do(t, s, http.MethodGet, PathStateReadOnly, "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"readOnly" : true`)
	code, _ = do(t, s, http.MethodPut, PathCheckpoint, "")
	require.Equal(t, http.StatusOK, code, "checkpoints go on")

	setUsed(0.5)
	require.False(t, stateReadOnly(t, s))
	code, _ = do(t, s, http.MethodPut, entryURL(1, 1), "one")
	require.Equal(t, http.StatusOK, code)
}

// TestReadOnlyForcedHTTP: PUT {"readOnly": true} (behind the token)
// forces read-only, which stays through disk checks until PUT false.
func TestReadOnlyForcedHTTP(t *testing.T) {
	const token = "secret"
	s, _, setUsed := readOnlyService(t, token)
	auth := []string{"Authorization", "Bearer " + token}
	code, _ := do(t, s, http.MethodPut, PathStateReadOnly, `{"readOnly": true}`)
	require.Equal(t, http.StatusUnauthorized, code)
	for _, bad := range []string{"", "{}", `{"readOnly": "yes"}`, "true"} {
		code, _ = do(t, s, http.MethodPut, PathStateReadOnly, bad, auth...)
		require.Equal(t, http.StatusBadRequest, code, bad)
	}
	code, body := do(t, s, http.MethodPut, PathStateReadOnly, `{"readOnly": true}`, auth...)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"readOnly" : true`)
	setUsed(0.1)
	require.True(t, stateReadOnly(t, s), "forced read-only stays")
	code, body = do(t, s, http.MethodPut, entryURL(1, 0), "x", auth...)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "forced")

	code, body = do(t, s, http.MethodPut, PathStateReadOnly, `{"readOnly": false}`, auth...)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"readOnly" : false`)
	code, _ = do(t, s, http.MethodPut, entryURL(1, 0), "x", auth...)
	require.Equal(t, http.StatusOK, code)

	// A full disk is not lifted by a PUT of false.
	setUsed(0.99)
	code, body = do(t, s, http.MethodPut, PathStateReadOnly, `{"readOnly": false}`, auth...)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"readOnly" : true`)
	code, _ = do(t, s, http.MethodPost, PathStateReadOnly, "", auth...)
	require.Equal(t, http.StatusNotFound, code)
}

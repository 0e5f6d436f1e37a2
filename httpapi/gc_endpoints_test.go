package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// gcService returns a Service with the GC endpoints over a real storage
// of one directory on an in-memory file system, with small entry logs and
// unthrottled compaction.
func gcService(t *testing.T, token string) (*Service, *bookie.Storage, vfs.FS) {
	t.Helper()
	fs := vfs.NewMem()
	st, err := bookie.Open(&bookie.Options{
		LedgerDirs: []string{"/d1/ledgers"}, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 8 << 20, ReadCacheSize: -1, LogSizeLimit: 16 << 10, FS: fs,
		GC: bookie.GCOptions{CompactionRateByEntries: -1},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	opts := Options{BookieID: "bookie1:3181", AuthToken: token, Storage: st, GC: st}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, st, fs
}

func entryLogBytes(t *testing.T, fs vfs.FS, dir string) int64 {
	t.Helper()
	ids, err := entrylog.ListLogs(fs, dir)
	require.NoError(t, err)
	var n int64
	for _, id := range ids {
		fi, err := fs.Stat(filepath.Join(dir, entrylog.LogFileName(id)))
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

// TestForcedGCReclaimsSpace is the check from outside: logs that
// each hold many ledgers, most ledgers deleted, a forced GC through PUT
// /api/v1/bookie/gc: the entry logs' bytes drop to at most half, every
// live entry reads back byte for byte and the deleted ones are 404.
func TestForcedGCReclaimsSpace(t *testing.T) {
	const token = "secret"
	s, st, fs := gcService(t, token)
	auth := []string{"Authorization", "Bearer " + token}
	payload := func(l, e int64) string { return fmt.Sprintf("ledger %d entry %d %0200d", l, e, l*e) }
	for e := int64(0); e < 20; e++ {
		for l := int64(1); l <= 30; l++ {
			code, body := do(t, s, http.MethodPut, entryURL(l, e), payload(l, e), auth...)
			require.Equal(t, http.StatusOK, code, body)
		}
	}
	code, _ := do(t, s, http.MethodPut, PathCheckpoint, "", auth...)
	require.Equal(t, http.StatusOK, code)
	dir := st.Dirs()[0].LedgerDir()
	before := entryLogBytes(t, fs, dir)
	for l := int64(1); l <= 30; l++ {
		if l%5 != 0 {
			code, _ := do(t, s, http.MethodDelete, fmt.Sprintf("%s?ledgerId=%d", PathLedger, l), "", auth...)
			require.Equal(t, http.StatusOK, code)
		}
	}
	code, _ = do(t, s, http.MethodPut, PathGC, "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body := do(t, s, http.MethodPut, PathGC, "", auth...)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, jsonString("Triggered GC on BookieServer: bookie1:3181"), body)
	eventually(t, "the forced GC", func() bool {
		_, body := do(t, s, http.MethodGet, PathGC, "")
		return body == "{\n  \"is_in_force_gc\" : \"false\"\n}"
	})
	after := entryLogBytes(t, fs, dir)
	t.Logf("entry logs: %d bytes before, %d after", before, after)
	require.LessOrEqual(t, after, before/2)
	for l := int64(1); l <= 30; l++ {
		for e := int64(0); e < 20; e++ {
			code, body := do(t, s, http.MethodGet, entryURL(l, e), "")
			if l%5 != 0 {
				require.Equal(t, http.StatusNotFound, code)
				continue
			}
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, payload(l, e), body)
		}
	}
	var details []map[string]any
	_, body = do(t, s, http.MethodGet, PathGCDetails, "")
	require.NoError(t, json.Unmarshal([]byte(body), &details))
	require.Len(t, details, 1)
	for _, k := range []string{"forceCompacting", "majorCompacting", "minorCompacting", "lastMajorCompactionTime",
		"lastMinorCompactionTime", "majorCompactionCounter", "minorCompactionCounter", "entryLocationCompactionCounter"} {
		require.Contains(t, details[0], k)
	}
	require.Equal(t, 1.0, details[0]["majorCompactionCounter"])
	require.Equal(t, false, details[0]["forceCompacting"])

	_, body = do(t, s, http.MethodGet, PathMetrics, "")
	for _, name := range []string{"bookie_MAJOR_COMPACTION_TOTAL{", "bookie_MINOR_COMPACTION_TOTAL{", "bookie_RECLAIMED_DELETION_SPACE_BYTES{",
		"bookie_RECLAIMED_COMPACTION_SPACE_BYTES{", "bookie_ACTIVE_ENTRY_LOG_TOTAL{", "bookie_ACTIVE_ENTRY_LOG_SPACE_BYTES{", "bookie_THREAD_RUNTIME_count{", "bookie_ACTIVE_LEDGER_TOTAL{", "bookie_DELETED_LEDGER_TOTAL{",
		"bookie_RECLAIM_FAILED_TO_DELETE{", "bookie_ENTRY_LOG_SPACE_BYTES{", "bookie_ENTRY_LOG_COMPACT_RATIO{", "bookie_GC_LEDGER_RUNTIME_count{",
		"bookie_EXTRACT_META_RUNTIME_count{", "bookie_COMPACT_RUNTIME_count{", "bookie_entry_log_usage_buckets_le_10{", "bookie_entry_log_usage_buckets_le_100{"} {
		require.Contains(t, body, name)
	}
	require.Regexp(t, `bookie_MAJOR_COMPACTION_TOTAL\{[^}]*\} 1\n`, body)
	require.Regexp(t, `bookie_ACTIVE_LEDGER_TOTAL\{[^}]*\} 6\n`, body)
	require.Regexp(t, `bookie_DELETED_LEDGER_TOTAL\{[^}]*\} 24\n`, body)
	require.Regexp(t, `bookie_RECLAIMED_COMPACTION_SPACE_BYTES\{[^}]*\} [1-9]`, body)
}

// TestGCEndpointShapes checks the bodies, statuses and messages of the
// GC endpoints against upstream's services.
func TestGCEndpointShapes(t *testing.T) {
	const token = "secret"
	s, st, _ := gcService(t, token)
	auth := []string{"Authorization", "Bearer " + token}

	code, body := do(t, s, http.MethodPost, PathGC, "")
	require.Equal(t, http.StatusMethodNotAllowed, code)
	require.Equal(t, msgGCMethod, body)
	code, body = do(t, s, http.MethodPut, PathGC, "{not json", auth...)
	require.Equal(t, http.StatusBadRequest, code, body)
	code, _ = do(t, s, http.MethodPut, PathGC, `{"forceMajor": false, "forceMinor": "TRUE"}`, auth...)
	require.Equal(t, http.StatusOK, code)

	// Suspend and resume.
	code, body = do(t, s, http.MethodGet, PathSuspendCompaction, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "{\n  \"isMajorGcSuspended\" : \"false\",\n  \"isMinorGcSuspended\" : \"false\"\n}", body)
	code, _ = do(t, s, http.MethodPut, PathSuspendCompaction, `{"suspendMajor": true}`)
	require.Equal(t, http.StatusUnauthorized, code)
	code, body = do(t, s, http.MethodPut, PathSuspendCompaction, "", auth...)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "Empty request body", body)
	code, body = do(t, s, http.MethodPut, PathSuspendCompaction, `{"other": true}`, auth...)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "No suspendMajor or suspendMinor params found", body)
	code, body = do(t, s, http.MethodPut, PathSuspendCompaction, `{"suspendMajor": 3}`, auth...)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "suspendMajor must be a JSON boolean")
	code, body = do(t, s, http.MethodPut, PathSuspendCompaction, `{"suspendMajor": true, "suspendMinor": true}`, auth...)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, jsonString("Suspend majorGC on BookieServer: bookie1:3181, Suspend minorGC on BookieServer: bookie1:3181"), body)
	require.True(t, st.IsMajorGCSuspended())
	require.True(t, st.IsMinorGCSuspended())
	_, body = do(t, s, http.MethodGet, PathSuspendCompaction, "")
	require.Equal(t, "{\n  \"isMajorGcSuspended\" : \"true\",\n  \"isMinorGcSuspended\" : \"true\"\n}", body)
	code, body = do(t, s, http.MethodDelete, PathSuspendCompaction, "", auth...)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, msgSuspendMethod, body)

	code, body = do(t, s, http.MethodPut, PathResumeCompaction, `{"resumeMinor": true}`, auth...)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, jsonString(", Resume minorGC on BookieServer: bookie1:3181"), body)
	require.True(t, st.IsMajorGCSuspended())
	require.False(t, st.IsMinorGCSuspended())
	code, body = do(t, s, http.MethodPut, PathResumeCompaction, `{}`, auth...)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "No resumeMajor or resumeMinor params found", body)
	code, body = do(t, s, http.MethodGet, PathResumeCompaction, "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, msgResumeMethod, body)

	// Without a GarbageCollector the endpoints do not exist, and
	// gc_details has only the entry location fields.
	plain := testService(t, nil, instantIndex("/a/current/locations"))
	code, _ = do(t, plain, http.MethodGet, PathGC, "")
	require.Equal(t, http.StatusNotFound, code)
	_, body = do(t, plain, http.MethodGet, PathGCDetails, "")
	require.NotContains(t, body, "majorCompactionCounter")
}

package httpapi

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBookieInfo checks upstream's info shape: the ledger directories'
// file system counted once, each directory listed, and 404 for other
// methods, as upstream answers.
func TestBookieInfo(t *testing.T) {
	dirs := openIndexes(t, 2, false)
	s, err := New(Options{Directories: dirs})
	require.NoError(t, err)
	defer s.Close()

	code, body := do(t, s, http.MethodGet, PathBookieInfo, "")
	require.Equal(t, http.StatusOK, code, body)
	var info struct {
		FreeSpace, TotalSpace int64
		Directories           []struct {
			LedgerDir, IndexDir                                    string
			FreeSpace, TotalSpace, IndexFreeSpace, IndexTotalSpace int64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &info))
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dirs[0].LedgerDir, &st))
	// Both directories are on the temp dir's file system: counted once.
	require.Equal(t, int64(st.Blocks)*int64(st.Bsize), info.TotalSpace)
	require.Positive(t, info.FreeSpace)
	require.LessOrEqual(t, info.FreeSpace, info.TotalSpace)
	require.Len(t, info.Directories, 2)
	for i, d := range info.Directories {
		require.Equal(t, dirs[i].LedgerDir, d.LedgerDir)
		require.Equal(t, info.TotalSpace, d.TotalSpace)
		require.Equal(t, info.TotalSpace, d.IndexTotalSpace)
	}

	code, body = do(t, s, http.MethodPut, PathBookieInfo, "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "Only GET is supported.", body)
}

// TestStateFields checks that state carries every field of upstream's
// BookieStateService, in its order.
func TestStateFields(t *testing.T) {
	s := testService(t, nil, instantIndex(path1))
	code, body := do(t, s, http.MethodGet, PathState, "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "{\n  \"running\" : true,\n  \"readOnly\" : false,\n  \"shuttingDown\" : false,\n  \"availableForHighPriorityWrites\" : true,")
	s.Close()
	_, body = do(t, s, http.MethodGet, PathState, "")
	require.Contains(t, body, "\"shuttingDown\" : true,\n  \"availableForHighPriorityWrites\" : false,")
}

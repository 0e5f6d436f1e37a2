package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
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
	u, err := vfs.Default.DiskUsage(dirs[0].LedgerDir)
	require.NoError(t, err)
	// Both directories are on the temp dir's file system: counted once.
	require.EqualValues(t, u.Total, info.TotalSpace)
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

// TestBookieInfoMemFS reads the space of the Options' FS: an in-memory
// disk of a set capacity, its ledger and index directories on one file
// system, counted once.
func TestBookieInfoMemFS(t *testing.T) {
	mem := vfs.NewMem()
	mem.SetCapacity(10_000)
	for _, d := range []string{"l1", "i1", "l2", "i2"} {
		require.NoError(t, mem.MkdirAll(d, 0o755))
	}
	f, err := mem.Create("l1/data")
	require.NoError(t, err)
	_, err = f.Write(make([]byte, 2500))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	s := testService(t, func(o *Options) {
		o.FS = mem
		o.Directories = []Directory{
			{LedgerDir: "l1", IndexDir: "i1", Index: instantIndex("l1/locations")},
			{LedgerDir: "l2", IndexDir: "i2", Index: instantIndex("l2/locations")},
		}
	})
	code, body := do(t, s, http.MethodGet, PathBookieInfo, "")
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"freeSpace": 7500, "totalSpace": 10000, "directories": [
		{"ledgerDir": "l1", "indexDir": "i1", "freeSpace": 7500, "totalSpace": 10000, "indexFreeSpace": 7500, "indexTotalSpace": 10000},
		{"ledgerDir": "l2", "indexDir": "i2", "freeSpace": 7500, "totalSpace": 10000, "indexFreeSpace": 7500, "indexTotalSpace": 10000}]}`, body)

	// A directory whose space cannot be read: 500, naming it.
	s = testService(t, func(o *Options) {
		o.FS = vfs.NewErrorFS(mem, vfs.OnOp(vfs.OpDiskUsage, "i2"))
		o.Directories = []Directory{{LedgerDir: "l2", IndexDir: "i2", Index: instantIndex("l2/locations")}}
	})
	code, body = do(t, s, http.MethodGet, PathBookieInfo, "")
	require.Equal(t, http.StatusInternalServerError, code, body)
	require.Contains(t, body, "i2")
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

package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// fullDiskFS reports the disk of the paths under full as 95% used, the
// others as empty.
type fullDiskFS struct {
	vfs.FS
	full atomic.Pointer[string]
}

func (f *fullDiskFS) DiskUsage(path string) (vfs.DiskUsage, error) {
	const total = 1 << 30
	if p := f.full.Load(); p != nil && strings.HasPrefix(path, *p) {
		return vfs.DiskUsage{Total: total, Usable: total / 50}, nil
	}
	return vfs.DiskUsage{Total: total, Usable: total}, nil
}

// TestFullDirectoryHTTP: with readOnlyModeOnAnyDiskFullEnabled=false a
// full directory leaves the storage writable (readOnly false,
// bookie_SERVER_STATUS 1), so the state's directories and
// bookie_ledger_writable_dirs are where it shows.
func TestFullDirectoryHTTP(t *testing.T) {
	fs := &fullDiskFS{FS: vfs.NewMem()}
	st, err := bookie.Open(&bookie.Options{
		LedgerDirs:                   []string{"/d0", "/d1"},
		FlushInterval:                -1,
		GCWaitTime:                   -1,
		FS:                           fs,
		DiskCheckInterval:            -1,
		ReadOnlyOnlyWhenAllDisksFull: true,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	opts := Options{Storage: st}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex(), Space: d})
	}
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)

	type dirState struct {
		LedgerDir  string
		Full       *bool
		FullReason string
	}
	state := func() (readOnly bool, dirs []dirState) {
		code, body := do(t, s, http.MethodGet, PathState, "")
		require.Equal(t, http.StatusOK, code)
		var v struct {
			ReadOnly    bool
			Directories []dirState
		}
		require.NoError(t, json.Unmarshal([]byte(body), &v), body)
		return v.ReadOnly, v.Directories
	}
	gauge := func(name string) string {
		_, body := do(t, s, http.MethodGet, PathMetrics, "")
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, name+" ") {
				return strings.TrimPrefix(line, name+" ")
			}
		}
		t.Fatalf("no %s in /metrics", name)
		return ""
	}

	ro, dirs := state()
	require.False(t, ro)
	require.Len(t, dirs, 2)
	for _, d := range dirs {
		require.NotNil(t, d.Full)
		require.False(t, *d.Full)
		require.Empty(t, d.FullReason)
	}
	require.Equal(t, "2", gauge("bookie_ledger_num_dirs"))
	require.Equal(t, "2", gauge("bookie_ledger_writable_dirs"))

	full := "/d1"
	fs.full.Store(&full)
	st.CheckDisks()
	ro, dirs = state()
	require.False(t, ro, "one full directory of two: writable")
	require.Equal(t, "1", gauge("bookie_SERVER_STATUS"))
	require.False(t, *dirs[0].Full)
	require.True(t, *dirs[1].Full)
	require.Equal(t, "/d1/current is 98.0% used, over diskUsageThreshold 95.0%", dirs[1].FullReason)
	require.Equal(t, "1", gauge("bookie_ledger_writable_dirs"))

	fs.full.Store(nil)
	st.CheckDisks()
	_, dirs = state()
	require.False(t, *dirs[1].Full)
	require.Equal(t, "2", gauge("bookie_ledger_writable_dirs"))
}

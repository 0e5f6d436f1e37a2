package httpapi

import (
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestHealthUnderStickyError: /heartbeat and is_ready answer OK while the
// storage can serve, 503 naming why once an index's engine stopped after a
// failed WAL write (a sticky error), and 503 once the storage is closed.
func TestHealthUnderStickyError(t *testing.T) {
	var armed atomic.Bool
	fs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if armed.Load() && (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync) &&
			strings.Contains(op.Path, "/d1/ledgers/current/locations/") && strings.HasSuffix(op.Path, ".log") {
			return vfs.ErrInjected
		}
		return nil
	}))
	st, err := bookie.Open(&bookie.Options{
		LedgerDirs: []string{"/d1/ledgers", "/d2/ledgers"}, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 8 << 20, ReadCacheSize: 2 << 20, FS: fs,
	})
	require.NoError(t, err)
	opts := Options{Storage: st}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	s, err := New(opts)
	require.NoError(t, err)
	defer s.Close()

	code, body := do(t, s, http.MethodGet, PathHeartbeat, "")
	require.Equal(t, http.StatusOK, code, body)
	code, body = do(t, s, http.MethodGet, PathIsReady, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "OK", body)

	require.NoError(t, st.AddEntry(2, 0, []byte("x"))) // ledger 2: directory /d1
	armed.Store(true)
	require.Error(t, st.Checkpoint())
	code, body = do(t, s, http.MethodGet, PathHeartbeat, "")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "Unavailable: bookie: /d1/ledgers/current: the entry location index")
	require.Contains(t, body, "injected")
	code, body = do(t, s, http.MethodGet, PathIsReady, "")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "Bookie is not ready: ")

	armed.Store(false)
	_ = st.Close()
	code, body = do(t, s, http.MethodGet, PathHeartbeat, "")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	code, _ = do(t, s, http.MethodPost, PathIsReady, "")
	require.Equal(t, http.StatusNotFound, code)
}

// TestHealthDiskFull: a full disk the engine is retrying is not a failure
// to serve: heartbeat stays OK (the read-only mode reports it instead).
func TestHealthDiskFull(t *testing.T) {
	var full atomic.Bool
	fs := vfs.NewErrorFS(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op) error {
		if full.Load() && (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync || op.Kind == vfs.OpCreate) &&
			strings.Contains(op.Path, "/d1/ledgers/current/locations/") {
			return syscall.ENOSPC
		}
		return nil
	}))
	st, err := bookie.Open(&bookie.Options{
		LedgerDirs: []string{"/d1/ledgers"}, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 8 << 20, ReadCacheSize: 2 << 20, FS: fs,
	})
	require.NoError(t, err)
	defer st.Close()
	d := st.Dirs()[0]
	s, err := New(Options{Storage: st, Directories: []Directory{{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()}}})
	require.NoError(t, err)
	defer s.Close()

	require.NoError(t, st.AddEntry(2, 0, []byte("x")))
	full.Store(true)
	require.Error(t, st.Checkpoint())
	require.ErrorIs(t, d.IndexError(), lsm.ErrNoSpace)
	code, body := do(t, s, http.MethodGet, PathHeartbeat, "")
	require.Equal(t, http.StatusOK, code, body)
	full.Store(false)
}

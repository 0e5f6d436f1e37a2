package httpapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/journaled"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// journaledService is a Service over a storage behind two journals on mem.
func journaledService(t *testing.T, mem *vfs.MemFS) (*Service, *journaled.Storage) {
	t.Helper()
	js, err := journaled.Open(journaled.Options{
		Storage: &bookie.Options{LedgerDirs: []string{"/l1", "/l2"}, FlushInterval: -1, GCWaitTime: -1,
			WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20, FS: mem},
		Journal: journal.Options{JournalDirectories: []string{"/j1", "/j2"}, FlushWhenQueueEmpty: true},
	})
	require.NoError(t, err)
	opts := Options{Storage: js, GC: js, Journals: js.Journals()}
	for _, d := range js.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	s, err := New(opts)
	require.NoError(t, err)
	return s, js
}

// TestLastLogMark: the endpoint answers every journal's recorded mark in
// upstream's shape, moves with checkpoints, and answers another method
// with upstream's 404.
func TestLastLogMark(t *testing.T) {
	s, js := journaledService(t, vfs.NewMem())
	defer func() { s.Close(); require.NoError(t, js.Close()) }()
	answer := func() string {
		var want string
		for i, m := range js.Journals().LastLogMarks() {
			if i > 0 {
				want += ",\n"
			}
			want += fmt.Sprintf(`  "LastLogMark: Journal Id - %d(%x.txn)" : "Pos - %d"`, m.FileID, m.FileID, m.Offset)
		}
		return "{\n" + want + "\n}"
	}
	code, body := do(t, s, http.MethodGet, PathLastLogMark, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, answer(), body)
	before := js.Journals().LastLogMarks()
	require.Len(t, before, 2)
	require.Equal(t, int64(512), before[0].Offset, "the open's checkpoint: the start of the new file")

	for e := range 5 {
		code, body := do(t, s, http.MethodPut, entryURL(1, int64(e)), "payload")
		require.Equal(t, http.StatusOK, code, body)
	}
	code, _ = do(t, s, http.MethodPut, PathCheckpoint, "")
	require.Equal(t, http.StatusOK, code)
	after := js.Journals().LastLogMarks()
	require.Equal(t, before[0], after[0], "journal 0 took nothing")
	require.True(t, before[1].Less(after[1]), "%s -> %s", before[1], after[1])
	code, body = do(t, s, http.MethodGet, PathLastLogMark, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, answer(), body)

	code, body = do(t, s, http.MethodPost, PathLastLogMark, "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "Not found method. Should be GET method", body)
}

// TestPutAcknowledgedIsDurable: every PUT answered 200 reads back after
// a power loss that drops whatever was not synced, with no checkpoint.
func TestPutAcknowledgedIsDurable(t *testing.T) {
	mem := vfs.NewMem()
	s, js := journaledService(t, mem)
	for l := int64(0); l < 4; l++ {
		for e := int64(0); e < 25; e++ {
			code, body := do(t, s, http.MethodPut, entryURL(l, e), fmt.Sprintf("entry %d/%d", l, e))
			require.Equal(t, http.StatusOK, code, body)
		}
	}
	crashed := mem.CrashClone(vfs.CrashOptions{})
	s.Close()
	require.NoError(t, js.Close())

	s, js = journaledService(t, crashed)
	defer func() { s.Close(); require.NoError(t, js.Close()) }()
	require.Equal(t, int64(100), js.Replayed().EntriesAdded)
	for l := int64(0); l < 4; l++ {
		for e := int64(0); e < 25; e++ {
			code, body := do(t, s, http.MethodGet, entryURL(l, e), "")
			require.Equal(t, http.StatusOK, code, body)
			require.Equal(t, fmt.Sprintf("entry %d/%d", l, e), body)
		}
	}
}

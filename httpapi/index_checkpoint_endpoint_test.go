package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestIndexCheckpointEndpoint: the index checkpoint is a mutation behind
// the token, takes an absolute directory, and writes indexes that, with
// the entry logs, restore a storage reading every entry written before it.
func TestIndexCheckpointEndpoint(t *testing.T) {
	fs := vfs.NewMem()
	ledgerDirs := []string{"/d1/ledgers", "/d2/ledgers"}
	st, err := bookie.Open(&bookie.Options{LedgerDirs: ledgerDirs, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 8 << 20, ReadCacheSize: 2 << 20, FS: fs})
	require.NoError(t, err)
	const token = "secret"
	auth := []string{"Authorization", "Bearer " + token}
	opts := Options{BookieID: "bookie1:3181", AuthToken: token, Storage: st}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	s, err := New(opts)
	require.NoError(t, err)
	for l := int64(0); l < 6; l++ {
		for e := int64(0); e < 20; e++ {
			require.NoError(t, st.AddEntry(l, e, []byte(fmt.Sprintf("entry %d of %d", e, l))))
		}
	}

	url := PathIndexCheckpoint + "?dir=/backup"
	code, _ := do(t, s, http.MethodPut, url, "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = do(t, s, http.MethodGet, url, "", auth...)
	require.Equal(t, http.StatusNotFound, code)
	code, body := do(t, s, http.MethodPut, PathIndexCheckpoint+"?dir=backup", "", auth...)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "absolute path")

	code, body = do(t, s, http.MethodPost, url, "", auth...)
	require.Equal(t, http.StatusOK, code, body)
	var res struct {
		Checkpoint  string `json:"checkpoint"`
		Directories []struct {
			Checkpoint      string `json:"checkpoint"`
			LocationsTables int    `json:"locationsTables"`
		} `json:"directories"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &res))
	require.Equal(t, "done", res.Checkpoint)
	require.Len(t, res.Directories, 2)
	require.Equal(t, "/backup/0/current", res.Directories[0].Checkpoint)
	require.Greater(t, res.Directories[0].LocationsTables, 0)
	code, body = do(t, s, http.MethodPut, url, "", auth...)
	require.Equal(t, http.StatusInternalServerError, code)
	require.Contains(t, body, "exists (a checkpoint goes into a new directory)")

	// Written after the checkpoint: not in it.
	require.NoError(t, st.AddEntry(1, 20, []byte("late")))
	s.Close()
	require.NoError(t, st.Close())

	// Restore: the entry logs with the checkpointed indexes.
	r, err := bookie.Open(&bookie.Options{LedgerDirs: ledgerDirs, IndexDirs: []string{"/backup/0", "/backup/1"},
		FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 8 << 20, ReadCacheSize: 2 << 20, FS: fs})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	for l := int64(0); l < 6; l++ {
		for e := int64(0); e < 20; e++ {
			got, err := r.GetEntry(l, e)
			require.NoError(t, err, "ledger %d entry %d", l, e)
			require.Equal(t, fmt.Sprintf("entry %d of %d", e, l), string(got))
		}
	}
	_, err = r.GetEntry(1, 20)
	require.Error(t, err)
}

package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
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
	opts := Options{BookieID: "bookie1:3181", AuthToken: token, Storage: st, FS: fs}
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
	require.Equal(t, http.StatusConflict, code)
	require.Contains(t, body, "/backup/0/current/locations exists")

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

// checkpointService returns a Service over a storage of the ledger
// directories on fs, with tweak's options.
func checkpointService(t *testing.T, fs vfs.FS, ledgerDirs []string, tweak func(*Options)) *Service {
	t.Helper()
	st, err := bookie.Open(&bookie.Options{LedgerDirs: ledgerDirs, FlushInterval: -1, GCWaitTime: -1,
		WriteCacheSize: 8 << 20, ReadCacheSize: 2 << 20, FS: fs})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	opts := Options{Storage: st}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	if tweak != nil {
		tweak(&opts)
	}
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	require.NoError(t, st.AddEntry(1, 0, []byte("x")))
	return s
}

// TestIndexCheckpointTargetRules: index_checkpoint takes a clean
// absolute directory outside the data directories (and under the backup
// root when there is one); the rest gets 400 naming the rule, an existing
// checkpoint 409, never 500.
func TestIndexCheckpointTargetRules(t *testing.T) {
	fs := vfs.NewMem()
	s := checkpointService(t, fs, []string{"/d1/ledgers", "/d2/ledgers"}, func(o *Options) {
		o.FS = fs
		o.DataDirs = append(defaultDataDirs(o.Directories), DataDir{Kind: "journal directory", Path: "/journal"})
	})
	f, err := fs.Create("/afile")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, fs.MkdirAll("/d1/ledgers/current/locations/sub", 0o755))

	put := func(query string) (int, string) {
		t.Helper()
		return do(t, s, http.MethodPut, PathIndexCheckpoint+query, "")
	}
	long := "/" + strings.Repeat("a", 256)
	deep := strings.Repeat("/"+strings.Repeat("b", 200), 21)
	// Its checkpoint's directories (/1/current/locations.tmp) fit in
	// PATH_MAX, the files in them (MANIFEST-<20 digits>) do not.
	deepFiles := strings.Repeat("/"+strings.Repeat("c", 200), 20) + "/" + strings.Repeat("d", 29)
	require.Less(t, len(deepFiles+"/1/current/locations.tmp"), 4096)
	for _, c := range []struct{ query, want string }{
		{"", "Missing query parameter dir"},
		{"?dir=", "Missing query parameter dir"},
		{"?dir=backup", "must be an absolute path"},
		{"?dir=/backup%00x", "NUL byte"},
		{"?dir=/backup/../d1/ledgers", `".." component`},
		{"?dir=/backup/..", `".." component`},
		{"?dir=" + long, "a component of 256 bytes"},
		{"?dir=" + deep, "too long"},
		{"?dir=" + deepFiles, "too long"},
		{"?dir=/backup%0Ax", "control character"},
		{"?dir=/backup/%1B%5B31m", "control character"},
		{"?dir=/backup%7F", "control character"},
		{"?dir=/d1/ledgers", "inside ledger directory /d1/ledgers"},
		{"?dir=/d1/ledgers/current", "inside ledger directory /d1/ledgers"},
		{"?dir=/d2/ledgers/current/locations/x", "inside ledger directory /d2/ledgers"},
		{"?dir=/journal/x", "inside journal directory /journal"},
		{"?dir=/d1/ledgers/current/locations/sub", "inside ledger directory"},
		{"?dir=/afile", "/afile is not a directory"},
		{"?dir=/afile/x", "cannot be resolved"},
		{"?dir=/a&dir=/b", "Query parameter dir is given 2 times"},
		{"?dir=/a%zz", "Malformed query string"},
		{"?dir=/a;b", "Malformed query string"},
	} {
		code, body := put(c.query)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", c.query, body)
		require.Contains(t, body, c.want, c.query)
	}

	// The data directories' parents and neighbours are fine; a second
	// checkpoint into the same place is a conflict, whatever the
	// spelling.
	for _, dir := range []string{"/d1", "/backup/", "/backup2//x/./y"} {
		code, body := put("?dir=" + dir)
		require.Equal(t, http.StatusOK, code, "%s: %s", dir, body)
	}
	code, body := put("?dir=/backup")
	require.Equal(t, http.StatusConflict, code, body)
	code, body = put("?dir=/backup2/x/y/")
	require.Equal(t, http.StatusConflict, code, body)

	// A checkpoint whose directory i would be a data directory.
	fs2 := vfs.NewMem()
	s2 := checkpointService(t, fs2, []string{"/x/0", "/x/1"}, func(o *Options) { o.FS = fs2 })
	code, body = do(t, s2, http.MethodPut, PathIndexCheckpoint+"?dir=/x", "")
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "the checkpoint of directory 0 would go into /x/0/current, which overlaps ledger directory /x/0")

	// Under a backup root only.
	fs3 := vfs.NewMem()
	s3 := checkpointService(t, fs3, []string{"/data/ledgers"}, func(o *Options) {
		o.FS = fs3
		o.BackupRoot = "/backups"
	})
	code, body = do(t, s3, http.MethodPut, PathIndexCheckpoint+"?dir=/elsewhere", "")
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "is not under the backup root /backups (indexCheckpointRootDirectory)")
	code, body = do(t, s3, http.MethodPut, PathIndexCheckpoint+"?dir=/backups/2026-12-02", "")
	require.Equal(t, http.StatusOK, code, body)
	code, body = do(t, s3, http.MethodPut, PathIndexCheckpoint+"?dir=/backups", "")
	require.Equal(t, http.StatusOK, code, body)
}

// TestIndexCheckpointTargetRulesOS: on the operating system's file system
// symbolic links are resolved before the rules apply, and the kernel's
// file systems are refused.
func TestIndexCheckpointTargetRulesOS(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	data := filepath.Join(tmp, "data", "ledgers")
	s := checkpointService(t, vfs.Default, []string{data}, nil)
	require.NoError(t, os.Symlink(data, filepath.Join(tmp, "link")))
	require.NoError(t, os.Symlink("/proc", filepath.Join(tmp, "proc")))
	require.NoError(t, os.Symlink(filepath.Join(tmp, "nowhere"), filepath.Join(tmp, "dangling")))
	require.NoError(t, os.Symlink(filepath.Join(tmp, "loop"), filepath.Join(tmp, "loop")))
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "file"), nil, 0o644))
	put := func(dir string) (int, string) {
		t.Helper()
		return do(t, s, http.MethodPut, PathIndexCheckpoint+"?dir="+url.QueryEscape(dir), "")
	}
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(tmp, "link", "x"), "inside ledger directory " + data},
		{filepath.Join(tmp, "link"), "inside ledger directory " + data},
		{"/proc/self", "under /proc, a kernel file system"},
		{"/dev/null", "under /dev, a kernel file system"},
		{"/sys/x", "under /sys, a kernel file system"},
		{filepath.Join(tmp, "proc", "self"), "resolves to /proc/"},
		{filepath.Join(tmp, "dangling", "x"), "cannot be resolved"},
		{filepath.Join(tmp, "loop", "x"), "cannot be resolved"},
		{filepath.Join(tmp, "file"), "is not a directory"},
	} {
		code, body := put(c.dir)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", c.dir, body)
		require.Contains(t, body, c.want, c.dir)
	}
	code, body := put(filepath.Join(tmp, "backup"))
	require.Equal(t, http.StatusOK, code, body)
	code, body = put(filepath.Join(tmp, "backup"))
	require.Equal(t, http.StatusConflict, code, body)

	if os.Geteuid() != 0 {
		locked := filepath.Join(tmp, "locked")
		require.NoError(t, os.Mkdir(locked, 0o500))
		code, body = put(filepath.Join(locked, "x"))
		require.Equal(t, http.StatusBadRequest, code, body)
		require.Contains(t, body, "permission denied")
	}
}

// checkpointErrStorage fails CheckpointIndexes with err.
type checkpointErrStorage struct {
	errStorage
	cpErr error
}

func (c checkpointErrStorage) CheckpointIndexes(string) ([]bookie.IndexCheckpoint, error) {
	return nil, c.cpErr
}

// TestIndexCheckpointErrors: a checkpoint the target directory makes
// impossible is the client's error; only a fault of the server is 500.
func TestIndexCheckpointErrors(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
	}{
		{&os.PathError{Op: "mkdir", Path: "/b", Err: syscall.EEXIST}, http.StatusConflict},
		{&os.PathError{Op: "mkdir", Path: "/b", Err: syscall.EACCES}, http.StatusBadRequest},
		{&os.PathError{Op: "mkdir", Path: "/b", Err: syscall.EROFS}, http.StatusBadRequest},
		{&os.PathError{Op: "mkdir", Path: "/b", Err: syscall.ENOTDIR}, http.StatusBadRequest},
		{&os.PathError{Op: "mkdir", Path: "/b", Err: syscall.ENAMETOOLONG}, http.StatusBadRequest},
		{&os.PathError{Op: "write", Path: "/b", Err: syscall.ENOSPC}, http.StatusInsufficientStorage},
		{errors.Wrap(bookie.ErrClosed, "closing"), http.StatusServiceUnavailable},
		{errors.Wrap(bookie.ErrReadOnly, "read-only"), http.StatusServiceUnavailable},
		{&os.PathError{Op: "write", Path: "/b", Err: syscall.EIO}, http.StatusInternalServerError},
	} {
		s := testService(t, func(o *Options) {
			o.Storage = checkpointErrStorage{cpErr: c.err}
			o.FS = vfs.NewMem()
		}, instantIndex(path1))
		code, body := do(t, s, http.MethodPut, PathIndexCheckpoint+"?dir=/b", "")
		require.Equal(t, c.status, code, "%v: %s", c.err, body)
	}
}

package journal

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// syncLogFS wraps an FS so that the journal files it creates log, for
// each Sync and Datasync, the file's length on disk then and at its last
// Sync, checked by TestPreallocation.
type syncLogFS struct {
	vfs.FS
	mu    sync.Mutex
	syncs []syncLogged
}

type syncLogged struct {
	path                 string
	full                 bool
	size, lastFullSynced int64
}

func (fs *syncLogFS) CreateExclusive(name string) (vfs.File, error) {
	f, err := fs.FS.CreateExclusive(name)
	if err != nil || filepath.Ext(name) != ".txn" {
		return f, err
	}
	return &syncLogFile{File: f, fs: fs, path: name}, nil
}

type syncLogFile struct {
	vfs.File
	fs         *syncLogFS
	path       string
	fullSynced int64
}

func (f *syncLogFile) log(full bool) {
	size, err := f.Size()
	if err != nil {
		panic(err)
	}
	f.fs.mu.Lock()
	f.fs.syncs = append(f.fs.syncs, syncLogged{f.path, full, size, f.fullSynced})
	f.fs.mu.Unlock()
	if full {
		f.fullSynced = size
	}
}

func (f *syncLogFile) Sync() error {
	err := f.File.Sync()
	f.log(true)
	return err
}

func (f *syncLogFile) Datasync() error {
	err := f.File.Datasync()
	f.log(false)
	return err
}

// TestPreallocation writes adds of assorted sizes (some larger than a
// pre-allocation chunk) through a journal that pre-allocates 4 KiB at a
// time and rolls past 10 KiB: every journal file's length on disk is a
// multiple of the chunk and holds its records and then zeros; a sync
// that covers a grown file is a full Sync and every other one a Datasync
// (which never covers a growth); and a reopen replays every add with no
// torn tail reported (the zeros are the end of the journal, not damage).
func TestPreallocation(t *testing.T) {
	mem := vfs.NewMem()
	fs := &syncLogFS{FS: mem}
	opts := testOptions(fs)
	opts.MaxFileSize = 10 << 10
	s, _ := openCollect(t, opts)
	var want []string
	for e := range int64(120) {
		n := 10 + int(e%7)*150
		if e%40 == 39 {
			n = 9000 // more than two chunks in one record
		}
		p := strings.Repeat(fmt.Sprint(e%10), n)
		require.NoError(t, s.Add(1, e, []byte(p)).Wait())
		want = append(want, p)
	}
	st := s.Journals()[0].Stats()
	require.NoError(t, s.Close())

	require.Greater(t, st.Preallocations, int64(5))
	require.Greater(t, st.FullSyncs, int64(0))
	require.Greater(t, st.Syncs-st.FullSyncs, st.FullSyncs, "most syncs are fdatasyncs")
	datasyncs := 0
	for _, l := range fs.syncs {
		if !l.full {
			datasyncs++
			require.Equal(t, l.lastFullSynced, l.size, "a Datasync of %s covers a growth", l.path)
		}
	}
	require.Greater(t, datasyncs, 0)

	ids, err := ListFiles(mem, "j")
	require.NoError(t, err)
	require.Greater(t, len(ids), 3, "the journal rolled")
	for _, id := range ids {
		path := filepath.Join("j/current", FileName(id))
		data := readFile(t, mem, path)
		require.Zero(t, len(data)%int(opts.PreAllocSize), "%s is %d bytes", path, len(data))
		synced, ok, err := readSyncedFile(mem, filepath.Join("j/current", SyncedFileName(id)))
		require.NoError(t, err)
		require.True(t, ok)
		require.Less(t, synced, int64(len(data))+1)
		require.Equal(t, make([]byte, len(data)-int(synced)), data[synced:], "%s: zeros after its records", path)
	}

	s, got := openCollect(t, opts)
	for _, j := range s.Journals() {
		require.Empty(t, j.Replayed().TornTails)
	}
	require.NoError(t, s.Close())
	var payloads []string
	for _, r := range got {
		if r.Kind == KindEntry {
			payloads = append(payloads, r.Payload)
		}
	}
	require.Equal(t, want, payloads)
}

// TestPreallocationNoSpace: a disk that fills while the journal
// pre-allocates fails the add that needed the room, and every later one,
// with an error that matches ErrNoSpace and ENOSPC and says it was
// pre-allocating which file; OnFailure is called; nothing acknowledged is
// lost: a power-loss image replays every add that completed.
func TestPreallocationNoSpace(t *testing.T) {
	mem := vfs.NewMem()
	var failures int
	opts := testOptions(mem)
	opts.OnFailure = func(string, error) { failures++ }
	s, _ := openCollect(t, opts)
	var done []string
	var err error
	for e := int64(0); ; e++ {
		if e == 10 {
			// Room for the records being written into the chunk, not for
			// the next chunk.
			u, uerr := mem.DiskUsage("j")
			require.NoError(t, uerr)
			mem.SetCapacity(int64(u.Total-u.Usable) + 1000)
		}
		p := strings.Repeat("x", 200)
		if err = s.Add(1, e, []byte(p)).Wait(); err != nil {
			require.Greater(t, e, int64(10))
			break
		}
		done = append(done, p)
	}
	require.ErrorIs(t, err, ErrNoSpace)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorContains(t, err, "journal: pre-allocating j/current/")
	require.Equal(t, 1, failures)
	require.ErrorIs(t, s.Add(1, 1000, []byte("later")).Wait(), ErrNoSpace)
	require.ErrorIs(t, s.Close(), ErrNoSpace)

	img := mem.CrashClone(vfs.CrashOptions{})
	img.SetCapacity(0)
	s, got := openCollect(t, testOptions(img))
	require.NoError(t, s.Close())
	require.Len(t, got, len(done), "every acknowledged add replays")
	for i, r := range got {
		require.Equal(t, done[i], r.Payload)
	}
}

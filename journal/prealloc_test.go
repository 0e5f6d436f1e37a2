package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// syncLogFS wraps an FS so that the journal files it creates log, for
// each Sync and Datasync, the end of the records (the non-zero bytes)
// written to the file so far and the file's length on disk at its last
// completed Sync, checked by TestPreallocation. Hooks, when set, fail a
// write or a sync of a journal file (the pre-allocator's, in the tests of
// its failures).
type syncLogFS struct {
	vfs.FS
	mu    sync.Mutex
	syncs []syncLogged
	// writeHook and syncHook, if set, are called before each WriteAt and
	// each Sync or Datasync of a journal file; an error fails it.
	writeHook func(path string, p []byte, off int64) error
	syncHook  func(path string, full bool) error
}

type syncLogged struct {
	path                       string
	full                       bool
	recordsEnd, lastFullSynced int64
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
	recordsEnd int64 // guarded by fs.mu
	fullSynced int64 // guarded by fs.mu
}

func (f *syncLogFile) WriteAt(p []byte, off int64) (int, error) {
	if h := f.fs.writeHook; h != nil {
		if err := h(f.path, p, off); err != nil {
			return 0, err
		}
	}
	if slices.ContainsFunc(p, func(b byte) bool { return b != 0 }) {
		f.fs.mu.Lock()
		f.recordsEnd = max(f.recordsEnd, off+int64(len(p)))
		f.fs.mu.Unlock()
	}
	return f.File.WriteAt(p, off)
}

func (f *syncLogFile) sync(full bool, sync func() error) error {
	if h := f.fs.syncHook; h != nil {
		if err := h(f.path, full); err != nil {
			return err
		}
	}
	f.fs.mu.Lock()
	end := f.recordsEnd
	f.fs.mu.Unlock()
	size, err := f.Size()
	if err != nil {
		panic(err)
	}
	if err := sync(); err != nil {
		return err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.syncs = append(f.fs.syncs, syncLogged{f.path, full, end, f.fullSynced})
	if full {
		f.fullSynced = max(f.fullSynced, size)
	}
	return nil
}

func (f *syncLogFile) Sync() error     { return f.sync(true, f.File.Sync) }
func (f *syncLogFile) Datasync() error { return f.sync(false, f.File.Datasync) }

// TestPreallocation writes adds of assorted sizes (some larger than a
// pre-allocation chunk) through a journal that pre-allocates 4 KiB at a
// time and rolls past 10 KiB: every journal file's length on disk is a
// multiple of the chunk and holds its records and then zeros; the
// pre-allocator wrote zeros ahead; every Datasync covers only records
// written inside zeros an earlier full Sync made durable (the adds wait
// one by one, so the records written when a Datasync runs are the ones it
// covers); and a reopen replays every add with no torn tail reported (the
// zeros are the end of the journal, not damage).
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
		// On MemFS the writer outruns the pre-allocator, which a
		// disk's fsync does not let it do.
		waitAheadIdle(t, s.Journals()[0])
	}
	st := s.Journals()[0].Stats()
	require.NoError(t, s.Close())

	require.Greater(t, st.PreallocatedAhead, int64(5))
	require.Greater(t, st.FilesAhead, int64(2), "the rolls found their files created ahead")
	require.Greater(t, st.Preallocations, int64(0), "the records larger than a chunk outrun the pre-allocator")
	require.Greater(t, st.FullSyncs, int64(0))
	require.Greater(t, st.Syncs-st.FullSyncs, st.FullSyncs, "most syncs are fdatasyncs")
	datasyncs := 0
	for _, l := range fs.syncs {
		if !l.full {
			datasyncs++
			require.LessOrEqual(t, l.recordsEnd, l.lastFullSynced, "a Datasync of %s covers records past the zeros made durable", l.path)
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
// pre-allocates fails an add, and every later one, with an error that
// matches ErrNoSpace and ENOSPC and names the journal file (pre-allocating
// it, or appending its synced length once the pre-allocator's step took
// the last bytes); OnFailure is called; nothing acknowledged is lost: a
// power-loss image replays every add that completed.
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
			// The next chunk is pre-allocated ahead; then room for a
			// part of the one after it.
			waitAheadIdle(t, s.Journals()[0])
			u, uerr := mem.DiskUsage("j")
			require.NoError(t, uerr)
			mem.SetCapacity(int64(u.Total-u.Usable) + 1000)
		}
		p := strings.Repeat("x", 200)
		if err = s.Add(1, e, []byte(p)).Wait(); err != nil {
			require.Greater(t, e, int64(10), "%v", err)
			break
		}
		done = append(done, p)
	}
	require.ErrorIs(t, err, ErrNoSpace)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorContains(t, err, "j/current/")
	require.Equal(t, 1, failures)
	require.ErrorIs(t, s.Add(1, 1000, []byte("later")).Wait(), ErrNoSpace)
	require.ErrorIs(t, s.Close(), ErrNoSpace)

	img := mem.CrashClone(vfs.CrashOptions{})
	img.SetCapacity(0)
	s, got := openCollect(t, testOptions(img))
	require.NoError(t, s.Close())
	// Every acknowledged add replays, and the one that failed may too
	// (its fsync may have completed before the synced length failed).
	require.GreaterOrEqual(t, len(got), len(done), "every acknowledged add replays")
	require.LessOrEqual(t, len(got), len(done)+1)
	for i := range done {
		require.Equal(t, done[i], got[i].Payload)
	}
}

// waitAheadIdle waits until the pre-allocator has made durable the zeros
// the writer wants ahead in the file being written, and has created the
// next file if the writer is within a chunk of rolling (or cannot).
func waitAheadIdle(t *testing.T, j *Journal) {
	t.Helper()
	waitFor(t, func() bool {
		if j.Err() != nil {
			return true
		}
		jf := j.preallocFile.Load()
		a := &jf.alloc
		a.Lock()
		idle := a.stopped || a.closed || a.durable >= a.want
		near := a.want > j.opts.MaxFileSize
		a.Unlock()
		if !idle || !near {
			return idle
		}
		j.nextMu.Lock()
		defer j.nextMu.Unlock()
		return j.nextFile != nil || j.nextFailed == jf.id+1 || j.preallocFile.Load() != jf
	})
}

// waitFor polls cond for up to 10 s (the pre-allocator runs on its own).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i, deadline := 0, time.Now().Add(10*time.Second); time.Now().Before(deadline); i++ {
		if cond() {
			return
		}
		if i < 1000 {
			runtime.Gosched()
		} else {
			time.Sleep(100 * time.Microsecond)
		}
	}
	t.Fatal("timed out")
}

// TestPreallocateAheadWriteFails: a write of the pre-allocator that fails
// (ENOSPC, EIO) costs no add: the pre-allocator stops for that file, the
// writer pre-allocates its later chunks itself (each batch that does is
// synced with a full fsync), the next file is pre-allocated ahead again,
// and every add replays.
func TestPreallocateAheadWriteFails(t *testing.T) {
	for _, cause := range []error{syscall.ENOSPC, syscall.EIO} {
		t.Run(cause.Error(), func(t *testing.T) {
			mem := vfs.NewMem()
			fs := &syncLogFS{FS: mem}
			var failed atomic.Bool
			fs.writeHook = func(path string, p []byte, off int64) error {
				// Only the pre-allocator writes at the second chunk
				// while the records fill the first.
				if off == 4<<10 && failed.CompareAndSwap(false, true) {
					return &os.PathError{Op: "write", Path: path, Err: cause}
				}
				return nil
			}
			opts := testOptions(fs)
			opts.MaxFileSize = 14 << 10
			var failures int
			opts.OnFailure = func(string, error) { failures++ }
			s, _ := openCollect(t, opts)
			require.NoError(t, s.Add(1, 0, []byte("first")).Wait())
			waitFor(t, func() bool { return s.Journals()[0].Stats().PreallocAheadFailures == 1 })
			var want []string
			want = append(want, "first")
			for e := int64(1); e < 120; e++ {
				p := strings.Repeat(fmt.Sprint(e%10), 200)
				require.NoError(t, s.Add(1, e, []byte(p)).Wait())
				want = append(want, p)
				waitAheadIdle(t, s.Journals()[0])
			}
			st := s.Journals()[0].Stats()
			require.NoError(t, s.Close())
			require.Zero(t, failures)
			require.Equal(t, int64(1), st.PreallocAheadFailures)
			require.GreaterOrEqual(t, st.Preallocations, int64(2), "the writer pre-allocated the first file's chunks")
			require.GreaterOrEqual(t, st.FullSyncs, st.Preallocations)
			require.Greater(t, st.PreallocatedAhead, int64(0), "the pre-allocator resumed with the next file")

			s, got := openCollect(t, testOptions(mem.CrashClone(vfs.CrashOptions{})))
			require.NoError(t, s.Close())
			var payloads []string
			for _, r := range got {
				payloads = append(payloads, r.Payload)
			}
			require.Equal(t, want, payloads)
		})
	}
}

// TestPreallocateAheadSyncFails: a failed sync of the pre-allocator stops
// the journal as a failed sync of records does (the kernel may have
// dropped the file's dirty pages, records among them, and a later fsync
// could succeed): the error names the file and matches the cause,
// OnFailure is called once, later adds fail, and every acknowledged add
// replays.
func TestPreallocateAheadSyncFails(t *testing.T) {
	mem := vfs.NewMem()
	fs := &syncLogFS{FS: mem}
	var armed, failed atomic.Bool
	fs.syncHook = func(path string, full bool) error {
		// With the zeros ahead durable, the records' syncs are
		// Datasyncs: the full Sync is the pre-allocator's.
		if full && armed.Load() && failed.CompareAndSwap(false, true) {
			return &os.PathError{Op: "sync", Path: path, Err: syscall.EIO}
		}
		return nil
	}
	opts := testOptions(fs)
	var failures atomic.Int32
	opts.OnFailure = func(string, error) { failures.Add(1) }
	s, _ := openCollect(t, opts)
	j := s.Journals()[0]
	require.NoError(t, s.Add(1, 0, []byte("first")).Wait())
	waitAheadIdle(t, j)
	armed.Store(true)
	done := []string{"first"}
	var err error
	for e := int64(1); e < 100; e++ {
		p := strings.Repeat(fmt.Sprint(e%10), 200)
		if err = s.Add(1, e, []byte(p)).Wait(); err != nil {
			break
		}
		done = append(done, p)
		waitAheadIdle(t, j)
		if j.Err() != nil {
			break
		}
	}
	require.True(t, failed.Load())
	require.Greater(t, len(done), 5, "the adds into the first chunk")
	err = j.Err()
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorContains(t, err, "journal: syncing the zeros pre-allocated in j/current/")
	require.Equal(t, int32(1), failures.Load())
	require.ErrorIs(t, s.Add(1, 1000, []byte("later")).Wait(), syscall.EIO)
	require.ErrorIs(t, s.Close(), syscall.EIO)

	s, got := openCollect(t, testOptions(mem.CrashClone(vfs.CrashOptions{})))
	require.NoError(t, s.Close())
	require.GreaterOrEqual(t, len(got), len(done))
	for i := range done {
		require.Equal(t, done[i], got[i].Payload)
	}
}

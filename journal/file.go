package journal

import (
	"io"
	"path/filepath"
	"sync"

	"github.com/bookie-index/bookie-index/vfs"
)

// journalFile is a journal file being written and its synced-length file.
type journalFile struct {
	id     int64
	path   string
	f      vfs.File
	synced vfs.File
	// size is the logical length, the end of the records (the writer's),
	// syncedLen the length the last completed fsync covered (the
	// syncer's).
	size, syncedLen int64
	// alloc is the file's pre-allocation (prealloc.go), shared by the
	// writer, the syncer and the pre-allocator.
	alloc allocState
	// bgMu is held by each step of the pre-allocator (its write and its
	// sync) and by close, so that a file is never closed under a step.
	bgMu sync.Mutex
	// syncMu serializes the file's syncs, the syncer's and the
	// pre-allocator's, and guards syncErr: the first failed sync of the
	// file. After a failed fsync the kernel may have dropped dirty pages
	// and a later fsync on the file may succeed, so whichever goroutine
	// syncs next must see the failure rather than its own success.
	syncMu  sync.Mutex
	syncErr error
}

// createJournalFile creates journal file id in dir (a journal's current
// directory) and its synced-length file, writes the header and
// pre-allocates the first chunk after it (preallocate), syncs both,
// marks it synced and syncs the directory, so that both names are durable
// before a record is written. On failure it removes what it created (best
// effort: a leftover is an empty journal to a replay).
func createJournalFile(fs vfs.FS, dir string, id int64, version int, chunk int64, zeros []byte) (_ *journalFile, err error) {
	path := filepath.Join(dir, FileName(id))
	syncedPath := filepath.Join(dir, SyncedFileName(id))
	jf := &journalFile{id: id, path: path}
	jf.alloc.init()
	defer func() {
		if err != nil {
			created, createdSynced := jf.f != nil, jf.synced != nil
			jf.close()
			if createdSynced {
				_ = fs.Remove(syncedPath)
			}
			if created {
				_ = fs.Remove(path)
			}
		}
	}()
	if jf.f, err = fs.CreateExclusive(path); err != nil {
		return nil, ioError(err, "journal: creating "+path)
	}
	header := encodeHeader(version)
	if err = writeAllAt(jf.f, header, 0); err != nil {
		return nil, ioError(err, "journal: writing the header of "+path)
	}
	jf.size = int64(len(header))
	jf.alloc.written = jf.size
	// As upstream, the first chunk at creation: the first batch after
	// an open or a roll writes into zeros already synced.
	if err = jf.writeZerosLocked(roundUp(jf.size+1, chunk), zeros); err != nil {
		return nil, err
	}
	if err = jf.f.Sync(); err != nil {
		return nil, ioError(err, "journal: syncing the header of "+path)
	}
	jf.alloc.durable = jf.alloc.written
	if jf.synced, err = fs.Create(syncedPath); err != nil {
		return nil, ioError(err, "journal: creating "+syncedPath)
	}
	if err = jf.markSynced(jf.size); err != nil {
		return nil, err
	}
	if err = vfs.SyncDir(fs, dir); err != nil {
		return nil, ioError(err, "journal: creating "+path)
	}
	return jf, nil
}

// markSynced appends the mark for a completed fsync that covered length
// bytes.
func (jf *journalFile) markSynced(length int64) error {
	if err := writeAll(jf.synced, appendSyncedMark(nil, length)); err != nil {
		return ioError(err, "journal: writing the synced length of "+jf.path)
	}
	jf.syncedLen = length
	return nil
}

// close closes both files; their errors do not matter once the data is
// synced (or the journal has failed). It waits for a pre-allocation step
// in progress, and the pre-allocator leaves the file alone after it.
func (jf *journalFile) close() {
	jf.bgMu.Lock()
	defer jf.bgMu.Unlock()
	jf.alloc.Lock()
	jf.alloc.closed = true
	jf.alloc.Unlock()
	if jf.f != nil {
		_ = jf.f.Close()
		jf.f = nil
	}
	if jf.synced != nil {
		_ = jf.synced.Close()
		jf.synced = nil
	}
}

// writeAllAt writes b at off with one call, and calls a short write an
// error.
func writeAllAt(w io.WriterAt, b []byte, off int64) error {
	n, err := w.WriteAt(b, off)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}

// writeAll writes b with one call, and calls a short write an error.
func writeAll(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}

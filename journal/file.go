package journal

import (
	"fmt"
	"io"
	"path/filepath"

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
	// allocated is the file's length on disk, its records and the zeros
	// pre-allocated after them (the writer's); syncedAlloc is the length
	// the last full fsync made durable (the syncer's). A sync that covers
	// no growth (syncRequest.alloc <= syncedAlloc) is an fdatasync.
	allocated, syncedAlloc int64
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
	jf.size, jf.allocated = int64(len(header)), int64(len(header))
	// As upstream, the first chunk at creation: the first batch after
	// an open or a roll writes into zeros already synced.
	if _, err = jf.preallocate(jf.size+1, chunk, zeros); err != nil {
		return nil, err
	}
	if err = jf.f.Sync(); err != nil {
		return nil, ioError(err, "journal: syncing the header of "+path)
	}
	jf.syncedAlloc = jf.allocated
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
// synced (or the journal has failed).
func (jf *journalFile) close() {
	if jf.f != nil {
		_ = jf.f.Close()
		jf.f = nil
	}
	if jf.synced != nil {
		_ = jf.synced.Close()
		jf.synced = nil
	}
}

// preallocate makes the file at least need bytes long on disk: zeros from
// its end to the next multiple of chunk at or past need, written (not a
// sparse hole or an unwritten extent, which the first write into them
// would turn into a metadata change for the next sync), as upstream's
// journalPreAllocSizeMB. It reports whether the file grew; the growth is
// durable only after a full Sync. zeros is a buffer of zeros to write
// from, reused.
func (jf *journalFile) preallocate(need, chunk int64, zeros []byte) (grew bool, err error) {
	if need <= jf.allocated {
		return false, nil
	}
	end := (need + chunk - 1) / chunk * chunk
	for jf.allocated < end {
		n := min(end-jf.allocated, int64(len(zeros)))
		if err := writeAllAt(jf.f, zeros[:n], jf.allocated); err != nil {
			return true, ioError(err, fmt.Sprintf("journal: pre-allocating %s to %d bytes at offset %d", jf.path, end, jf.allocated))
		}
		jf.allocated += n
	}
	return true, nil
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

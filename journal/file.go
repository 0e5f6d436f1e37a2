package journal

import (
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
	// size is the file's length (the writer's), syncedLen the length the
	// last completed fsync covered (the syncer's).
	size, syncedLen int64
}

// createJournalFile creates journal file id in dir (a journal's current
// directory) and its synced-length file, writes and syncs the header,
// marks it synced and syncs the directory, so that both names are durable
// before a record is written. On failure it removes what it created (best
// effort: a leftover is an empty journal to a replay).
func createJournalFile(fs vfs.FS, dir string, id int64, version int) (_ *journalFile, err error) {
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
	if err = writeAll(jf.f, header); err != nil {
		return nil, ioError(err, "journal: writing the header of "+path)
	}
	if err = jf.f.Sync(); err != nil {
		return nil, ioError(err, "journal: syncing the header of "+path)
	}
	jf.size = int64(len(header))
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

// writeAll writes b with one call, and calls a short write an error.
func writeAll(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}

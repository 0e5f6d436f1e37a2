package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// ReplayResult describes a replay.
type ReplayResult struct {
	// End is where reading stopped in the last file replayed (upstream's
	// scan offset): every record before it was delivered. It is from when
	// no file was replayed.
	End LogMark
	// Files counts the files read; Records the records delivered.
	Files   int
	Records int64
	// TornTails lists the files whose records ended before the end of the
	// file at or past what a completed fsync covered (or where that is not
	// known): bytes the writer never finished, dropped. The caller logs
	// each with a WARN.
	TornTails []TornTail
}

// TornTail is the unsynced end of a journal file, dropped by a replay.
type TornTail struct {
	// Path is the journal file.
	Path string
	// Offset is where its records end; Size is its length.
	Offset, Size int64
	// SyncedLength is the length its last completed fsync covered, from
	// its synced-length file, or -1 if unknown (a journal upstream wrote).
	SyncedLength int64
	// Reason says what was found at Offset.
	Reason string
}

func (t TornTail) String() string {
	synced := "synced length unknown"
	if t.SyncedLength >= 0 {
		synced = fmt.Sprintf("synced length %d", t.SyncedLength)
	}
	return fmt.Sprintf("%s: torn tail: %s; %d bytes after offset %d dropped (%s)",
		t.Path, t.Reason, t.Size-t.Offset, t.Offset, synced)
}

// ListFiles returns the ids of the journal files of a journal directory,
// in ascending order. A missing directory has none.
func ListFiles(fs vfs.FS, journalDir string) ([]int64, error) {
	dir := CurrentDir(journalDir)
	names, err := fs.List(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, errors.Wrapf(err, "journal: listing %s", dir)
	}
	var ids []int64
	for _, name := range names {
		id, ok, err := ParseFileName(name)
		if err != nil {
			return nil, errors.Wrapf(err, "journal: in %s", dir)
		}
		if ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Replay reads the journal directory journalDir (the directory holding
// "current") from the mark from to the end and calls fn for every record
// in order (padding is skipped; meta-entries are delivered, including
// unknown ones, which upstream skips with a warning). An error from fn
// stops the replay and is returned as it is.
//
// The files read are those with an id at or above from.FileID, the first
// from from.Offset (0: from its first record), the others from their first
// record, as upstream replays. If from names a file (FileID > 0) that is
// not there, the records after the mark are lost: the error matches
// ErrMissingJournal.
//
// Each file's records end at its end, at a zero length (upstream's
// pre-allocated space) or at bytes that do not make a record. Where that
// is below the length a completed fsync covered (the file's synced-length
// file, written by this package's writer), the file was damaged after it
// was synced and Replay fails with an error matching ErrCorruption that
// names the file, the offset and the synced length. Where it is at or past
// that length, or the length is unknown (a journal upstream wrote), the
// rest of the file is a torn tail, reported in the result for a WARN,
// unless it is all zeros (space pre-allocated and never written). A
// malformed record where the synced length is unknown is an error, as it
// is upstream's.
func Replay(fs vfs.FS, journalDir string, from LogMark, fn func(*Record) error) (ReplayResult, error) {
	res := ReplayResult{End: from}
	ids, err := ListFiles(fs, journalDir)
	if err != nil {
		return res, err
	}
	first, _ := slices.BinarySearch(ids, from.FileID)
	ids = ids[first:]
	if from.FileID > 0 && (len(ids) == 0 || ids[0] != from.FileID) {
		return res, errors.Wrapf(ErrMissingJournal, "journal: %s is missing from %s (the last log mark is %s)",
			FileName(from.FileID), CurrentDir(journalDir), from)
	}
	var rec Record
	for _, id := range ids {
		start := int64(0)
		if id == from.FileID {
			start = from.Offset
		}
		end, torn, err := replayFile(fs, journalDir, id, start, &rec, func(r *Record) error {
			res.Records++
			return fn(r)
		})
		res.Files++
		if end.FileID != 0 {
			res.End = end
		}
		if err != nil {
			return res, err
		}
		if torn != nil {
			res.TornTails = append(res.TornTails, *torn)
		}
	}
	return res, nil
}

// replayFile replays one file from offset start (0: its first record) and
// returns where its records end and its torn tail, if any.
func replayFile(fs vfs.FS, journalDir string, id, start int64, rec *Record, fn func(*Record) error) (LogMark, *TornTail, error) {
	dir := CurrentDir(journalDir)
	path := filepath.Join(dir, FileName(id))
	synced, haveSynced, err := readSyncedFile(fs, filepath.Join(dir, SyncedFileName(id)))
	if err != nil {
		return LogMark{}, nil, err
	}
	r, err := openFileReader(fs, path, id)
	if err != nil {
		if haveSynced && errors.Is(err, ErrCorruption) {
			err = errors.Wrapf(err, "journal: %s (synced length %d)", path, synced)
		}
		return LogMark{}, nil, err
	}
	defer r.close()
	if start > 0 {
		r.seek(start)
	}
	var s *stop
	for {
		if s, err = r.next(rec); err != nil {
			return LogMark{}, nil, err
		}
		if s != nil {
			break
		}
		if err := fn(rec); err != nil {
			return LogMark{}, nil, err
		}
	}
	end := LogMark{FileID: id, Offset: s.offset}
	switch {
	case haveSynced && min(s.offset, r.size) < synced:
		what := s.String()
		if s.offset > r.size {
			what = fmt.Sprintf("the file ends at offset %d, before the mark's offset %d", r.size, s.offset)
		}
		return end, nil, errors.Wrapf(ErrCorruption,
			"journal: %s: %s, below the synced length %d (bytes a completed fsync covered are damaged)", path, what, synced)
	case !haveSynced && s.kind == stopMalformed:
		return end, nil, errors.Wrapf(ErrCorruption, "journal: %s: %s", path, s)
	case s.offset >= r.size:
		return end, nil, nil
	}
	zeros, err := r.zerosFrom(s.offset)
	if err != nil {
		return end, nil, err
	}
	if zeros {
		return end, nil, nil
	}
	torn := &TornTail{Path: path, Offset: s.offset, Size: r.size, SyncedLength: -1, Reason: s.String()}
	if haveSynced {
		torn.SyncedLength = synced
	}
	return end, torn, nil
}

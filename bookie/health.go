package bookie

import (
	"path/filepath"
	"strconv"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// Health returns why the storage cannot serve, or nil: a directory is
// closed, or one of its indexes stopped after a write failure that needs a
// restart (a sticky engine error; a full disk the engine is retrying is
// not one, see IndexError). The admin API's /heartbeat and is_ready answer
// 503 with it.
func (s *Storage) Health() error {
	for _, d := range s.dirs {
		if err := d.Health(); err != nil {
			return err
		}
	}
	return nil
}

// Health returns why the directory cannot serve, or nil.
func (d *DirStorage) Health() error {
	if err := d.enter("health check"); err != nil {
		return errors.Wrapf(err, "bookie: %s", d.ledgerDir)
	}
	defer d.exit()
	if err := d.locations.Health(); err != nil {
		return errors.Wrapf(err, "bookie: %s: the entry location index", d.ledgerDir)
	}
	if err := d.ledgers.db.BackgroundError(); err != nil && !errors.Is(err, lsm.ErrNoSpace) {
		return errors.Wrapf(err, "bookie: %s: the ledgers index %s", d.ledgerDir, d.ledgers.path)
	}
	return nil
}

// isCorruption reports whether a read error is damage to a file (of an
// index or an entry log), as opposed to a missing entry or an I/O error.
func isCorruption(err error) bool {
	return errors.Is(err, lsm.ErrCorruption) || errors.Is(err, entrylog.ErrCorruption)
}

// readCorruption counts and logs damage a read met. An entry log's error
// is given its file and offset (fileOffsetError), which the logger's
// repeat limiter keys on, so that a damaged record read over and over is
// logged once per interval, not once per read; the index's table errors
// name theirs already.
func (d *DirStorage) readCorruption(err error, ledgerID, entryID, location int64, inEntryLog bool) error {
	d.stats.readCorruptions.Add(1)
	if inEntryLog {
		err = &fileOffsetError{err: err,
			file:   filepath.Join(d.ledgerDir, entrylog.LogFileName(entrylog.LocationLogID(location))),
			offset: entrylog.LocationOffset(location)}
	}
	d.log.Error("corruption met by a read", "ledgerId", ledgerID, "entryId", entryID, "err", err)
	return err
}

// fileOffsetError names the file and offset of the bytes an error is about
// (internal/logging's located interface).
type fileOffsetError struct {
	err    error
	file   string
	offset int64
}

func (e *fileOffsetError) Error() string {
	return e.file + " offset " + strconv.FormatInt(e.offset, 10) + ": " + e.err.Error()
}

func (e *fileOffsetError) Unwrap() error { return e.err }

// FileOffset returns the file and the offset.
func (e *fileOffsetError) FileOffset() (string, int64) { return e.file, e.offset }

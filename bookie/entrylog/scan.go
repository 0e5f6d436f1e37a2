package entrylog

import (
	"io"
	"path/filepath"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// ScanResult describes a scanned log.
type ScanResult struct {
	// LogID is the log's id, from its header (BIEL) or its file name
	// (BKLO).
	LogID int64
	// Format is the log's format.
	Format Format
	// Records counts the records read.
	Records int64
	// Size is the file's size; ValidEnd the end of its last good record.
	Size, ValidEnd int64
	// Tail, if not nil, says why the scan stopped before Size: a torn
	// record at the end of the log that was being written when the
	// process died, or a damaged record (the scan cannot find records
	// past it). It matches ErrCorruption.
	Tail error
}

// Scan reads every record of the log at path, of either format, in order
// and calls fn for each entry (a BookKeeper log's ledgers map is skipped); an error from fn stops the scan and is returned. It stops at the
// first record that does not decode and reports it in the result's Tail
// rather than failing: a crash leaves a torn record at the end of the log
// that was being written. A bad header is an error. An empty file is a
// log of no records and no format (Format 0): BookKeeper's entry logger
// creates its next log ahead of time and writes the header only when the
// log becomes current, so a stopped bookie's newest log is often empty.
// A nil fs is the operating system's.
func Scan(fs vfs.FS, path string, fn func(rec *Record) error) (ScanResult, error) {
	var res ScanResult
	if fs == nil {
		fs = vfs.Default
	}
	f, err := fs.Open(path)
	if err != nil {
		return res, errors.Wrapf(err, "entrylog: scanning %s", path)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return res, errors.Wrapf(err, "entrylog: scanning %s", path)
	}
	res.Size = size
	id, named := ParseLogFileName(filepath.Base(path))
	if !named {
		id = -1
	}
	if size == 0 {
		res.LogID = id
		return res, nil
	}
	format, err := detectFormat(f, path, id)
	if err != nil {
		return res, err
	}
	res.Format = format
	if format == FormatBIEL {
		h := make([]byte, headerUsed)
		if err := readFull(f, h, 0); err != nil {
			return res, errors.Wrapf(err, "entrylog: %s: reading the header", path)
		}
		if id, err = decodeHeader(h); err != nil {
			return res, errors.Wrapf(err, "entrylog: %s", path)
		}
	} else if !named {
		// BookKeeper's header does not name its log: the file name must.
		return res, errors.Wrapf(ErrInvalidArgument, "entrylog: %s: a BookKeeper log's id is its file name's (<hex id>.log)", path)
	}
	res.LogID = id
	res.ValidEnd = min(HeaderSize, size)
	if size < HeaderSize {
		res.Tail = errors.Wrapf(ErrCorruption, "entrylog: %s: %d bytes, shorter than the header", path, size)
		return res, nil
	}
	it := newIterator(format, f, id, HeaderSize, size)
	defer it.release()
	for {
		rec, err := it.next()
		if err == io.EOF {
			// Past what follows the last entry too (a ledgers map).
			res.ValidEnd = it.position()
			return res, nil
		}
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				return res, errors.Wrapf(err, "entrylog: scanning %s", path)
			}
			res.Tail = errors.Wrapf(err, "entrylog: %s: %d bytes not scanned", path, size-it.position())
			return res, nil
		}
		if err := fn(rec); err != nil {
			return res, err
		}
		res.Records++
		res.ValidEnd = it.position()
	}
}

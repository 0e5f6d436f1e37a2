package entrylog

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"sync"

	"github.com/cockroachdb/errors"
)

// reader returns log id open for reading, opening it if needed.
func (l *Logger) reader(id int64) (*readLog, error) {
	l.readMu.RLock()
	r, ok := l.readers[id]
	l.readMu.RUnlock()
	if ok {
		return r, nil
	}
	if l.closed.Load() {
		return nil, errors.Wrap(ErrClosed, "entrylog: read")
	}
	l.readMu.Lock()
	defer l.readMu.Unlock()
	if r, ok := l.readers[id]; ok {
		return r, nil
	}
	if l.closed.Load() {
		return nil, errors.Wrap(ErrClosed, "entrylog: read")
	}
	path := l.LogPath(id)
	f, err := l.fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errors.Wrapf(ErrBadLocation, "entrylog: log %#x does not exist (%s)", id, path)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "entrylog: opening %s", path)
	}
	size, err := f.Size()
	if err != nil {
		_ = f.Close()
		return nil, errors.Wrapf(err, "entrylog: examining %s", path)
	}
	format, err := detectFormat(f, path, id)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r = &readLog{id: id, f: f, format: format}
	r.limit.Store(size)
	l.readers[id] = r
	return r, nil
}

// ReadEntry returns the payload of the record at location, which must be
// entry entryID of ledger ledgerID. A location that names no record of
// that entry is an error matching ErrBadLocation; a damaged record, one
// matching ErrCorruption. Both name the location.
func (l *Logger) ReadEntry(ledgerID, entryID, location int64) ([]byte, error) {
	payload, err := l.readEntry(ledgerID, entryID, location)
	if err != nil {
		err = errors.Wrapf(err, "entrylog: entry %d of ledger %d at %s", entryID, ledgerID, FormatLocation(location))
		return nil, &RecordReadError{Path: l.LogPath(LocationLogID(location)), Location: location, Err: err}
	}
	return payload, nil
}

func (l *Logger) readEntry(ledgerID, entryID, location int64) ([]byte, error) {
	if location <= 0 || LocationOffset(location) < HeaderSize+SizeFieldSize {
		return nil, errors.Wrap(ErrBadLocation, "not a record's location")
	}
	r, err := l.acquire(LocationLogID(location))
	if err != nil {
		return nil, err
	}
	defer r.mu.RUnlock()
	start := LocationOffset(location) - SizeFieldSize
	limit := r.limit.Load()
	if r.format == FormatBKLO {
		return readBKEntry(r.f, location, limit, ledgerID, entryID)
	}
	if start+RecordOverhead > limit {
		return nil, errors.Wrapf(ErrBadLocation, "past the readable end of the log (%d bytes)", limit)
	}
	var head [RecordOverhead]byte
	if err := readFull(r.f, head[:], start); err != nil {
		return nil, err
	}
	h, herr := decodeRecordHeader(head[:])
	if h.ledgerID != ledgerID || h.entryID != entryID {
		// The size may be garbage too: the location is the first suspect.
		return nil, errors.Wrapf(ErrBadLocation, "the record there is entry %d of ledger %d, or no record at all", h.entryID, h.ledgerID)
	}
	if herr != nil {
		return nil, herr
	}
	if start+SizeFieldSize+int64(h.size) > limit {
		return nil, errors.Wrapf(ErrCorruption, "record of %d bytes runs past the readable end of the log (%d bytes)", h.size, limit)
	}
	payload := make([]byte, h.payloadSize())
	if err := readFull(r.f, payload, start+RecordOverhead); err != nil {
		return nil, err
	}
	if err := checkRecord(head[:], &h, payload); err != nil {
		return nil, err
	}
	return payload, nil
}

func readFull(f io.ReaderAt, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		return errors.Wrapf(ErrCorruption, "short read: %d of %d bytes at offset %d", n, len(b), off)
	}
	return errors.Wrapf(err, "reading %d bytes at offset %d", len(b), off)
}

// Record is one record as ReadAfter and Scan report it. Payload is valid
// only during the callback; for a BookKeeper log it is the entry after its
// 16-byte ledger/entry header, as ReadEntry returns it.
type Record struct {
	LedgerID, EntryID, Location int64
	Payload                     []byte
	// Size is the bytes the record takes in its log, its size field
	// included (upstream's accounting of a ledger's bytes in a log):
	// RecordOverhead + len(Payload) in ours, 20 + len(Payload) in a
	// BookKeeper log.
	Size int64
}

// ReadAfter calls fn for the records that follow the one at location in
// its log, in order, until fn returns false or the readable end of the
// log. It is the read-ahead of the read path: one sequential read instead
// of a random read per entry. A damaged record stops it with an error.
func (l *Logger) ReadAfter(location int64, fn func(rec *Record) bool) error {
	if location <= 0 || LocationOffset(location) < HeaderSize+SizeFieldSize {
		return errors.Wrapf(ErrBadLocation, "entrylog: read after %s: not a record's location", FormatLocation(location))
	}
	r, err := l.acquire(LocationLogID(location))
	if err != nil {
		return err
	}
	defer r.mu.RUnlock()
	start := LocationOffset(location) - SizeFieldSize
	limit := r.limit.Load()
	if start+SizeFieldSize > limit {
		return errors.Wrapf(ErrBadLocation, "entrylog: read after %s: past the readable end", FormatLocation(location))
	}
	var sizeField [SizeFieldSize]byte
	if err := readFull(r.f, sizeField[:], start); err != nil {
		return err
	}
	size := int64(binary.BigEndian.Uint32(sizeField[:]))
	var err2 error
	if r.format == FormatBKLO {
		err2 = checkBKSize(int64(int32(size)))
	} else if size < recordHeaderSize || size > recordHeaderSize+MaxPayloadSize {
		err2 = errors.Wrapf(ErrCorruption, "record size %d out of range [%d, %d]", size, recordHeaderSize, recordHeaderSize+MaxPayloadSize)
	}
	if err2 != nil {
		return errors.Wrapf(err2, "entrylog: read after %s", FormatLocation(location))
	}
	it := newIterator(r.format, r.f, r.id, min(start+SizeFieldSize+size, limit), limit)
	defer it.release()
	for {
		rec, err := it.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errors.Wrapf(err, "entrylog: read after %s", FormatLocation(location))
		}
		if !fn(rec) {
			return nil
		}
	}
}

// recordCursor is what both logs' sequential record readers keep: a
// pooled buffered reader over the bytes from pos to end of log logID, and
// the record last read.
type recordCursor struct {
	br      *bufio.Reader
	logID   int64
	pos     int64
	end     int64
	rec     Record
	payload []byte
}

var bufioPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

func newRecordCursor(f io.ReaderAt, logID, pos, end int64) recordCursor {
	br := bufioPool.Get().(*bufio.Reader)
	br.Reset(io.NewSectionReader(f, pos, max(end-pos, 0)))
	return recordCursor{br: br, logID: logID, pos: pos, end: end}
}

func (c *recordCursor) position() int64 { return c.pos }

// release returns the buffered reader to the pool.
func (c *recordCursor) release() {
	c.br.Reset(nil)
	bufioPool.Put(c.br)
	c.br = nil
}

// recordIter reads records sequentially from pos to end.
type recordIter struct{ recordCursor }

func newRecordIter(f io.ReaderAt, logID, pos, end int64) *recordIter {
	return &recordIter{newRecordCursor(f, logID, pos, end)}
}

// next returns the next record; io.EOF at a clean end; a wrapped
// ErrCorruption for a torn or damaged record (the position of which is
// it.pos).
func (it *recordIter) next() (*Record, error) {
	if it.pos == it.end {
		return nil, io.EOF
	}
	if it.end-it.pos < RecordOverhead {
		return nil, errors.Wrapf(ErrCorruption, "%d bytes at offset %d, too few for a record", it.end-it.pos, it.pos)
	}
	var head [RecordOverhead]byte
	if _, err := io.ReadFull(it.br, head[:]); err != nil {
		return nil, errors.Wrapf(err, "reading at offset %d", it.pos)
	}
	h, err := decodeRecordHeader(head[:])
	if err != nil {
		return nil, errors.Wrapf(err, "at offset %d", it.pos)
	}
	if it.pos+SizeFieldSize+int64(h.size) > it.end {
		return nil, errors.Wrapf(ErrCorruption, "record of %d bytes at offset %d runs past the end (%d)", h.size, it.pos, it.end)
	}
	n := h.payloadSize()
	if cap(it.payload) < n {
		it.payload = make([]byte, n)
	}
	it.payload = it.payload[:n]
	if _, err := io.ReadFull(it.br, it.payload); err != nil {
		return nil, errors.Wrapf(err, "reading at offset %d", it.pos)
	}
	if err := checkRecord(head[:], &h, it.payload); err != nil {
		return nil, errors.Wrapf(err, "at offset %d", it.pos)
	}
	it.rec = Record{LedgerID: h.ledgerID, EntryID: h.entryID, Location: MakeLocation(it.logID, it.pos+SizeFieldSize), Payload: it.payload, Size: SizeFieldSize + int64(h.size)}
	it.pos += SizeFieldSize + int64(h.size)
	return &it.rec, nil
}

// acquire returns log id open for reading with its mu read-held: it is
// not closed until the caller unlocks. A log removed meanwhile is an
// error matching ErrBadLocation.
func (l *Logger) acquire(id int64) (*readLog, error) {
	r, err := l.reader(id)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	if r.removed {
		r.mu.RUnlock()
		if l.closed.Load() {
			return nil, errors.Wrap(ErrClosed, "entrylog: read")
		}
		return nil, errors.Wrapf(ErrBadLocation, "entrylog: log %#x was removed", id)
	}
	return r, nil
}

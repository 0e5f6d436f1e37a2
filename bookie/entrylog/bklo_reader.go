package entrylog

import (
	"encoding/binary"
	"io"

	"github.com/cockroachdb/errors"
)

// recordIterator reads the records of one log sequentially, whatever its
// format; Scan and ReadAfter use it.
type recordIterator interface {
	// next returns the next entry's record, io.EOF at a clean end, or a
	// wrapped ErrCorruption for a torn or damaged record at position().
	next() (*Record, error)
	// position is the offset of the next record's size field.
	position() int64
	release()
}

// newIterator returns the iterator of format over [pos, end) of log logID.
func newIterator(format Format, f io.ReaderAt, logID, pos, end int64) recordIterator {
	if format == FormatBKLO {
		return newBKRecordIter(f, logID, pos, end)
	}
	return newRecordIter(f, logID, pos, end)
}

// readBKEntry reads the BookKeeper record whose entry starts at location,
// limit being the log's size. BookKeeper records carry no checksum (the
// client's digest is inside the entry, checked by the client): what can
// be checked is that the size is that of an entry (at least its 16-byte
// header, at most MaxPayloadSize after it), that the record lies within
// the log, and that it holds the entry asked for.
func readBKEntry(f io.ReaderAt, location, limit, ledgerID, entryID int64) ([]byte, error) {
	pos := LocationOffset(location)
	if pos+BKEntryHeaderSize > limit {
		return nil, errors.Wrapf(ErrBadLocation, "past the end of the log (%d bytes)", limit)
	}
	var head [SizeFieldSize + BKEntryHeaderSize]byte
	if err := readFull(f, head[:], pos-SizeFieldSize); err != nil {
		return nil, err
	}
	size := int64(int32(binary.BigEndian.Uint32(head[:])))
	gotLedger, gotEntry := int64(binary.BigEndian.Uint64(head[4:])), int64(binary.BigEndian.Uint64(head[12:]))
	if gotLedger != ledgerID || gotEntry != entryID {
		return nil, errors.Wrapf(ErrBadLocation, "the record there is entry %d of ledger %d, or no record at all", gotEntry, gotLedger)
	}
	if err := checkBKSize(size); err != nil {
		return nil, err
	}
	if pos+size > limit {
		return nil, errors.Wrapf(ErrCorruption, "entry of %d bytes runs past the end of the log (%d bytes)", size, limit)
	}
	payload := make([]byte, size-BKEntryHeaderSize)
	if err := readFull(f, payload, pos+BKEntryHeaderSize); err != nil {
		return nil, err
	}
	return payload, nil
}

// checkBKSize checks the size field of a BookKeeper entry record.
func checkBKSize(size int64) error {
	if size < BKEntryHeaderSize || size > BKEntryHeaderSize+MaxPayloadSize {
		return errors.Wrapf(ErrCorruption, "entry size %d out of range [%d, %d]", size, BKEntryHeaderSize, BKEntryHeaderSize+MaxPayloadSize)
	}
	return nil
}

// bkRecordIter reads the records of a BookKeeper log from pos to end,
// skipping the ledgers map's records (ledger id -1) and, in a log of
// upstream's DirectEntryLogger, its padding.
type bkRecordIter struct {
	recordCursor
	// direct says the log was written by DirectEntryLogger
	// (isDirectLog).
	direct bool
}

func newBKRecordIter(f io.ReaderAt, logID, pos, end int64) *bkRecordIter {
	return &bkRecordIter{recordCursor: newRecordCursor(f, logID, pos, end), direct: isDirectLog(f, end)}
}

// Upstream's DirectEntryLogger (dbStorage_directIOEntryLogger=true) writes
// the same header and records as DefaultEntryLogger, in 4 KiB-aligned
// writes: its header block holds, at HeaderSize, a record of ledger -1
// entry 0 that fills the block (so that readers of the 1 KiB header step
// over it); each flush pads to the next 4 KiB boundary with 0xF0 bytes
// (a negative size to a reader); and a log may be preallocated, its
// unwritten end zeros. Its own scanner (LogReaderScan) takes a negative
// size as padding up to the next boundary and a zero size as the end.
const (
	bkDirectAlignment = 4096
	bkDirectPadding   = 0xF0
)

// isDirectLog reports whether the BookKeeper log read through f (of size
// end) was written by DirectEntryLogger: its first record is the filler
// of the header block.
func isDirectLog(f io.ReaderAt, end int64) bool {
	if end < bkDirectAlignment {
		return false
	}
	var head [SizeFieldSize + BKEntryHeaderSize]byte
	if _, err := f.ReadAt(head[:], HeaderSize); err != nil {
		return false
	}
	return int64(binary.BigEndian.Uint32(head[:])) == bkDirectAlignment-HeaderSize-SizeFieldSize &&
		int64(binary.BigEndian.Uint64(head[4:])) == bkLedgersMapLedgerID &&
		binary.BigEndian.Uint64(head[12:]) == 0
}

// skipDirectPadding handles what a DirectEntryLogger log has at it.pos in
// place of a record: padding (0xF0 bytes up to the next 4 KiB boundary,
// skipped: it returns true) or the zeros of its unwritten end (io.EOF, as
// upstream's scanner ends there). A record gives false.
func (it *bkRecordIter) skipDirectPadding() (bool, error) {
	b, err := it.br.Peek(min(SizeFieldSize, int(it.end-it.pos)))
	if err != nil || len(b) < SizeFieldSize {
		return false, nil // the record checks below report it
	}
	size := int32(binary.BigEndian.Uint32(b))
	switch {
	case size == 0:
		return false, io.EOF
	case size > 0:
		return false, nil
	}
	next := (it.pos + bkDirectAlignment - 1) &^ (bkDirectAlignment - 1)
	if next == it.pos || next > it.end {
		return false, errors.Wrapf(ErrCorruption, "entry size %d at offset %d (padding ends at a 4 KiB boundary, not at %d)", size, it.pos, min(next, it.end))
	}
	for it.pos < next {
		b, err := it.br.Peek(int(min(next-it.pos, int64(it.br.Size()))))
		if err != nil {
			return false, errors.Wrapf(err, "reading at offset %d", it.pos)
		}
		for i, c := range b {
			if c != bkDirectPadding {
				return false, errors.Wrapf(ErrCorruption, "byte %#x at offset %d in the padding from offset %d", c, it.pos+int64(i), it.pos)
			}
		}
		_, _ = it.br.Discard(len(b))
		it.pos += int64(len(b))
	}
	return true, nil
}

// next returns the next entry. Upstream's scanner steps over a size of 0
// or less one byte at a time as padding; DefaultEntryLogger writes none,
// so here it is where the readable records end (a crash's zero-filled or
// torn tail), reported as corruption at that offset like any other.
func (it *bkRecordIter) next() (*Record, error) {
	for {
		if it.pos == it.end {
			return nil, io.EOF
		}
		if it.direct {
			if skipped, err := it.skipDirectPadding(); err != nil {
				return nil, err
			} else if skipped {
				continue
			}
		}
		if it.end-it.pos < SizeFieldSize+BKEntryHeaderSize {
			return nil, errors.Wrapf(ErrCorruption, "%d bytes at offset %d, too few for a record", it.end-it.pos, it.pos)
		}
		var head [SizeFieldSize + BKEntryHeaderSize]byte
		if _, err := io.ReadFull(it.br, head[:]); err != nil {
			return nil, errors.Wrapf(err, "reading at offset %d", it.pos)
		}
		size := int64(int32(binary.BigEndian.Uint32(head[:])))
		ledgerID, entryID := int64(binary.BigEndian.Uint64(head[4:])), int64(binary.BigEndian.Uint64(head[12:]))
		if ledgerID == bkLedgersMapLedgerID {
			// A batch of the ledgers map: not an entry.
			if size < bkLedgersMapBatchHeader || it.pos+SizeFieldSize+size > it.end {
				return nil, errors.Wrapf(ErrCorruption, "ledgers-map record of %d bytes at offset %d out of range (log end %d)", size, it.pos, it.end)
			}
			if _, err := it.br.Discard(int(size - BKEntryHeaderSize)); err != nil {
				return nil, errors.Wrapf(err, "reading at offset %d", it.pos)
			}
			it.pos += SizeFieldSize + size
			continue
		}
		if err := checkBKSize(size); err != nil {
			return nil, errors.Wrapf(err, "at offset %d", it.pos)
		}
		if ledgerID < 0 {
			return nil, errors.Wrapf(ErrCorruption, "record of ledger %d at offset %d", ledgerID, it.pos)
		}
		if it.pos+SizeFieldSize+size > it.end {
			return nil, errors.Wrapf(ErrCorruption, "record of %d bytes at offset %d runs past the end (%d)", size, it.pos, it.end)
		}
		n := int(size - BKEntryHeaderSize)
		if cap(it.payload) < n {
			it.payload = make([]byte, n)
		}
		it.payload = it.payload[:n]
		if _, err := io.ReadFull(it.br, it.payload); err != nil {
			return nil, errors.Wrapf(err, "reading at offset %d", it.pos)
		}
		it.rec = Record{LedgerID: ledgerID, EntryID: entryID, Location: MakeLocation(it.logID, it.pos+SizeFieldSize), Payload: it.payload, Size: SizeFieldSize + size}
		it.pos += SizeFieldSize + size
		return &it.rec, nil
	}
}

package entrylog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// TailShape says what the bytes from where a scan stopped to the end of
// its log look like (ExamineTail): whether an interrupted write explains
// them.
type TailShape int

const (
	// TailCut: a record cut short by the end of the file (fewer bytes than
	// a record's header, or than its size field says the record holds):
	// what a write cut short by a crash, or by a failed write after which
	// the log was abandoned, leaves. Appends reach a file in order, so a
	// process crash leaves a prefix of what was written.
	TailCut TailShape = iota + 1
	// TailZeros: nothing but zeros to the end of the file: what a power
	// loss can leave of the pages of an append that the file's length
	// covers but that never reached the disk.
	TailZeros
	// TailDamaged: anything else, which no interrupted write leaves: a
	// whole record (all its bytes in the file) that fails its checksum,
	// a size out of range followed by bytes that are not zeros, or a
	// record cut short whose size field, with one byte corrected, makes
	// it whole and intact (the size field is what is damaged).
	TailDamaged
)

func (s TailShape) String() string {
	switch s {
	case TailCut:
		return "cut"
	case TailZeros:
		return "zeros"
	case TailDamaged:
		return "damaged"
	}
	return fmt.Sprintf("TailShape(%d)", int(s))
}

// tailCorrectionBudget bounds the payload bytes ExamineTail checksums
// while it looks for a one-byte correction of a size field; past it the
// record counts as cut short.
const tailCorrectionBudget = 1 << 30

// ExamineTail reads the log at path from offset, where a scan of it
// stopped before its end (ScanResult.ValidEnd), to the end of the file,
// and says what the bytes there look like and why, in words naming the
// offsets. A nil fs is the operating system's.
//
// A BookKeeper (BKLO) log's records carry no checksum: a whole record
// there is damaged when its ledger id is negative or its size out of
// range, and a size field damaged into one past the end cannot be told
// from a record cut short.
func ExamineTail(fs vfs.FS, path string, offset int64) (TailShape, string, error) {
	if fs == nil {
		fs = vfs.Default
	}
	f, err := fs.Open(path)
	if err != nil {
		return 0, "", errors.Wrapf(err, "entrylog: opening %s", path)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, "", errors.Wrapf(err, "entrylog: examining %s", path)
	}
	if offset < HeaderSize || offset >= size {
		return 0, "", errors.Wrapf(ErrInvalidArgument, "entrylog: %s: no tail at offset %d (%d bytes)", path, offset, size)
	}
	id, ok := ParseLogFileName(filepath.Base(path))
	if !ok {
		id = -1
	}
	format, err := detectFormat(f, path, id)
	if err != nil {
		return 0, "", err
	}
	zeros, err := allZeros(f, offset, size)
	if err != nil {
		return 0, "", errors.Wrapf(err, "entrylog: examining %s", path)
	}
	if zeros {
		return TailZeros, fmt.Sprintf("%d zero bytes from offset %d to the end of the file", size-offset, offset), nil
	}
	headSize := int64(RecordOverhead)
	if format == FormatBKLO {
		headSize = SizeFieldSize + BKEntryHeaderSize
	}
	if size-offset < headSize {
		return TailCut, fmt.Sprintf("%d bytes at offset %d, fewer than a record's header: a record cut short", size-offset, offset), nil
	}
	head := make([]byte, headSize)
	if err := readFull(f, head, offset); err != nil {
		return 0, "", errors.Wrapf(err, "entrylog: examining %s", path)
	}
	if format == FormatBKLO {
		n := int64(int32(binary.BigEndian.Uint32(head)))
		ledgerID := int64(binary.BigEndian.Uint64(head[4:]))
		inRange := checkBKSize(n) == nil || ledgerID == bkLedgersMapLedgerID && n >= bkLedgersMapBatchHeader
		if inRange && offset+SizeFieldSize+n > size {
			return TailCut, fmt.Sprintf("the record at offset %d (%d bytes) runs past the end of the file (%d bytes): a record cut short", offset, n, size), nil
		}
		return TailDamaged, fmt.Sprintf("the bytes at offset %d are no record (size %d, ledger %d) and are not one cut short: damage, which no interrupted write leaves", offset, n, ledgerID), nil
	}
	h, herr := decodeRecordHeader(head)
	if herr == nil && offset+SizeFieldSize+int64(h.size) <= size {
		return TailDamaged, fmt.Sprintf("the record at offset %d is whole (%d bytes, all in the file) but fails its checksum: damage, which no interrupted write leaves", offset, SizeFieldSize+h.size), nil
	}
	if fixed, ok, err := correctSizeField(f, head, offset, size); err != nil {
		return 0, "", errors.Wrapf(err, "entrylog: examining %s", path)
	} else if ok {
		return TailDamaged, fmt.Sprintf("the size field of the record at offset %d says %d, but with one byte changed to %d the record is whole and its checksum holds: its size field is damaged", offset, h.size, fixed), nil
	}
	if herr != nil {
		return TailDamaged, fmt.Sprintf("the record at offset %d has a size out of range (%d) and is followed by bytes that are not zeros: damage, which no interrupted write leaves", offset, h.size), nil
	}
	return TailCut, fmt.Sprintf("the record at offset %d (%d bytes) runs past the end of the file (%d bytes): a record cut short", offset, SizeFieldSize+h.size, size), nil
}

// allZeros reports whether [from, to) of f holds only zeros.
func allZeros(f io.ReaderAt, from, to int64) (bool, error) {
	buf := make([]byte, min(to-from, 256<<10))
	for off := from; off < to; {
		b := buf[:min(int64(len(buf)), to-off)]
		if err := readFull(f, b, off); err != nil {
			return false, err
		}
		for _, c := range b {
			if c != 0 {
				return false, nil
			}
		}
		off += int64(len(b))
	}
	return true, nil
}

// correctSizeField looks for one byte of the size field of the record
// whose RecordOverhead bytes at offset are head that, changed, makes the
// record fit the file and pass its checksum (which covers the size field
// as written): proof that the size field is damaged, not the record cut
// short. A candidate whose record is followed by something that cannot
// start a record is skipped before its payload is read.
func correctSizeField(f io.ReaderAt, head []byte, offset, size int64) (uint32, bool, error) {
	stored := binary.BigEndian.Uint32(head[20:])
	budget := int64(tailCorrectionBudget)
	cand := make([]byte, RecordOverhead)
	next := make([]byte, RecordOverhead)
	buf := make([]byte, 256<<10)
	for k := range SizeFieldSize {
		for v := range 256 {
			if byte(v) == head[k] {
				continue
			}
			copy(cand, head)
			cand[k] = byte(v)
			n := binary.BigEndian.Uint32(cand)
			end := offset + SizeFieldSize + int64(n)
			if n < recordHeaderSize || n > recordHeaderSize+MaxPayloadSize || end > size {
				continue
			}
			if end < size {
				if end+RecordOverhead > size {
					continue
				}
				if err := readFull(f, next, end); err != nil {
					return 0, false, err
				}
				nh, err := decodeRecordHeader(next)
				if err != nil || end+SizeFieldSize+int64(nh.size) > size || nh.ledgerID < 0 || nh.entryID < 0 {
					continue
				}
			}
			if budget -= int64(n); budget < 0 {
				return 0, false, nil
			}
			crc := crc32.Checksum(cand[:20], castagnoli)
			for off, left := offset+RecordOverhead, int64(n)-recordHeaderSize; left > 0; {
				b := buf[:min(int64(len(buf)), left)]
				if err := readFull(f, b, off); err != nil {
					return 0, false, err
				}
				crc = crc32.Update(crc, castagnoli, b)
				off += int64(len(b))
				left -= int64(len(b))
			}
			if crc == stored {
				return n, true, nil
			}
		}
	}
	return 0, false, nil
}

// ReadBKHeader reads the header of the BookKeeper log at path (nil fs:
// the operating system's). A header that is not BookKeeper's is an error
// matching ErrCorruption.
func ReadBKHeader(fs vfs.FS, path string) (BKHeader, error) {
	if fs == nil {
		fs = vfs.Default
	}
	f, err := fs.Open(path)
	if err != nil {
		return BKHeader{}, errors.Wrapf(err, "entrylog: opening %s", path)
	}
	defer f.Close()
	h := make([]byte, bkHeaderUsed)
	if err := readFull(f, h, 0); err != nil {
		return BKHeader{}, errors.Wrapf(err, "entrylog: %s: reading the header", path)
	}
	hd, err := decodeBKHeader(h)
	if err != nil {
		return BKHeader{}, errors.Wrapf(err, "entrylog: %s", path)
	}
	return hd, nil
}

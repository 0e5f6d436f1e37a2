package rocksdb

import (
	"encoding/binary"
	"io"

	"github.com/bookie-index/bookie-index/lsm/internal/crc"
	"github.com/cockroachdb/errors"
)

// The log format of RocksDB's WAL and MANIFEST (db/log_format.h), inherited
// from LevelDB: the file is a sequence of 32 KiB blocks; a block holds
// physical records, each a header and a fragment of a logical record. The
// header is checksum (4, masked CRC-32C of type and payload), length (2),
// type (1); the recyclable types add the log number (4), which is covered by
// the checksum, so that a reused file's old records are recognized. A block
// tail too short for a header is zero padding.
const (
	logBlockSize            = 32 * 1024
	logHeaderSize           = 7
	logRecyclableHeaderSize = 11
)

// Physical record types.
const (
	recZero           = 0
	recFull           = 1
	recFirst          = 2
	recMiddle         = 3
	recLast           = 4
	recRecyclableFull = 5
	recRecyclableLast = 8
	recSetCompression = 9
	recTimestampSize  = 10
	recRecyclableTS   = 11
	// recSafeIgnoreMask marks record types of newer releases that a reader
	// may skip (such as the predecessor-WAL records of RocksDB 9).
	recSafeIgnoreMask = 1 << 7
)

// logReader reads the logical records of one WAL or MANIFEST file.
//
// A crash can leave the last record torn: the file ends inside it, or its
// last fragment fails its checksum and reaches the end of the file. That
// ends the log like a clean end, as RocksDB's point-in-time recovery does.
// Damage anywhere else is an error naming the file and offset: a migration
// must not silently lose the records after it.
type logReader struct {
	name   string
	f      io.ReaderAt
	size   int64
	logNum uint64 // the file's number, for recyclable records

	block      []byte // the current block
	blockOff   int64  // file offset of block
	pos        int    // read position in block
	rec        []byte // the logical record being assembled
	recOff     int64  // file offset of its first fragment
	recyclable bool   // the file's records have recyclable headers
	eof        bool
	torn       int64 // offset of a torn last record, or -1
}

func newLogReader(name string, f io.ReaderAt, size int64, logNum uint64) *logReader {
	return &logReader{name: name, f: f, size: size, logNum: logNum, blockOff: -logBlockSize, torn: -1}
}

// next returns the next logical record and the file offset of its first
// physical record, or io.EOF. The record is valid until the next call.
func (r *logReader) next() ([]byte, int64, error) {
	r.rec = r.rec[:0]
	inRecord := false
	for {
		typ, frag, off, err := r.nextPhysical()
		if err != nil {
			if err == io.EOF && inRecord && r.torn < 0 {
				r.torn = r.recOff // the file ends inside a fragmented record
			}
			return nil, 0, err
		}
		if typ == recRecyclableTS || typ == recTimestampSize {
			return nil, 0, unsupportedf("%s: offset %d: user-defined timestamp record", r.name, off)
		}
		if typ == recSetCompression {
			return nil, 0, unsupportedf("%s: offset %d: compressed WAL (wal_compression)", r.name, off)
		}
		if typ >= recRecyclableFull && typ <= recRecyclableLast {
			typ -= recRecyclableFull - recFull
		}
		if typ&recSafeIgnoreMask != 0 {
			continue
		}
		switch typ {
		case recFull:
			if inRecord {
				return nil, 0, corruptf("%s: offset %d: full record inside a fragmented record started at %d", r.name, off, r.recOff)
			}
			return frag, off, nil
		case recFirst:
			if inRecord {
				return nil, 0, corruptf("%s: offset %d: first fragment inside a fragmented record started at %d", r.name, off, r.recOff)
			}
			inRecord = true
			r.recOff = off
			r.rec = append(r.rec, frag...)
		case recMiddle, recLast:
			if !inRecord {
				return nil, 0, corruptf("%s: offset %d: fragment (type %d) without a first fragment", r.name, off, typ)
			}
			r.rec = append(r.rec, frag...)
			if typ == recLast {
				return r.rec, r.recOff, nil
			}
		default:
			return nil, 0, corruptf("%s: offset %d: unknown record type %d", r.name, off, typ)
		}
	}
}

// nextPhysical returns the next physical record's type and payload.
func (r *logReader) nextPhysical() (byte, []byte, int64, error) {
	for {
		if r.eof {
			return 0, nil, 0, io.EOF
		}
		if len(r.block)-r.pos < logHeaderSize {
			if err := r.readBlock(); err != nil {
				return 0, nil, 0, err
			}
			continue
		}
		off := r.blockOff + int64(r.pos)
		h := r.block[r.pos:]
		typ := h[6]
		length := int(binary.LittleEndian.Uint16(h[4:6]))
		hdr := logHeaderSize
		if typ >= recRecyclableFull && typ <= recRecyclableLast || typ == recRecyclableTS {
			hdr = logRecyclableHeaderSize
			r.recyclable = true
		} else if typ&recSafeIgnoreMask != 0 && r.recyclable {
			// An ignorable record: its header is the file's kind.
			hdr = logRecyclableHeaderSize
		}
		if typ == recZero && length == 0 {
			if len(h) < logRecyclableHeaderSize {
				// The zero padding of a block tail too short for a
				// recyclable header.
				r.pos = len(r.block)
				continue
			}
			// Preallocated, never written space: the end of the log.
			r.eof = true
			continue
		}
		if len(h) < hdr+length {
			if r.blockOff+int64(len(r.block)) >= r.size {
				// The record runs past the end of the file: torn, unless a
				// valid record follows, in which case its length is damaged.
				if q, ok := r.validRecordAfter(r.pos + logHeaderSize); ok {
					return 0, nil, 0, corruptf("%s: offset %d: record length %d runs past the end of the file, but a valid record follows at offset %d", r.name, off, length, r.blockOff+int64(q))
				}
				r.eof, r.torn = true, off // torn at the end of the file
				continue
			}
			return 0, nil, 0, corruptf("%s: offset %d: record length %d exceeds its block", r.name, off, length)
		}
		want := crc.Unmask(binary.LittleEndian.Uint32(h[0:4]))
		got := crc.Extend(0, h[6:hdr+length])
		if got != want {
			if r.blockOff+int64(r.pos+hdr+length) >= r.size {
				r.eof, r.torn = true, off // torn last record
				continue
			}
			return 0, nil, 0, corruptf("%s: offset %d: record checksum mismatch", r.name, off)
		}
		if hdr == logRecyclableHeaderSize {
			if uint64(binary.LittleEndian.Uint32(h[7:11])) != r.logNum&0xffffffff {
				// A record left by the file's previous use: the end of the log.
				r.eof = true
				continue
			}
		}
		r.pos += hdr + length
		return typ, h[hdr : hdr+length], off, nil
	}
}

// validRecordAfter reports whether a physical record with a valid checksum
// (and, in a recyclable log, this file's number) starts at or after block
// position from: it tells damage from a torn write, after which nothing
// valid is written.
func (r *logReader) validRecordAfter(from int) (int, bool) {
	b := r.block
	for q := from; q+logHeaderSize <= len(b); q++ {
		typ := b[q+6]
		hdr := logHeaderSize
		switch {
		case typ >= recFull && typ <= recLast:
		case typ >= recRecyclableFull && typ <= recRecyclableLast:
			hdr = logRecyclableHeaderSize
		default:
			continue
		}
		n := int(binary.LittleEndian.Uint16(b[q+4:]))
		if q+hdr+n > len(b) {
			continue
		}
		if hdr == logRecyclableHeaderSize && uint64(binary.LittleEndian.Uint32(b[q+7:])) != r.logNum&0xffffffff {
			continue
		}
		if crc.Unmask(binary.LittleEndian.Uint32(b[q:])) == crc.Extend(0, b[q+6:q+hdr+n]) {
			return q, true
		}
	}
	return 0, false
}

func (r *logReader) readBlock() error {
	r.blockOff += logBlockSize
	if r.blockOff >= r.size {
		r.eof = true
		return nil
	}
	n := int64(logBlockSize)
	if r.size-r.blockOff < n {
		n = r.size - r.blockOff
	}
	if cap(r.block) < logBlockSize {
		r.block = make([]byte, logBlockSize)
	}
	r.block = r.block[:n]
	r.pos = 0
	if _, err := r.f.ReadAt(r.block, r.blockOff); err != nil && !(errors.Is(err, io.EOF)) {
		return errors.Wrapf(err, "rocksdb: %s: read at %d", r.name, r.blockOff)
	}
	return nil
}

package journal

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// MaxPayloadSize is the largest entry payload a journal record may carry
// (the storage's limit, 256 MiB): the writer refuses larger adds, and the
// reader calls a longer record malformed rather than allocating for it.
const MaxPayloadSize = 256 << 20

// maxRecordRead bounds a record's length as the reader accepts it.
const maxRecordRead = recordIDsSize + 4 + MaxPayloadSize

// readAhead is how much of a file the reader reads at once.
const readAhead = 64 << 10

// stopKind says why a file's records end.
type stopKind uint8

const (
	// stopEOF: the file ends exactly where a record would start.
	stopEOF stopKind = iota
	// stopZeroLength: a zero length field, where upstream's pre-allocated
	// zeros begin (upstream stops there too).
	stopZeroLength
	// stopCut: a length field, or the record it announces, runs past the
	// end of the file (upstream stops there too).
	stopCut
	// stopMalformed: bytes no writer produces: a negative length that is
	// not a padding record (or one in a file older than V5), a record too
	// short for its ids or longer than the reader accepts, a meta-entry
	// that does not decode or that its version cannot hold. Upstream
	// refuses to start on the first kinds and fails on the others.
	stopMalformed
)

// stop describes where and why a file's records end.
type stop struct {
	kind   stopKind
	offset int64
	detail string
}

func (s stop) String() string {
	switch s.kind {
	case stopEOF:
		return fmt.Sprintf("the file ends at offset %d", s.offset)
	case stopZeroLength:
		return fmt.Sprintf("a zero record length at offset %d", s.offset)
	case stopCut:
		return fmt.Sprintf("%s at offset %d runs past the end of the file", s.detail, s.offset)
	}
	return fmt.Sprintf("%s at offset %d", s.detail, s.offset)
}

// fileReader reads the records of one journal file in order, through a
// read-ahead window (one ReadAt per 64 KiB, not per record).
type fileReader struct {
	f       vfs.File
	path    string
	id      int64
	size    int64
	version int
	pos     int64 // the next record's position

	win      []byte // bytes [winStart, winStart+len(win)) of the file
	winStart int64
	buf      []byte // the window's backing array, reused
}

// openFileReader opens journal file path (id from its name) and reads its
// version. A header that names an unknown version is an error, as upstream.
func openFileReader(fs vfs.FS, path string, id int64) (*fileReader, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "journal: opening %s", path)
	}
	r := &fileReader{f: f, path: path, id: id}
	if r.size, err = f.Size(); err != nil {
		_ = f.Close()
		return nil, errors.Wrapf(err, "journal: %s", path)
	}
	first, err := r.bytesAt(0, int(min(r.size, VersionHeaderSize)))
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if r.version, err = decodeVersion(first); err != nil {
		_ = f.Close()
		return nil, errors.Wrapf(err, "journal: %s: the header", path)
	}
	r.pos = HeaderSize(r.version)
	return r, nil
}

func (r *fileReader) close() error { return r.f.Close() }

// seek makes the next record the one at off; an offset inside the header
// (only a damaged mark has one) reads from the first record.
func (r *fileReader) seek(off int64) {
	r.pos = max(off, HeaderSize(r.version))
}

// bytesAt returns the n bytes at off, which the caller has checked lie
// within the file. The slice is valid until the next call.
func (r *fileReader) bytesAt(off int64, n int) ([]byte, error) {
	if off >= r.winStart && off+int64(n) <= r.winStart+int64(len(r.win)) {
		return r.win[off-r.winStart : off-r.winStart+int64(n)], nil
	}
	want := int(min(max(int64(n), readAhead), r.size-off))
	if cap(r.buf) < want {
		r.buf = make([]byte, want)
	}
	b := r.buf[:want]
	if got, err := r.f.ReadAt(b, off); got < want {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, errors.Wrapf(err, "journal: %s: reading %d bytes at offset %d", r.path, want, off)
	}
	r.win, r.winStart = b, off
	return b[:n], nil
}

// next reads the record at the reader's position into rec and advances
// past it (and past any padding records before it). At the end of the
// records it returns the stop instead. An error is a failed read.
func (r *fileReader) next(rec *Record) (*stop, error) {
	for {
		off := r.pos
		if off >= r.size {
			return &stop{kind: stopEOF, offset: off}, nil
		}
		if r.size-off < 4 {
			return &stop{kind: stopCut, offset: off, detail: "a record length"}, nil
		}
		b, err := r.bytesAt(off, 4)
		if err != nil {
			return nil, err
		}
		n := int32(binary.BigEndian.Uint32(b))
		switch {
		case n == 0:
			return &stop{kind: stopZeroLength, offset: off}, nil
		case n == paddingMask && r.version >= V5:
			if r.size-off < paddingHeaderSize {
				return &stop{kind: stopCut, offset: off, detail: "a padding record's length"}, nil
			}
			if b, err = r.bytesAt(off+4, 4); err != nil {
				return nil, err
			}
			pad := int32(binary.BigEndian.Uint32(b))
			if pad < 0 {
				return &stop{kind: stopMalformed, offset: off, detail: fmt.Sprintf("a padding record of negative length %d", pad)}, nil
			}
			if int64(pad) > r.size-off-paddingHeaderSize {
				return &stop{kind: stopCut, offset: off, detail: fmt.Sprintf("a padding record of %d bytes", pad)}, nil
			}
			r.pos = off + paddingHeaderSize + int64(pad)
			continue
		case n < 0:
			return &stop{kind: stopMalformed, offset: off, detail: fmt.Sprintf("a negative record length %d (0x%08x) in a version-%d journal", n, uint32(n), r.version)}, nil
		case int64(n) > r.size-off-4:
			// Upstream stops at a record the file does not hold, however
			// long it says it is.
			return &stop{kind: stopCut, offset: off, detail: fmt.Sprintf("a %d-byte record", n)}, nil
		case n > maxRecordRead:
			return &stop{kind: stopMalformed, offset: off, detail: fmt.Sprintf("a record length %d, above the largest accepted (%d)", n, maxRecordRead)}, nil
		}
		body, err := r.bytesAt(off+4, int(n))
		if err != nil {
			return nil, err
		}
		if derr := decodeRecord(body, r.version, rec); derr != nil {
			return &stop{kind: stopMalformed, offset: off, detail: derr.Error()}, nil
		}
		rec.Version = r.version
		rec.Pos = LogMark{FileID: r.id, Offset: off}
		rec.End = LogMark{FileID: r.id, Offset: off + 4 + int64(n)}
		r.pos = rec.End.Offset
		return nil, nil
	}
}

// zerosFrom reports whether every byte of the file from off on is zero
// (upstream's pre-allocated space, never written).
func (r *fileReader) zerosFrom(off int64) (bool, error) {
	for off < r.size {
		n := int(min(r.size-off, readAhead))
		b, err := r.bytesAt(off, n)
		if err != nil {
			return false, err
		}
		for _, c := range b {
			if c != 0 {
				return false, nil
			}
		}
		off += int64(n)
	}
	return true, nil
}

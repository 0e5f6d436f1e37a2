package record

import (
	"encoding/binary"
	"io"

	"github.com/bookie-index/bookie-index/lsm/internal/crc"
	"github.com/cockroachdb/errors"
)

// SyncedMarkSize is the size of one mark of a synced-length file: the
// length (8 bytes, little-endian) and the masked CRC-32C of those 8 bytes
// (4 bytes). The format is persisted: do not change it.
const SyncedMarkSize = 12

// SyncedLengthWriter appends marks to the synced-length file of a log: after
// every successful Sync of the log, the log's writer appends the length the
// Sync covered. A mark is written with one small append and no fsync of its
// own, so it survives a process crash but maybe not a power loss; a log's
// reader trusts it only as a lower bound of what was synced (see
// ReadSyncedLength).
type SyncedLengthWriter struct {
	w   io.Writer
	buf [SyncedMarkSize]byte
}

// NewSyncedLengthWriter returns a writer of marks to w (an empty file).
func NewSyncedLengthWriter(w io.Writer) *SyncedLengthWriter {
	return &SyncedLengthWriter{w: w}
}

// Mark records that the first length bytes of the log are durable. It must
// be called only after a Sync of the log covering them returned success,
// and with non-decreasing lengths.
func (s *SyncedLengthWriter) Mark(length int64) error {
	binary.LittleEndian.PutUint64(s.buf[0:8], uint64(length))
	binary.LittleEndian.PutUint32(s.buf[8:12], crc.Value(s.buf[0:8]))
	n, err := s.w.Write(s.buf[:])
	if err == nil && n < len(s.buf) {
		err = io.ErrShortWrite
	}
	return errors.Wrap(err, "record: writing a synced-length mark")
}

// ReadSyncedLength returns the length of the last mark in the synced-length
// file r of the given size, and ok=false if r holds no complete mark or its
// last complete mark fails its checksum (the file is then no evidence of
// anything). A partial mark after the last complete one is the torn tail
// of an append and is ignored.
//
// Every mark was written after the Sync it records returned, so the length
// never exceeds what is durable in the log. After a process crash the last
// mark is the last acknowledged sync (or newer); after a power loss it may
// be older or missing, which makes the log's reader more lenient, never
// stricter than the truth.
func ReadSyncedLength(r io.ReaderAt, size int64) (length int64, ok bool, err error) {
	if size < SyncedMarkSize {
		return 0, false, nil
	}
	var b [SyncedMarkSize]byte
	off := (size/SyncedMarkSize - 1) * SyncedMarkSize
	if n, err := r.ReadAt(b[:], off); n < len(b) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, false, errors.Wrapf(err, "record: reading the synced-length mark at offset %d", off)
	}
	if binary.LittleEndian.Uint32(b[8:12]) != crc.Value(b[0:8]) {
		return 0, false, nil
	}
	length = int64(binary.LittleEndian.Uint64(b[0:8]))
	if length < 0 {
		return 0, false, nil
	}
	return length, true, nil
}

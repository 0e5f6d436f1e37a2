package entrylog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/cockroachdb/errors"
)

// Persisted constants (do not change: existing logs depend on them).
const (
	// HeaderSize is the size of a log's header; the first record's
	// size field starts here.
	HeaderSize = 1024
	// headerMagic opens every log.
	headerMagic = "BIEL"
	// formatVersion is the header's version field.
	formatVersion = 1
	// headerUsed is the part of the header with content; the rest is
	// zero.
	headerUsed = 20
	// SizeFieldSize is the size of a record's size field, which comes
	// before the position a location names.
	SizeFieldSize = 4
	// recordHeaderSize is what follows the size field before the
	// payload: ledger id, entry id, CRC.
	recordHeaderSize = 20
	// RecordOverhead is the bytes a record adds to its payload.
	RecordOverhead = SizeFieldSize + recordHeaderSize
)

// Limits.
const (
	// MaxLogSizeLimit is the largest LogSizeLimit, upstream's 1 GiB: with
	// it every offset fits the 32 bits a location gives it.
	MaxLogSizeLimit = 1 << 30
	// MaxPayloadSize is the largest payload of one record.
	MaxPayloadSize = 256 << 20
	// MaxLogID is the largest log id: a location must stay a positive
	// int64.
	MaxLogID = 1<<31 - 1
)

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and
// arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors. Errors of this package wrap these sentinels (errors.Wrapf), so
// that both the standard library's errors.Is and cockroachdb's match them.
var (
	// ErrCorruption: bytes in a log that do not decode (a bad header, a
	// record size out of range, a checksum mismatch).
	ErrCorruption = errors.New("entry log corruption")
	// ErrBadLocation: a location that cannot name a record (offset inside
	// the header, past the readable end of its log, a log that does not
	// exist), or names a record of another entry.
	ErrBadLocation = errors.New("bad entry location")
	// ErrClosed: a call on a closed Logger.
	ErrClosed = errors.New("entry log closed")
	// ErrInvalidArgument: a bad argument (negative ids, a payload too
	// large). It is entrylocation.ErrInvalidArgument, so that the
	// storage's ErrInvalidArgument matches the logs' too.
	ErrInvalidArgument = entrylocation.ErrInvalidArgument
)

// MakeLocation returns the location of the record whose ledger id starts
// at offset in log logID.
func MakeLocation(logID, offset int64) int64 { return logID<<32 | offset }

// LocationLogID returns the log id of a location.
func LocationLogID(location int64) int64 { return int64(uint64(location) >> 32) }

// LocationOffset returns the offset of a location in its log.
func LocationOffset(location int64) int64 { return location & 0xffffffff }

// FormatLocation prints a location as "(log 0x1f, offset 1028)".
func FormatLocation(location int64) string {
	return fmt.Sprintf("(log %#x, offset %d)", LocationLogID(location), LocationOffset(location))
}

// LogFileName returns the file name of log id: lower-case hexadecimal, as
// upstream ("1f.log").
func LogFileName(id int64) string { return strconv.FormatInt(id, 16) + ".log" }

// ParseLogFileName returns the id of a log file name, and false for a name
// that is not a log's.
func ParseLogFileName(name string) (int64, bool) {
	hex, ok := strings.CutSuffix(name, ".log")
	if !ok || hex == "" || len(hex) > 8 || strings.ToLower(hex) != hex {
		return 0, false
	}
	id, err := strconv.ParseInt(hex, 16, 64)
	if err != nil || id < 0 || id > MaxLogID {
		return 0, false
	}
	return id, true
}

// encodeHeader returns the header of log id.
func encodeHeader(id int64) []byte {
	h := make([]byte, HeaderSize)
	copy(h, headerMagic)
	binary.BigEndian.PutUint32(h[4:], formatVersion)
	binary.BigEndian.PutUint64(h[8:], uint64(id))
	binary.BigEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli))
	return h
}

// decodeHeader checks a header and returns its log id.
func decodeHeader(h []byte) (int64, error) {
	if len(h) < headerUsed {
		return 0, errors.Wrapf(ErrCorruption, "header of %d bytes, want %d", len(h), HeaderSize)
	}
	if string(h[:4]) != headerMagic {
		return 0, errors.Wrapf(ErrCorruption, "bad magic %q, want %q (not an entry log of bookie-index)", h[:4], headerMagic)
	}
	if want, got := crc32.Checksum(h[:16], castagnoli), binary.BigEndian.Uint32(h[16:]); want != got {
		return 0, errors.Wrapf(ErrCorruption, "header checksum %#08x, want %#08x", got, want)
	}
	if v := binary.BigEndian.Uint32(h[4:]); v != formatVersion {
		return 0, errors.Wrapf(ErrCorruption, "unknown format version %d (this build reads %d)", v, formatVersion)
	}
	id := int64(binary.BigEndian.Uint64(h[8:]))
	if id < 0 || id > MaxLogID {
		return 0, errors.Wrapf(ErrCorruption, "log id %d out of range", id)
	}
	return id, nil
}

// appendRecord appends the record of (ledgerID, entryID, payload) to dst.
func appendRecord(dst []byte, ledgerID, entryID int64, payload []byte) []byte {
	h := recordHead(ledgerID, entryID, payload)
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// recordHead returns the bytes of the record of (ledgerID, entryID,
// payload) that come before the payload.
func recordHead(ledgerID, entryID int64, payload []byte) [RecordOverhead]byte {
	var h [RecordOverhead]byte
	binary.BigEndian.PutUint32(h[0:], uint32(recordHeaderSize+len(payload)))
	binary.BigEndian.PutUint64(h[4:], uint64(ledgerID))
	binary.BigEndian.PutUint64(h[12:], uint64(entryID))
	crc := crc32.Update(crc32.Checksum(h[:20], castagnoli), castagnoli, payload)
	binary.BigEndian.PutUint32(h[20:], crc)
	return h
}

// recordHeader is a decoded record header: the size field and what
// follows it up to the payload.
type recordHeader struct {
	size     uint32 // bytes after the size field
	ledgerID int64
	entryID  int64
	crc      uint32
}

// payloadSize returns the size of the record's payload.
func (h *recordHeader) payloadSize() int { return int(h.size) - recordHeaderSize }

// decodeRecordHeader decodes the RecordOverhead bytes at the start of a
// record, checking the size field's range (not the checksum, which needs
// the payload).
func decodeRecordHeader(b []byte) (recordHeader, error) {
	h := recordHeader{
		size:     binary.BigEndian.Uint32(b[0:]),
		ledgerID: int64(binary.BigEndian.Uint64(b[4:])),
		entryID:  int64(binary.BigEndian.Uint64(b[12:])),
		crc:      binary.BigEndian.Uint32(b[20:]),
	}
	if h.size < recordHeaderSize || h.size > recordHeaderSize+MaxPayloadSize {
		return h, errors.Wrapf(ErrCorruption, "record size %d out of range [%d, %d]", h.size, recordHeaderSize, recordHeaderSize+MaxPayloadSize)
	}
	return h, nil
}

// checkRecord verifies a record's checksum; head is its RecordOverhead
// bytes.
func checkRecord(head []byte, h *recordHeader, payload []byte) error {
	crc := crc32.Update(crc32.Checksum(head[:20], castagnoli), castagnoli, payload)
	if crc != h.crc {
		return errors.Wrapf(ErrCorruption, "record checksum %#08x, want %#08x", h.crc, crc)
	}
	return nil
}

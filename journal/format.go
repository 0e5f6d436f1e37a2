package journal

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// The journal's on-disk format is BookKeeper's (docs/format.md, "Journal").
// All integers are big-endian.

// Format versions of a journal file. Upstream reads V1 to V6 and writes V6
// by default (journalFormatVersionToWrite, at least V4).
const (
	// V1 files have no header: records start at offset 0.
	V1 = 1
	// V2 adds the 8-byte header (magic, version).
	V2 = 2
	// V3 adds the master-key meta-entry.
	V3 = 3
	// V4 adds the fence meta-entry.
	V4 = 4
	// V5 pads the header to 512 bytes and ends every flushed batch with a
	// padding record up to journalAlignmentSize.
	V5 = 5
	// V6 adds the explicit-LAC meta-entry.
	V6 = 6

	// MinVersion and MaxVersion bound the versions a reader accepts.
	MinVersion = V1
	MaxVersion = V6
	// MinWriteVersion is the oldest version upstream (and this package)
	// writes.
	MinWriteVersion = V4
	// DefaultWriteVersion is upstream's default journalFormatVersionToWrite.
	DefaultWriteVersion = V6
)

// Header sizes.
const (
	// VersionHeaderSize is the magic and the version (V2 to V4 headers).
	VersionHeaderSize = 8
	// SectorHeaderSize is the header of V5 and later: the magic, the
	// version and zeros up to one 512-byte sector.
	SectorHeaderSize = 512
)

// magic opens every journal file from V2 on.
var magic = []byte("BKLG")

// Meta-entry ids: a record whose entry id is one of these is not an entry
// but a change of a ledger's state (upstream's BookieImpl.METAENTRY_ID_*).
const (
	// MetaEntryMasterKey records a ledger's master key (V3 and later).
	MetaEntryMasterKey int64 = -0x1000
	// MetaEntryFence records that a ledger was fenced (V4 and later).
	MetaEntryFence int64 = -0x2000
	// MetaEntryForceLedger is never written: a force-ledger request only
	// waits, in the journal's queue, for the fsync that covers the adds
	// queued before it.
	MetaEntryForceLedger int64 = -0x4000
	// MetaEntryExplicitLAC records a ledger's explicit last-add-confirmed
	// (V6 and later).
	MetaEntryExplicitLAC int64 = -0x8000
)

// paddingMask is the length field that opens a padding record (V5 and
// later): -0x100, bytes ff ff ff 00.
const paddingMask int32 = -0x100

// paddingMaskBits is paddingMask as the bits written.
const paddingMaskBits uint32 = 0xffffff00

// recordIDsSize is the ledger id and the entry id that open every record.
const recordIDsSize = 16

// MaxRecordSize is the largest record the length field can describe.
const MaxRecordSize = 1<<31 - 1

// currentDir is the subdirectory of a journal directory that holds its
// files (upstream's "current").
const currentDir = "current"

// CurrentDir returns the directory that holds a journal directory's files.
func CurrentDir(journalDir string) string { return filepath.Join(journalDir, currentDir) }

// FileName returns the name of journal file id: its id in lower-case
// hexadecimal and ".txn", as upstream names it (Long.toHexString).
func FileName(id int64) string { return strconv.FormatUint(uint64(id), 16) + ".txn" }

// ParseFileName returns the id of a journal file name, and ok=false for a
// name that does not end in ".txn". A ".txn" name whose stem is not
// hexadecimal is an error (upstream fails on it too).
func ParseFileName(name string) (id int64, ok bool, err error) {
	stem, found := strings.CutSuffix(name, ".txn")
	if !found {
		return 0, false, nil
	}
	// Upstream takes the text before the first dot.
	stem, _, _ = strings.Cut(stem, ".")
	v, perr := strconv.ParseUint(stem, 16, 64)
	if perr != nil || stem == "" {
		return 0, false, errors.Wrapf(ErrInvalidArgument, "journal: %q is not a journal file name (<hex id>.txn)", name)
	}
	return int64(v), true, nil
}

// HeaderSize returns where the records of a file of the given version
// start.
func HeaderSize(version int) int64 {
	switch {
	case version >= V5:
		return SectorHeaderSize
	case version >= V2:
		return VersionHeaderSize
	}
	return 0
}

// encodeHeader returns the header written at the start of a new file of
// the given version (V4 or later): the magic, the version and, from V5 on,
// zeros up to 512 bytes.
func encodeHeader(version int) []byte {
	h := make([]byte, HeaderSize(version))
	copy(h, magic)
	binary.BigEndian.PutUint32(h[4:8], uint32(version))
	return h
}

// decodeVersion returns the format version of a file from its first bytes
// (up to VersionHeaderSize of them), as upstream reads it: a file shorter
// than 8 bytes, or one that does not start with the magic, is V1. A version
// outside [MinVersion, MaxVersion] is an error.
func decodeVersion(first []byte) (int, error) {
	if len(first) < VersionHeaderSize || !bytes.Equal(first[:4], magic) {
		return V1, nil
	}
	v := int32(binary.BigEndian.Uint32(first[4:8]))
	if v < MinVersion || v > MaxVersion {
		return 0, errors.Wrapf(ErrCorruption, "journal format version %d, expected %d to %d", v, MinVersion, MaxVersion)
	}
	return int(v), nil
}

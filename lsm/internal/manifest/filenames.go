package manifest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// FileKind says what a file in a database directory holds.
type FileKind uint8

// The kinds of files in a database directory. The names they map to are
// persisted (CURRENT names a manifest, the engine finds tables and WALs by
// name): do not change them.
const (
	// FileKindTable is a sorted table: NNNNNN.sst.
	FileKindTable FileKind = iota + 1
	// FileKindLog is a write-ahead log: NNNNNN.log.
	FileKindLog
	// FileKindManifest is a manifest: MANIFEST-NNNNNN.
	FileKindManifest
	// FileKindCurrent is the file naming the live manifest: CURRENT.
	FileKindCurrent
	// FileKindLock is the advisory lock of the directory: LOCK.
	FileKindLock
	// FileKindTemp is a file being written before a rename: NNNNNN.tmp.
	// A temp file found when a database is opened is garbage.
	FileKindTemp
	// FileKindSyncedLength records how many bytes of the WAL or manifest
	// with the same number were synced: NNNNNN.synced. WALs and
	// manifests share one number space, so the number names one log.
	FileKindSyncedLength
)

// String names the kind for messages.
func (k FileKind) String() string {
	switch k {
	case FileKindTable:
		return "table"
	case FileKindLog:
		return "log"
	case FileKindManifest:
		return "manifest"
	case FileKindCurrent:
		return "current"
	case FileKindLock:
		return "lock"
	case FileKindTemp:
		return "temp"
	case FileKindSyncedLength:
		return "synced-length"
	}
	return fmt.Sprintf("FileKind(%d)", uint8(k))
}

// FileName returns the name (without directory) of the file of the given
// kind and number. Numbers are zero-padded to six digits and grow wider past
// 999999. CURRENT and LOCK ignore fileNum.
func FileName(kind FileKind, fileNum uint64) string {
	switch kind {
	case FileKindTable:
		return fmt.Sprintf("%06d.sst", fileNum)
	case FileKindLog:
		return fmt.Sprintf("%06d.log", fileNum)
	case FileKindManifest:
		return fmt.Sprintf("MANIFEST-%06d", fileNum)
	case FileKindCurrent:
		return "CURRENT"
	case FileKindLock:
		return "LOCK"
	case FileKindTemp:
		return fmt.Sprintf("%06d.tmp", fileNum)
	case FileKindSyncedLength:
		return fmt.Sprintf("%06d.synced", fileNum)
	}
	return fmt.Sprintf("unknown-%s-%06d", kind, fileNum)
}

// FilePath returns the path of the file of the given kind and number in dir.
func FilePath(dir string, kind FileKind, fileNum uint64) string {
	return filepath.Join(dir, FileName(kind, fileNum))
}

// ParseFileName recognises the name (not path) of a file of a database
// directory, for deciding which files a listing holds. Only the canonical
// spelling FileName produces is accepted, so "1.sst" or "0000001.sst" are
// not tables; for CURRENT and LOCK fileNum is 0.
func ParseFileName(name string) (kind FileKind, fileNum uint64, ok bool) {
	switch name {
	case "CURRENT":
		return FileKindCurrent, 0, true
	case "LOCK":
		return FileKindLock, 0, true
	}
	var digits string
	if rest, found := strings.CutPrefix(name, "MANIFEST-"); found {
		kind, digits = FileKindManifest, rest
	} else {
		dot := strings.IndexByte(name, '.')
		if dot < 0 {
			return 0, 0, false
		}
		digits = name[:dot]
		switch name[dot:] {
		case ".sst":
			kind = FileKindTable
		case ".log":
			kind = FileKindLog
		case ".tmp":
			kind = FileKindTemp
		case ".synced":
			kind = FileKindSyncedLength
		default:
			return 0, 0, false
		}
	}
	// ParseUint accepts only digits (no sign), and the round trip through
	// FileName rejects non-canonical padding.
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || FileName(kind, n) != name {
		return 0, 0, false
	}
	return kind, n, true
}

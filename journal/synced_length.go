package journal

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"strconv"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// A journal file written by this package has a synced-length file beside
// it, "<hex id>.synced", in the format of the engine's WAL synced-length
// files (docs/format.md, "Synced-length file"): after every successful
// fsync of the journal file, and before any add that fsync covered is
// reported durable, the writer appends one 12-byte mark, the length the
// fsync covered (uint64 little-endian) and the masked CRC-32C of those 8
// bytes. The marks are not fsynced: they survive a process crash, and after
// a power loss they may be stale, which only makes the reader more lenient.
//
// The reader trusts the last mark S as a lower bound of what is durable:
// a file whose records stop below S is damaged (ErrCorruption), one that
// stops at or past S has a torn tail. Upstream ignores the file (it lists
// only names ending in ".txn"); a journal written by upstream has none, and
// its tail is read by upstream's rules alone.

// syncedMarkSize is one mark: length (8 bytes) and masked CRC-32C (4).
const syncedMarkSize = 12

// SyncedFileName returns the name of journal file id's synced-length file.
func SyncedFileName(id int64) string { return strconv.FormatUint(uint64(id), 16) + ".synced" }

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC returns the masked CRC-32C of b (rotated right by 15 bits, plus
// 0xa282ead8), as the engine's logs store it.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, crcTable)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// appendSyncedMark appends the mark for a synced length.
func appendSyncedMark(dst []byte, length int64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(length))
	return binary.LittleEndian.AppendUint32(dst, maskedCRC(dst[len(dst)-8:]))
}

// readSyncedLength returns the last mark of a synced-length file of the
// given size, and ok=false if the file holds no complete mark or its last
// complete mark fails its checksum or is negative (no evidence). A partial
// mark after the last complete one is a torn append and is ignored.
func readSyncedLength(r io.ReaderAt, size int64) (length int64, ok bool, err error) {
	if size < syncedMarkSize {
		return 0, false, nil
	}
	var b [syncedMarkSize]byte
	off := (size/syncedMarkSize - 1) * syncedMarkSize
	if n, rerr := r.ReadAt(b[:], off); n < len(b) {
		if rerr == nil || rerr == io.EOF {
			rerr = io.ErrUnexpectedEOF
		}
		return 0, false, errors.Wrapf(rerr, "reading the synced-length mark at offset %d", off)
	}
	if binary.LittleEndian.Uint32(b[8:12]) != maskedCRC(b[0:8]) {
		return 0, false, nil
	}
	length = int64(binary.LittleEndian.Uint64(b[0:8]))
	if length < 0 {
		return 0, false, nil
	}
	return length, true, nil
}

// readSyncedFile reads the synced-length file at path; ok=false when there
// is no such file or it holds no valid mark.
func readSyncedFile(fs vfs.FS, path string) (length int64, ok bool, err error) {
	f, err := fs.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, false, nil
		}
		return 0, false, errors.Wrapf(err, "journal: opening %s", path)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, false, errors.Wrapf(err, "journal: %s", path)
	}
	length, ok, err = readSyncedLength(f, size)
	return length, ok, errors.Wrapf(err, "journal: %s", path)
}

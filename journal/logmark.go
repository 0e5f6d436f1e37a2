package journal

import (
	"cmp"
	"encoding/binary"
	"fmt"
)

// LogMark is a position in a journal: a file id and a byte offset in that
// file (upstream's LogMark). Marks order by file id, then offset. The zero
// mark is "before every journal file".
type LogMark struct {
	FileID int64
	Offset int64
}

// Compare returns -1, 0 or +1 as m is before, at or after o.
func (m LogMark) Compare(o LogMark) int {
	if c := cmp.Compare(m.FileID, o.FileID); c != 0 {
		return c
	}
	return cmp.Compare(m.Offset, o.Offset)
}

// Less reports whether m is before o.
func (m LogMark) Less(o LogMark) bool { return m.Compare(o) < 0 }

// String names the file and the offset: "1a2b.txn@4096".
func (m LogMark) String() string { return fmt.Sprintf("%s@%d", FileName(m.FileID), m.Offset) }

// logMarkSize is a mark's encoding: the file id and the offset, each a
// big-endian 64-bit word, as in upstream's lastMark file.
const logMarkSize = 16

// appendLogMark appends m's 16-byte encoding.
func appendLogMark(dst []byte, m LogMark) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.FileID))
	return binary.BigEndian.AppendUint64(dst, uint64(m.Offset))
}

// decodeLogMark decodes the first 16 bytes of b.
func decodeLogMark(b []byte) LogMark {
	return LogMark{
		FileID: int64(binary.BigEndian.Uint64(b[0:8])),
		Offset: int64(binary.BigEndian.Uint64(b[8:16])),
	}
}

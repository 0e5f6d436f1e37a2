package sstable

import (
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/crc"
)

// Persisted constants: do not change.
const (
	// FormatVersion is written in every footer; readers reject others.
	FormatVersion = 1
	// tableMagic ends every table: "bkidxsst" little-endian.
	tableMagic = 0x7473737864696b62
	// footerSize is the fixed size of the footer.
	footerSize = 88
	// blockTrailerSize is the compression byte plus the masked CRC-32C.
	blockTrailerSize = 5
	// checksumCRC32C is the only checksum type.
	checksumCRC32C = 1

	flagPartitionedIndex  = 1 << 0
	flagPartitionedFilter = 1 << 1
	flagNoCommonPrefix    = 1 << 2 // informational: readers read both forms
)

// maxBlockSize bounds the decoded size of one block, so that a damaged
// length cannot make a reader allocate without limit.
const maxBlockSize = 1 << 30

// BlockHandle locates a block: its offset in the file and its stored length
// (without the 5-byte trailer). Encoded as two uvarints in index entries.
type BlockHandle struct {
	Offset, Length uint64
}

// AppendTo appends the handle's uvarint encoding to dst.
func (h BlockHandle) AppendTo(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, h.Offset)
	return binary.AppendUvarint(dst, h.Length)
}

// DecodeBlockHandle decodes a handle from an index entry's value.
func DecodeBlockHandle(b []byte) (BlockHandle, error) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return BlockHandle{}, base.CorruptionErrorf("sstable: malformed block handle")
	}
	length, m := binary.Uvarint(b[n:])
	if m <= 0 || n+m != len(b) {
		return BlockHandle{}, base.CorruptionErrorf("sstable: malformed block handle")
	}
	return BlockHandle{Offset: off, Length: length}, nil
}

// footer is the fixed-size end of a table:
//
//	offset  size
//	 0      16   index handle: top-level index (partitioned) or the index (full), u64 LE offset + u64 LE length
//	16      16   filter handle: top-level filter index (partitioned) or the filter (full); zero = no filter
//	32      16   range-deletion block handle
//	48      16   properties block handle
//	64       4   flags u32 LE: 1 partitioned index, 2 partitioned filter, 4 common prefix off
//	68       4   format version u32 LE
//	72       1   checksum type (1 = CRC-32C)
//	73       3   zero
//	76       4   masked CRC-32C of bytes [0, 76)
//	80       8   magic "bkidxsst"
type footer struct {
	index, filter, rangeDel, properties BlockHandle
	flags                               uint32
	version                             uint32
}

func (f footer) encode() []byte {
	b := make([]byte, footerSize)
	for i, h := range []BlockHandle{f.index, f.filter, f.rangeDel, f.properties} {
		binary.LittleEndian.PutUint64(b[16*i:], h.Offset)
		binary.LittleEndian.PutUint64(b[16*i+8:], h.Length)
	}
	binary.LittleEndian.PutUint32(b[64:], f.flags)
	binary.LittleEndian.PutUint32(b[68:], f.version)
	b[72] = checksumCRC32C
	binary.LittleEndian.PutUint32(b[76:], crc.Value(b[:76]))
	binary.LittleEndian.PutUint64(b[80:], tableMagic)
	return b
}

func decodeFooter(b []byte, fileSize uint64) (footer, error) {
	var f footer
	if len(b) != footerSize {
		return f, base.CorruptionErrorf("sstable: file of %d bytes is too short for a %d-byte footer", fileSize, footerSize)
	}
	if binary.LittleEndian.Uint64(b[80:]) != tableMagic {
		return f, base.CorruptionErrorf("sstable: bad magic number: not a bookie-index table")
	}
	if got, want := binary.LittleEndian.Uint32(b[76:]), crc.Value(b[:76]); got != want {
		return f, base.CorruptionErrorf("sstable: footer checksum mismatch (stored %#x, computed %#x)", got, want)
	}
	f.version = binary.LittleEndian.Uint32(b[68:])
	if f.version != FormatVersion {
		return f, base.CorruptionErrorf("sstable: unsupported format version %d (this build reads %d)", f.version, FormatVersion)
	}
	if b[72] != checksumCRC32C {
		return f, base.CorruptionErrorf("sstable: unsupported checksum type %d", b[72])
	}
	f.flags = binary.LittleEndian.Uint32(b[64:])
	hs := []*BlockHandle{&f.index, &f.filter, &f.rangeDel, &f.properties}
	for i, h := range hs {
		h.Offset = binary.LittleEndian.Uint64(b[16*i:])
		h.Length = binary.LittleEndian.Uint64(b[16*i+8:])
		if h.Length > 0 && (h.Offset > fileSize || h.Length+blockTrailerSize > fileSize-h.Offset) {
			return f, base.CorruptionErrorf("sstable: footer handle %d (offset %d, length %d) lies outside the %d-byte file", i, h.Offset, h.Length, fileSize)
		}
	}
	return f, nil
}

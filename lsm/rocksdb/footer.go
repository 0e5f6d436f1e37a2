package rocksdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Table magic numbers (table/block_based/block_based_table_builder.cc).
const (
	blockBasedMagic       = 0x88e241b785f4cff7
	legacyBlockBasedMagic = 0xdb4775248b80fb57
	footerSize            = 53 // format_version >= 1
	legacyFooterSize      = 48 // format_version 0
	blockTrailerSize      = 5  // compression type (1) + checksum (4)
	maxBlockHandleLen     = 20 // two varint64s

	// maxFormatVersion is the newest block-based format_version read (7:
	// written by RocksDB 10.4 and later, the default from 11.0; 6 is read
	// from RocksDB 8.6 on and the default from 9.0).
	maxFormatVersion = 7
)

// footerExtendedMagic opens the handle area of a format_version >= 6 footer
// in place of the block handles (which it would decode as invalid ones).
var footerExtendedMagic = []byte{0x3e, 0x00, 0x7a, 0x00}

// blockHandle locates a block: its offset and its size without the trailer.
type blockHandle struct {
	offset, size uint64
}

func (h blockHandle) String() string { return fmt.Sprintf("block %d+%d", h.offset, h.size) }

func decodeHandle(d *decoder) blockHandle {
	return blockHandle{offset: d.uvarint64(), size: d.uvarint64()}
}

// footer is a table's fixed-size tail.
type footer struct {
	checksum      byte
	formatVersion uint32
	metaindex     blockHandle
	// index is the top-level index block. From format_version 6 the footer
	// does not hold it: readMeta takes it from the metaindex.
	index blockHandle
	// baseContext is the base of every stored checksum's context modifier
	// (contextModifier); 0 before format_version 6.
	baseContext uint32
}

// decodeFooter decodes the footer from the last bytes of a table: tail holds
// up to footerSize of them and starts at file offset tailOffset.
//
// Up to format_version 5 the footer is the checksum type (1), the metaindex
// and index handles padded to 40 bytes, format_version (4) and the magic (8);
// the legacy one (format_version 0) has no checksum type (CRC-32C) or version
// and pads to 40. From format_version 6 the 40 bytes are the extended magic
// (4), the footer's own checksum (4, computed with this field zeroed, plus
// the context modifier of the footer's offset), the base context checksum
// (4), the metaindex size (4; the metaindex ends where the footer starts,
// less a block trailer), 16 reserved bytes and 8 that must be zero.
func decodeFooter(name string, tail []byte, tailOffset int64) (footer, error) {
	if len(tail) < legacyFooterSize {
		return footer{}, corruptf("%s: %d bytes is too short for a table footer", name, len(tail))
	}
	magic := binary.LittleEndian.Uint64(tail[len(tail)-8:])
	var f footer
	switch magic {
	case blockBasedMagic:
	case legacyBlockBasedMagic:
		b := tail[len(tail)-legacyFooterSize:]
		f.checksum = checksumCRC32c
		err := f.decodeHandles(name, b[:legacyFooterSize-8])
		return f, err
	default:
		return footer{}, unsupportedf("%s: table magic %#x is not a block-based table", name, magic)
	}
	if len(tail) < footerSize {
		return footer{}, corruptf("%s: %d bytes is too short for a table footer", name, len(tail))
	}
	footerOffset := uint64(tailOffset) + uint64(len(tail)-footerSize)
	b := tail[len(tail)-footerSize:]
	f.checksum = b[0]
	f.formatVersion = binary.LittleEndian.Uint32(b[footerSize-12:])
	where := fmt.Sprintf("%s: footer at offset %d", name, footerOffset)
	if f.formatVersion > maxFormatVersion {
		return footer{}, unsupportedf("%s: format_version %d (0 to %d are read)", where, f.formatVersion, maxFormatVersion)
	}
	if !checksumSupported(f.checksum) {
		return footer{}, unsupportedf("%s: %s (format_version %d)", where, describeChecksum(f.checksum), f.formatVersion)
	}
	if f.formatVersion < 6 {
		err := f.decodeHandles(name, b[1:footerSize-12])
		return f, err
	}
	if !bytes.Equal(b[1:5], footerExtendedMagic) {
		return footer{}, corruptf("%s: format_version %d footer without its extended magic (%x)", where, f.formatVersion, b[1:5])
	}
	stored := binary.LittleEndian.Uint32(b[5:])
	f.baseContext = binary.LittleEndian.Uint32(b[9:])
	metaSize := binary.LittleEndian.Uint32(b[13:])
	if f.baseContext == 0 {
		return footer{}, corruptf("%s: base context checksum is 0", where)
	}
	var zeroed [footerSize]byte
	copy(zeroed[:], b)
	binary.LittleEndian.PutUint32(zeroed[5:], 0)
	if sum := checksumOf(f.checksum, zeroed[:]) + contextModifier(f.baseContext, footerOffset); sum != stored {
		return footer{}, corruptf("%s: footer checksum mismatch, %s (stored %#08x, computed %#08x)", where, describeChecksum(f.checksum), stored, sum)
	}
	if binary.LittleEndian.Uint64(b[33:]) != 0 {
		return footer{}, unsupportedf("%s: format_version %d footer uses a reserved field (a RocksDB feature newer than this reader)", where, f.formatVersion)
	}
	if uint64(metaSize)+blockTrailerSize > footerOffset {
		return footer{}, corruptf("%s: metaindex of %d bytes does not fit before the footer", where, metaSize)
	}
	f.metaindex = blockHandle{offset: footerOffset - blockTrailerSize - uint64(metaSize), size: uint64(metaSize)}
	return f, nil
}

// decodeHandles decodes the metaindex and index handles of a footer before
// format_version 6.
func (f *footer) decodeHandles(name string, b []byte) error {
	d := decoder{b: b}
	f.metaindex = decodeHandle(&d)
	f.index = decodeHandle(&d)
	if !d.ok() {
		return corruptf("%s: footer: bad block handles", name)
	}
	return nil
}

package rocksdb

import (
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
)

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
	index         blockHandle
}

// decodeFooter decodes the footer from the last bytes of a table (tail holds
// up to footerSize of them). The new footer is checksum type (1), metaindex
// handle, index handle, padding to 41 bytes, format_version (4), magic (8);
// the legacy one has no checksum type (CRC-32C) or version (0) and pads to 40.
func decodeFooter(name string, tail []byte) (footer, error) {
	if len(tail) < legacyFooterSize {
		return footer{}, corruptf("%s: %d bytes is too short for a table footer", name, len(tail))
	}
	magic := binary.LittleEndian.Uint64(tail[len(tail)-8:])
	var f footer
	var handles []byte
	switch magic {
	case blockBasedMagic:
		if len(tail) < footerSize {
			return footer{}, corruptf("%s: %d bytes is too short for a table footer", name, len(tail))
		}
		b := tail[len(tail)-footerSize:]
		f.checksum = b[0]
		f.formatVersion = binary.LittleEndian.Uint32(b[footerSize-12:])
		handles = b[1 : footerSize-12]
	case legacyBlockBasedMagic:
		b := tail[len(tail)-legacyFooterSize:]
		f.checksum = checksumCRC32c
		handles = b[:legacyFooterSize-8]
	default:
		return footer{}, unsupportedf("%s: table magic %#x is not a block-based table", name, magic)
	}
	d := decoder{b: handles}
	f.metaindex = decodeHandle(&d)
	f.index = decodeHandle(&d)
	if !d.ok() {
		return footer{}, corruptf("%s: footer: bad block handles", name)
	}
	if f.formatVersion > 5 {
		return footer{}, unsupportedf("%s: format_version %d (2 to 5 are read)", name, f.formatVersion)
	}
	return f, nil
}

package rocksdb

import (
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/crc"
	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/errors"
	"github.com/pierrec/lz4/v4"
)

// Checksum types of a table's footer (include/rocksdb/table.h).
const (
	checksumNone     = 0
	checksumCRC32c   = 1
	checksumXXHash   = 2
	checksumXXHash64 = 3
	checksumXXH3     = 4
)

// Compression types of a block trailer (include/rocksdb/compression_type.h).
const (
	compressionNone   = 0x0
	compressionSnappy = 0x1
	compressionLZ4    = 0x4
	compressionLZ4HC  = 0x5
)

// maxBlockSize bounds a block and its decoded size, so that a corrupt handle
// or size prefix cannot make the reader allocate without limit.
const maxBlockSize = 1 << 30

// readBlock reads the block at h, verifies its trailer's checksum and
// returns its decompressed contents.
func (t *table) readBlock(h blockHandle, what string) ([]byte, error) {
	if h.size > maxBlockSize || h.offset > uint64(t.size) || h.size+blockTrailerSize > uint64(t.size)-h.offset {
		return nil, corruptf("%s: %s %s lies outside the %d-byte file", t.name, what, h, t.size)
	}
	buf := make([]byte, h.size+blockTrailerSize)
	if _, err := t.f.ReadAt(buf, int64(h.offset)); err != nil {
		return nil, errors.Wrapf(err, "rocksdb: %s: read %s %s", t.name, what, h)
	}
	data, trailer := buf[:h.size], buf[h.size:]
	stored := binary.LittleEndian.Uint32(trailer[1:])
	var sum uint32
	switch t.footer.checksum {
	case checksumNone:
		sum = stored
	case checksumCRC32c:
		sum = crc.Mask(crc.Extend(crc.Extend(0, data), trailer[:1]))
	case checksumXXHash:
		sum = xxh32(buf[:h.size+1], nil)
	case checksumXXHash64:
		sum = uint32(xxhash.Sum64(buf[:h.size+1]))
	default:
		return nil, unsupportedf("%s: checksum type %d", t.name, t.footer.checksum)
	}
	if sum != stored {
		return nil, corruptf("%s: %s %s: checksum mismatch (stored %#08x, computed %#08x)", t.name, what, h, stored, sum)
	}
	out, err := decompress(trailer[0], data, t.footer.formatVersion)
	if err != nil {
		return nil, corruptf("%s: %s %s: %s", t.name, what, h, err)
	}
	if out == nil && trailer[0] != compressionNone {
		return nil, unsupportedf("%s: %s %s: compression type %d (none, Snappy and LZ4 are read)", t.name, what, h, trailer[0])
	}
	return out, nil
}

// decompress decodes a block's contents by its compression type, or returns
// nil, nil for a type it does not read. From
// format_version 2 an LZ4 block starts with its decoded size as a varint32;
// before, as a fixed64. Snappy carries its own length.
func decompress(typ byte, data []byte, formatVersion uint32) ([]byte, error) {
	switch typ {
	case compressionNone:
		return data, nil
	case compressionSnappy:
		return snappyDecode(data)
	case compressionLZ4, compressionLZ4HC:
		var n uint64
		if formatVersion >= 2 {
			v, k := binary.Uvarint(data)
			if k <= 0 {
				return nil, errorString("lz4: bad decoded size")
			}
			n, data = v, data[k:]
		} else {
			if len(data) < 8 {
				return nil, errorString("lz4: bad decoded size")
			}
			n, data = binary.LittleEndian.Uint64(data), data[8:]
		}
		if n > maxBlockSize || n > uint64(len(data))*255+16 {
			return nil, errorString("lz4: decoded size too large")
		}
		out := make([]byte, n)
		k, err := lz4.UncompressBlock(data, out)
		if err != nil || uint64(k) != n {
			return nil, errorString("lz4: bad block")
		}
		return out, nil
	default:
		return nil, nil
	}
}

package rocksdb

import (
	"encoding/binary"

	"fmt"

	"github.com/cockroachdb/errors"
	"github.com/pierrec/lz4/v4"
)

// Compression types of a block trailer (include/rocksdb/compression_type.h).
const (
	compressionNone   = 0x0
	compressionSnappy = 0x1
	compressionLZ4    = 0x4
	compressionLZ4HC  = 0x5
)

// compressionName names a block compression type as RocksDB's
// CompressionTypeToString does (and so its rocksdb.compression property
// before format_version 7).
func compressionName(typ byte) string {
	switch typ {
	case compressionNone:
		return "NoCompression"
	case compressionSnappy:
		return "Snappy"
	case 0x2:
		return "Zlib"
	case 0x3:
		return "BZip2"
	case compressionLZ4:
		return "LZ4"
	case compressionLZ4HC:
		return "LZ4HC"
	case 0x6:
		return "Xpress"
	case 0x7:
		return "ZSTD"
	}
	return "unknown"
}

// describeCompression is how errors name a compression type.
func describeCompression(typ byte) string {
	return fmt.Sprintf("compression type %d (%s)", typ, compressionName(typ))
}

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
	// From format_version 6 the stored checksum has the block's context
	// modifier added; it is taken off before comparing, as RocksDB does.
	stored := binary.LittleEndian.Uint32(trailer[1:]) - contextModifier(t.footer.baseContext, h.offset)
	if sum := checksumOf(t.footer.checksum, buf[:h.size+1]); sum != stored {
		return nil, corruptf("%s: %s %s: checksum mismatch, %s (stored %#08x, computed %#08x)", t.name, what, h, describeChecksum(t.footer.checksum), stored, sum)
	}
	out, err := decompress(trailer[0], data, t.footer.formatVersion)
	if err != nil {
		return nil, corruptf("%s: %s %s: %s", t.name, what, h, err)
	}
	if out == nil && trailer[0] != compressionNone {
		return nil, unsupportedf("%s: %s %s: %s (none, Snappy, LZ4 and LZ4HC are read)", t.name, what, h, describeCompression(trailer[0]))
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

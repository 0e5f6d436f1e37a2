package rocksdb

import (
	"fmt"

	"github.com/bookie-index/bookie-index/lsm/internal/crc"
	"github.com/cespare/xxhash/v2"
)

// Checksum types of a table's footer (include/rocksdb/table.h).
const (
	checksumNone     = 0
	checksumCRC32c   = 1
	checksumXXHash   = 2
	checksumXXHash64 = 3
	checksumXXH3     = 4
)

// checksumName names a checksum type as RocksDB's ChecksumType does, without
// its k prefix.
func checksumName(c byte) string {
	switch c {
	case checksumNone:
		return "none"
	case checksumCRC32c:
		return "CRC32c"
	case checksumXXHash:
		return "xxHash"
	case checksumXXHash64:
		return "xxHash64"
	case checksumXXH3:
		return "XXH3"
	}
	return "unknown"
}

// describeChecksum is how errors name a checksum type: its number and name.
func describeChecksum(c byte) string {
	return fmt.Sprintf("checksum type %d (%s)", c, checksumName(c))
}

// checksumSupported reports whether blockChecksum computes type c.
func checksumSupported(c byte) bool { return c <= checksumXXH3 }

// checksumOf is RocksDB's checksum of type c over b (ComputeBuiltinChecksum),
// before any context modifier: a block's contents and its compression type
// byte, or a footer with its checksum field zeroed. Masked CRC-32C, XXH32,
// the low 32 bits of XXH64, or RocksDB's XXH3 form (xxh3BlockChecksum, over
// all but the last byte, which it folds in apart); kNoChecksum is 0. The
// caller checks checksumSupported first.
func checksumOf(c byte, b []byte) uint32 {
	switch c {
	case checksumCRC32c:
		return crc.Mask(crc.Extend(0, b))
	case checksumXXHash:
		return xxh32(b, nil)
	case checksumXXHash64:
		return uint32(xxhash.Sum64(b))
	case checksumXXH3:
		if len(b) == 0 {
			return 0
		}
		return xxh3BlockChecksum(b[:len(b)-1], b[len(b)-1])
	}
	return 0
}

// contextModifier is what format_version 6 and later add to every stored
// checksum (blocks and footer), so that bytes moved within or between files
// fail verification: the file's base context checksum (a random non-zero
// value in its footer) xored with the sum of the halves of the block's file
// offset. It is 0 for older formats (base 0). RocksDB's
// ChecksumModifierForContext.
func contextModifier(base uint32, offset uint64) uint32 {
	if base == 0 {
		return 0
	}
	return base ^ (uint32(offset) + uint32(offset>>32))
}

package sstable

import (
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/pierrec/lz4/v4"
)

// Block compression codes stored in block trailers. Persisted: do not
// change.
const (
	blockTypeNone = 0
	blockTypeLZ4  = 1
)

// compressBlock compresses raw with c (into scratch) and returns the bytes
// and the block type code to store. Compression is skipped (blockTypeNone)
// when it saves less than 12.5%: decompressing costs CPU on every cache
// miss.
//
// An LZ4 block is stored as uvarint(raw length) followed by the LZ4 block.
func compressBlock(lc *lz4.Compressor, c Compression, raw, scratch []byte) ([]byte, byte) {
	if c != CompressionLZ4 || len(raw) == 0 {
		return raw, blockTypeNone
	}
	bound := lz4.CompressBlockBound(len(raw)) + binary.MaxVarintLen64
	if cap(scratch) < bound {
		scratch = make([]byte, bound)
	}
	scratch = scratch[:bound]
	n := binary.PutUvarint(scratch, uint64(len(raw)))
	m, err := lc.CompressBlock(raw, scratch[n:])
	if err != nil || m == 0 || n+m > len(raw)-len(raw)/8 {
		return raw, blockTypeNone
	}
	return scratch[:n+m], blockTypeLZ4
}

// decompressBlock decodes a stored block body.
func decompressBlock(blockType byte, stored []byte) ([]byte, error) {
	switch blockType {
	case blockTypeNone:
		return stored, nil
	case blockTypeLZ4:
		rawLen, n := binary.Uvarint(stored)
		if n <= 0 || rawLen > maxBlockSize {
			return nil, base.CorruptionErrorf("sstable: malformed LZ4 block length")
		}
		raw := make([]byte, rawLen)
		m, err := lz4.UncompressBlock(stored[n:], raw)
		if err != nil || uint64(m) != rawLen {
			return nil, base.CorruptionErrorf("sstable: LZ4 block does not decompress to its %d bytes", rawLen)
		}
		return raw, nil
	}
	return nil, base.CorruptionErrorf("sstable: unknown compression type %d", blockType)
}

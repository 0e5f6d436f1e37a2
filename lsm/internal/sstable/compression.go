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

// decompressBlock decodes a stored block body into a new slice (or
// returns stored itself if it is not compressed).
func decompressBlock(blockType byte, stored []byte) ([]byte, error) {
	if blockType == blockTypeNone {
		return stored, nil
	}
	n, err := decodedLength(blockType, stored)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, n)
	return raw, decompressInto(blockType, stored, raw)
}

// decodedLength returns the length of a stored block body once
// decompressed.
func decodedLength(blockType byte, stored []byte) (int, error) {
	switch blockType {
	case blockTypeNone:
		return len(stored), nil
	case blockTypeLZ4:
		rawLen, n := binary.Uvarint(stored)
		if n <= 0 || rawLen > maxBlockSize {
			return 0, base.CorruptionErrorf("sstable: malformed LZ4 block length")
		}
		return int(rawLen), nil
	}
	return 0, base.CorruptionErrorf("sstable: unknown compression type %d", blockType)
}

// decompressInto decodes a compressed block body into raw, whose length is
// its decodedLength.
func decompressInto(blockType byte, stored, raw []byte) error {
	if blockType != blockTypeLZ4 {
		return base.CorruptionErrorf("sstable: unknown compression type %d", blockType)
	}
	_, n := binary.Uvarint(stored)
	if n <= 0 {
		return base.CorruptionErrorf("sstable: malformed LZ4 block length")
	}
	m, err := lz4.UncompressBlock(stored[n:], raw)
	if err != nil || m != len(raw) {
		return base.CorruptionErrorf("sstable: LZ4 block does not decompress to its %d bytes", len(raw))
	}
	return nil
}

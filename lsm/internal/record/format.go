package record

import (
	"encoding/binary"
	"fmt"

	"github.com/bookie-index/bookie-index/lsm/internal/crc"
)

// Format constants. They are persisted in every WAL and MANIFEST file: do not
// change them.
const (
	// BlockSize is the size of a log block. Chunks never cross a block
	// boundary, so a reader can resynchronise at every multiple of it.
	BlockSize = 32 << 10
	// HeaderSize is the size of a chunk header: checksum (4), length (2),
	// type (1).
	HeaderSize = 7
	// maxChunkPayload is the largest payload a chunk can carry: a chunk that
	// starts at a block boundary and fills the block.
	maxChunkPayload = BlockSize - HeaderSize
)

// chunkType says which part of a record a chunk holds. The values are
// persisted: do not change them.
type chunkType uint8

const (
	// chunkFull holds a whole record.
	chunkFull chunkType = 1
	// chunkFirst holds the first part of a record that continues in later
	// chunks.
	chunkFirst chunkType = 2
	// chunkMiddle holds a part that is neither first nor last.
	chunkMiddle chunkType = 3
	// chunkLast holds the final part of a record.
	chunkLast chunkType = 4
)

// String names the chunk type for error messages.
func (t chunkType) String() string {
	switch t {
	case chunkFull:
		return "full"
	case chunkFirst:
		return "first"
	case chunkMiddle:
		return "middle"
	case chunkLast:
		return "last"
	}
	return "invalid"
}

// maskedChecksum returns the masked CRC-32C of b. Masking means that a CRC
// computed over data that embeds CRCs (a log record holding another log's
// chunk, say) does not degenerate. The mask lives in package crc, shared with
// tables.
func maskedChecksum(b []byte) uint32 { return crc.Value(b) }

// putHeader writes a chunk header into h[:HeaderSize] for a chunk whose type
// byte and payload are typeAndPayload (type first). The type byte directly
// precedes the payload on disk, so one contiguous checksum covers both.
func putHeader(h []byte, typeAndPayload []byte) {
	binary.LittleEndian.PutUint32(h[0:4], maskedChecksum(typeAndPayload))
	binary.LittleEndian.PutUint16(h[4:6], uint16(len(typeAndPayload)-1))
}

// chunkStatus is the verdict on the bytes where a chunk should start.
type chunkStatus uint8

const (
	chunkValid chunkStatus = iota
	// statusShortHeader: fewer than HeaderSize bytes remain.
	statusShortHeader
	// statusZeroed: the header is all zeros (preallocated or unwritten).
	statusZeroed
	// statusBadType: the type byte is not 1..4.
	statusBadType
	// statusBeyondBlock: the length runs past the end of a full block.
	statusBeyondBlock
	// statusTruncated: the length runs past the end of the stream.
	statusTruncated
	// statusBadChecksum: the checksum does not match type and payload.
	statusBadChecksum
)

// checkChunk judges the chunk at the start of b, which runs to the end of the
// block's readable bytes; fullBlock reports whether that end is the real
// block end rather than the end of a short final block. It does not allocate:
// the reader calls it at every byte offset of a damaged tail.
func checkChunk(b []byte, fullBlock bool) chunkStatus {
	if len(b) < HeaderSize {
		return statusShortHeader
	}
	// The type is checked first because it rejects most garbage cheaply.
	if typ := chunkType(b[6]); typ < chunkFull || typ > chunkLast {
		if typ == 0 && b[0]|b[1]|b[2]|b[3]|b[4]|b[5] == 0 {
			return statusZeroed
		}
		return statusBadType
	}
	length := int(binary.LittleEndian.Uint16(b[4:6]))
	if HeaderSize+length > len(b) {
		if fullBlock {
			return statusBeyondBlock
		}
		return statusTruncated
	}
	if binary.LittleEndian.Uint32(b[0:4]) != maskedChecksum(b[HeaderSize-1:HeaderSize+length]) {
		return statusBadChecksum
	}
	return chunkValid
}

// describeChunk explains status for an error message, with the numbers read
// from b (the same bytes checkChunk judged).
func describeChunk(status chunkStatus, b []byte) string {
	switch status {
	case statusShortHeader:
		return fmt.Sprintf("truncated chunk header (%d bytes)", len(b))
	case statusZeroed:
		return "zeroed chunk header"
	case statusBadType:
		return fmt.Sprintf("invalid chunk type %d", b[6])
	case statusBeyondBlock:
		return fmt.Sprintf("chunk length %d beyond block end (%d bytes left)",
			binary.LittleEndian.Uint16(b[4:6]), len(b)-HeaderSize)
	case statusTruncated:
		return fmt.Sprintf("chunk length %d beyond end of data (%d bytes present)",
			binary.LittleEndian.Uint16(b[4:6]), len(b)-HeaderSize)
	case statusBadChecksum:
		length := int(binary.LittleEndian.Uint16(b[4:6]))
		return fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)",
			binary.LittleEndian.Uint32(b[0:4]), maskedChecksum(b[HeaderSize-1:HeaderSize+length]))
	}
	return "valid chunk"
}

package journal

import (
	"encoding/binary"
	"slices"
)

// paddingHeaderSize is a padding record's mask and length fields.
const paddingHeaderSize = 8

// paddingSize returns how many bytes of padding record end a batch that
// ends at file position pos so that the file is then a multiple of align
// long, as upstream computes it: nothing if pos is aligned; otherwise a
// record of at least its 8-byte header, so when fewer than 8 bytes are
// missing it reaches the next boundary but one. align is at least 8.
func paddingSize(pos int64, align int) int {
	rem := int(pos % int64(align))
	if rem == 0 {
		return 0
	}
	n := align - rem
	if n < paddingHeaderSize {
		n += align
	}
	return n
}

// appendPadding appends the padding record (if any) for a batch ending at
// file position pos: the mask, the count of zeros that follow, the zeros.
func appendPadding(dst []byte, pos int64, align int) []byte {
	n := paddingSize(pos, align)
	if n == 0 {
		return dst
	}
	dst = binary.BigEndian.AppendUint32(dst, paddingMaskBits)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n-paddingHeaderSize))
	return appendZeros(dst, n-paddingHeaderSize)
}

// appendZeros appends n zero bytes without allocating a temporary.
func appendZeros(dst []byte, n int) []byte {
	dst = slices.Grow(dst, n)
	start := len(dst)
	dst = dst[:start+n]
	clear(dst[start:])
	return dst
}

package rocksdb

import "encoding/binary"

// snappyDecode decodes a raw Snappy block (the format RocksDB's kSnappy
// blocks hold, without framing): a varint of the decoded length, then
// elements. An element's tag byte says by its low two bits: 00 a literal
// (length-1 in the upper six bits, or in the 1-4 little-endian bytes after
// the tag when those bits are 60-63), 01 a copy of 4-11 bytes at an 11-bit
// offset, 10 a copy of 1-64 bytes at a 16-bit offset, 11 the same with a
// 32-bit offset. Copies may overlap their own output.
func snappyDecode(src []byte) ([]byte, error) {
	n, k := binary.Uvarint(src)
	if k <= 0 || n > 1<<32-1 {
		return nil, errorString("snappy: bad decoded length")
	}
	if n > uint64(len(src))*64+64 {
		// No valid encoding expands this much; do not allocate for it.
		return nil, errorString("snappy: decoded length too large for its input")
	}
	src = src[k:]
	dst := make([]byte, 0, n)
	for len(src) > 0 {
		tag := src[0]
		var length, offset int
		switch tag & 3 {
		case 0:
			length = int(tag >> 2)
			src = src[1:]
			if length >= 60 {
				w := length - 59
				if len(src) < w {
					return nil, errorString("snappy: truncated literal length")
				}
				length = 0
				for i := w - 1; i >= 0; i-- {
					length = length<<8 | int(src[i])
				}
				src = src[w:]
			}
			length++
			if length <= 0 || length > len(src) || len(dst)+length > int(n) {
				return nil, errorString("snappy: literal overruns")
			}
			dst = append(dst, src[:length]...)
			src = src[length:]
			continue
		case 1:
			if len(src) < 2 {
				return nil, errorString("snappy: truncated copy")
			}
			length = 4 + int(tag>>2&7)
			offset = int(tag&0xe0)<<3 | int(src[1])
			src = src[2:]
		case 2:
			if len(src) < 3 {
				return nil, errorString("snappy: truncated copy")
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[1:]))
			src = src[3:]
		case 3:
			if len(src) < 5 {
				return nil, errorString("snappy: truncated copy")
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[1:]))
			src = src[5:]
		}
		if offset <= 0 || offset > len(dst) || len(dst)+length > int(n) {
			return nil, errorString("snappy: copy out of range")
		}
		start := len(dst) - offset
		for i := 0; i < length; i++ {
			dst = append(dst, dst[start+i])
		}
	}
	if len(dst) != int(n) {
		return nil, errorString("snappy: decoded length mismatch")
	}
	return dst, nil
}

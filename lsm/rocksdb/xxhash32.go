package rocksdb

import (
	"encoding/binary"
	"math/bits"
)

// XXH32 (xxHash, 32-bit), the kxxHash block checksum that BookKeeper
// configures. Defined by the xxHash specification; seed 0 in RocksDB.
const (
	xxPrime1 uint32 = 2654435761
	xxPrime2 uint32 = 2246822519
	xxPrime3 uint32 = 3266489917
	xxPrime4 uint32 = 668265263
	xxPrime5 uint32 = 374761393
)

func xxh32Round(acc, lane uint32) uint32 {
	return bits.RotateLeft32(acc+lane*xxPrime2, 13) * xxPrime1
}

// xxh32 returns the XXH32 of the concatenation of a and b with seed 0. Two
// parts, because RocksDB checksums a block and its compression type byte.
func xxh32(a, b []byte) uint32 {
	n := len(a) + len(b)
	var buf []byte
	if len(b) == 0 {
		buf = a
	} else {
		buf = make([]byte, 0, n)
		buf = append(append(buf, a...), b...)
	}
	var h uint32
	p := buf
	if n >= 16 {
		var seed uint32 // RocksDB's; a variable, so the sums wrap as uint32
		v1 := seed + xxPrime1 + xxPrime2
		v2 := seed + xxPrime2
		v3 := seed
		v4 := seed - xxPrime1
		for len(p) >= 16 {
			v1 = xxh32Round(v1, binary.LittleEndian.Uint32(p[0:]))
			v2 = xxh32Round(v2, binary.LittleEndian.Uint32(p[4:]))
			v3 = xxh32Round(v3, binary.LittleEndian.Uint32(p[8:]))
			v4 = xxh32Round(v4, binary.LittleEndian.Uint32(p[12:]))
			p = p[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = xxPrime5
	}
	h += uint32(n)
	for len(p) >= 4 {
		h += binary.LittleEndian.Uint32(p) * xxPrime3
		h = bits.RotateLeft32(h, 17) * xxPrime4
		p = p[4:]
	}
	for _, c := range p {
		h += uint32(c) * xxPrime5
		h = bits.RotateLeft32(h, 11) * xxPrime1
	}
	h ^= h >> 15
	h *= xxPrime2
	h ^= h >> 13
	h *= xxPrime3
	h ^= h >> 16
	return h
}

package rocksdb

import (
	"encoding/binary"
	"math/bits"
)

// XXH3 (64-bit, seed 0, the default secret), RocksDB's kXXH3 block checksum
// (its default since 7.8). Written from the xxHash specification
// (XXH3_64bits); only the seedless one-shot form is needed here. RocksDB
// checksums a block as the low 32 bits of XXH3 over the block's contents,
// with the compression type byte folded in afterwards (checksumXXH3).

// xxh3Secret is the specification's default 192-byte secret.
var xxh3Secret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

const (
	xx64Prime1 uint64 = 0x9e3779b185ebca87
	xx64Prime2 uint64 = 0xc2b2ae3d27d4eb4f
	xx64Prime3 uint64 = 0x165667b19e3779f9
	xx64Prime4 uint64 = 0x85ebca77c2b2ae63
	xx64Prime5 uint64 = 0x27d4eb2f165667c5
	xxh3MX1    uint64 = 0x165667919e3779f9
	xxh3MX2    uint64 = 0x9fb21c651e98df25

	xxh3StripeLen      = 64
	xxh3SecretConsume  = 8                                                     // secret bytes advanced per stripe
	xxh3StripesInBlock = (len(xxh3Secret) - xxh3StripeLen) / xxh3SecretConsume // 16
	xxh3BlockLen       = xxh3StripeLen * xxh3StripesInBlock                    // 1024
	xxh3SecretMin      = 136                                                   // XXH3_SECRET_SIZE_MIN
)

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// mulFold64 multiplies a and b to 128 bits and xors the halves.
func mulFold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// xxh3Avalanche is XXH3's final mix of a 64-bit accumulator.
func xxh3Avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= xxh3MX1
	return h ^ h>>32
}

// xxh64Avalanche is XXH64's final mix, which XXH3 reuses for short inputs.
func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xx64Prime2
	h ^= h >> 29
	h *= xx64Prime3
	return h ^ h>>32
}

// xxh3RRMXMX is the stronger mix XXH3 applies to 4- to 8-byte inputs.
func xxh3RRMXMX(h uint64, n int) uint64 {
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= xxh3MX2
	h ^= h>>35 + uint64(n)
	h *= xxh3MX2
	return h ^ h>>28
}

// xxh3Mix16 mixes 16 bytes of input with 16 bytes of secret.
func xxh3Mix16(in, secret []byte) uint64 {
	return mulFold64(le64(in)^le64(secret), le64(in[8:])^le64(secret[8:]))
}

// xxh3 returns XXH3_64bits(b) (seed 0, default secret).
func xxh3(b []byte) uint64 {
	s := xxh3Secret[:]
	n := len(b)
	switch {
	case n == 0:
		return xxh64Avalanche(le64(s[56:]) ^ le64(s[64:]))
	case n <= 3:
		combined := uint32(b[0])<<16 | uint32(b[n>>1])<<24 | uint32(b[n-1]) | uint32(n)<<8
		return xxh64Avalanche(uint64(combined) ^ uint64(le32(s)^le32(s[4:])))
	case n <= 8:
		in := uint64(le32(b[n-4:])) | uint64(le32(b))<<32
		return xxh3RRMXMX(in^(le64(s[8:])^le64(s[16:])), n)
	case n <= 16:
		lo := le64(b) ^ (le64(s[24:]) ^ le64(s[32:]))
		hi := le64(b[n-8:]) ^ (le64(s[40:]) ^ le64(s[48:]))
		acc := uint64(n) + bits.ReverseBytes64(lo) + hi + mulFold64(lo, hi)
		return xxh3Avalanche(acc)
	case n <= 128:
		acc := uint64(n) * xx64Prime1
		if n > 32 {
			if n > 64 {
				if n > 96 {
					acc += xxh3Mix16(b[48:], s[96:])
					acc += xxh3Mix16(b[n-64:], s[112:])
				}
				acc += xxh3Mix16(b[32:], s[64:])
				acc += xxh3Mix16(b[n-48:], s[80:])
			}
			acc += xxh3Mix16(b[16:], s[32:])
			acc += xxh3Mix16(b[n-32:], s[48:])
		}
		acc += xxh3Mix16(b, s)
		acc += xxh3Mix16(b[n-16:], s[16:])
		return xxh3Avalanche(acc)
	case n <= 240:
		acc := uint64(n) * xx64Prime1
		rounds := n / 16
		for i := 0; i < 8; i++ {
			acc += xxh3Mix16(b[16*i:], s[16*i:])
		}
		acc = xxh3Avalanche(acc)
		const midStart = 3 // XXH3_MIDSIZE_STARTOFFSET
		for i := 8; i < rounds; i++ {
			acc += xxh3Mix16(b[16*i:], s[16*(i-8)+midStart:])
		}
		const lastOffset = 17 // XXH3_MIDSIZE_LASTOFFSET
		acc += xxh3Mix16(b[n-16:], s[xxh3SecretMin-lastOffset:])
		return xxh3Avalanche(acc)
	}
	return xxh3Long(b)
}

// xxh3Long hashes inputs of more than 240 bytes: eight 64-bit lanes
// accumulate 64-byte stripes, scrambled after every 1 KiB block.
func xxh3Long(b []byte) uint64 {
	s := xxh3Secret[:]
	acc := [8]uint64{
		uint64(xxPrime3), xx64Prime1, xx64Prime2, xx64Prime3,
		xx64Prime4, uint64(xxPrime2), xx64Prime5, uint64(xxPrime1),
	}
	n := len(b)
	blocks := (n - 1) / xxh3BlockLen
	for i := 0; i < blocks; i++ {
		blk := b[i*xxh3BlockLen:]
		for j := 0; j < xxh3StripesInBlock; j++ {
			xxh3Accumulate(&acc, blk[j*xxh3StripeLen:], s[j*xxh3SecretConsume:])
		}
		xxh3Scramble(&acc, s[len(s)-xxh3StripeLen:])
	}
	// The last, partial block, then the input's last 64 bytes (which may
	// overlap stripes already taken) with a secret offset of its own.
	stripes := ((n - 1) - blocks*xxh3BlockLen) / xxh3StripeLen
	blk := b[blocks*xxh3BlockLen:]
	for j := 0; j < stripes; j++ {
		xxh3Accumulate(&acc, blk[j*xxh3StripeLen:], s[j*xxh3SecretConsume:])
	}
	const lastAccStart = 7 // XXH_SECRET_LASTACC_START
	xxh3Accumulate(&acc, b[n-xxh3StripeLen:], s[len(s)-xxh3StripeLen-lastAccStart:])

	const mergeStart = 11 // XXH_SECRET_MERGEACCS_START
	h := uint64(n) * xx64Prime1
	for i := 0; i < 4; i++ {
		ms := s[mergeStart+16*i:]
		h += mulFold64(acc[2*i]^le64(ms), acc[2*i+1]^le64(ms[8:]))
	}
	return xxh3Avalanche(h)
}

// xxh3Accumulate folds one 64-byte stripe into the lanes.
func xxh3Accumulate(acc *[8]uint64, stripe, secret []byte) {
	_ = stripe[63]
	_ = secret[63]
	for i := 0; i < 8; i++ {
		v := le64(stripe[8*i:])
		k := v ^ le64(secret[8*i:])
		acc[i^1] += v
		acc[i] += uint64(uint32(k)) * (k >> 32)
	}
}

// xxh3Scramble mixes the lanes at the end of a block.
func xxh3Scramble(acc *[8]uint64, secret []byte) {
	for i := range acc {
		a := acc[i]
		a ^= a >> 47
		a ^= le64(secret[8*i:])
		acc[i] = a * uint64(xxPrime1)
	}
}

// xxh3BlockChecksum is RocksDB's kXXH3 checksum of a block's contents
// followed by its compression type byte: the low 32 bits of XXH3 of the
// contents, xored with the type byte times a constant (RocksDB folds the
// byte in so as not to stream XXH3).
func xxh3BlockChecksum(data []byte, typ byte) uint32 {
	const lastBytePrime = 0x6b9083d9
	return uint32(xxh3(data)) ^ uint32(typ)*lastBytePrime
}

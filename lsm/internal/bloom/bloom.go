// Package bloom implements the cache-line-local ("blocked") Bloom filter
// used by tables: every probe of a key lands in one 64-byte cache line, so a
// lookup touches one line of memory however large the filter is.
//
// Filter layout (persisted, do not change):
//
//	+------------------------------+-----------------+--------------------+
//	| lines: numLines × 64 bytes   | numProbes uint8 | numLines uint32 LE |
//	+------------------------------+-----------------+--------------------+
//
// A key's 64-bit hash (Hash, persisted) picks the line with its high 32 bits
// (multiply-shift range reduction); the probes come from a second mix of
// the hash, nine bits per probe, each naming one of the line's 512 bits.
//
// A filter with zero lines never matches (it is what an empty table writes).
package bloom

import (
	"encoding/binary"
	"math/bits"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// Persisted constants: do not change.
const (
	lineBytes   = 64
	lineBits    = lineBytes * 8
	trailerSize = 5
	// probeMul advances the probe generator; an odd 64-bit constant (the
	// golden ratio) so that each step is a bijection.
	probeMul = 0x9e3779b97f4a7c15
	mixA     = 0xa0761d6478bd642f
	mixB     = 0xe7037ed1a0b428db
	mixC     = 0x8ebc6af09c88c6e3
)

// mum multiplies two words to 128 bits and folds the halves: a cheap,
// strong mixing step.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// Hash returns the 64-bit hash filters use for a user key. It is persisted
// in every filter: do not change it.
func Hash(key []byte) uint64 {
	h := uint64(len(key))*mixC ^ mixA
	for len(key) >= 8 {
		h = mum(h^binary.LittleEndian.Uint64(key), mixB)
		key = key[8:]
	}
	if len(key) > 0 {
		var tail uint64
		for i, c := range key {
			tail |= uint64(c) << (8 * uint(i))
		}
		h = mum(h^tail^mixC, mixB)
	}
	return mum(h, mixA)
}

// ProbesForBitsPerKey returns the number of probes the writer uses for a
// bits-per-key setting. Slightly fewer than the unblocked optimum (b·ln2)
// is better for blocked filters, whose lines are unevenly loaded.
func ProbesForBitsPerKey(bitsPerKey int) int {
	k := bitsPerKey * 69 / 100
	if k < 1 {
		k = 1
	}
	if k > 16 {
		k = 16
	}
	return k
}

// FilterSize returns the size in bytes of a filter for n keys.
func FilterSize(n, bitsPerKey int) int {
	return numLines(n, bitsPerKey)*lineBytes + trailerSize
}

func numLines(n, bitsPerKey int) int {
	if n <= 0 || bitsPerKey <= 0 {
		return 0
	}
	return (n*bitsPerKey + lineBits - 1) / lineBits
}

// Build appends to dst a filter holding the given key hashes.
func Build(dst []byte, hashes []uint64, bitsPerKey int) []byte {
	lines := numLines(len(hashes), bitsPerKey)
	probes := ProbesForBitsPerKey(bitsPerKey)
	start := len(dst)
	dst = append(dst, make([]byte, lines*lineBytes+trailerSize)...)
	filter := dst[start:]
	for _, h := range hashes {
		line := filter[lineOffset(h, uint32(lines)):]
		x := probeSeed(h)
		for i := 0; i < probes; i++ {
			x *= probeMul
			bit := x >> 55
			line[bit>>3] |= 1 << (bit & 7)
		}
	}
	filter[lines*lineBytes] = byte(probes)
	binary.LittleEndian.PutUint32(filter[lines*lineBytes+1:], uint32(lines))
	return dst
}

func lineOffset(h uint64, lines uint32) int {
	return int((h>>32)*uint64(lines)>>32) * lineBytes
}

func probeSeed(h uint64) uint64 { return mum(h, mixC) | 1 }

// Validate checks that filter is well formed.
func Validate(filter []byte) error {
	if len(filter) < trailerSize {
		return base.CorruptionErrorf("bloom: filter of %d bytes is shorter than its %d-byte trailer", len(filter), trailerSize)
	}
	t := len(filter) - trailerSize
	lines := binary.LittleEndian.Uint32(filter[t+1:])
	if uint64(lines)*lineBytes != uint64(t) {
		return base.CorruptionErrorf("bloom: filter claims %d lines but holds %d bytes of lines", lines, t)
	}
	if p := filter[t]; p == 0 || p > 30 {
		return base.CorruptionErrorf("bloom: filter has an impossible probe count %d", p)
	}
	return nil
}

// MayContain reports whether the key with hash h may be in filter. False
// means certainly absent. A malformed filter (see Validate) answers true, so
// a damaged filter can cost a read but never hide a key.
func MayContain(filter []byte, h uint64) bool {
	t := len(filter) - trailerSize
	if t < 0 {
		return true
	}
	lines := binary.LittleEndian.Uint32(filter[t+1:])
	probes := int(filter[t])
	if lines == 0 {
		return uint64(t) != 0 // an empty filter holds no key
	}
	if uint64(lines)*lineBytes != uint64(t) {
		return true
	}
	line := filter[lineOffset(h, lines):]
	line = line[:lineBytes]
	x := probeSeed(h)
	for i := 0; i < probes; i++ {
		x *= probeMul
		bit := x >> 55
		if line[bit>>3]&(1<<(bit&7)) == 0 {
			return false
		}
	}
	return true
}

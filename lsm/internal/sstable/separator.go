package sstable

import "github.com/bookie-index/bookie-index/lsm/internal/block"

// appendSeparator appends to dst a short user key s with a <= s < b, for an
// index entry between a block ending at a and the next block starting at b
// (a < b). Short separators make index entries small; with the common
// prefix stripped, a separator between two ledgers costs a byte or two.
//
// After the first byte i where a and b differ, the separator keeps a[:i+1]
// and increments the first byte of a after i that is not 0xff: the result
// is above a (at that byte) and below b (at byte i). If a[i]+1 < b[i], the
// separator is a[:i] + (a[i]+1), shorter still. If no byte can be
// incremented, or a is a prefix of b, a itself is the separator.
func appendSeparator(dst, a, b []byte) []byte {
	i := block.SharedPrefixLen(a, b)
	if i >= len(a) || i >= len(b) {
		return append(dst, a...)
	}
	if a[i] < 0xff && a[i]+1 < b[i] {
		dst = append(dst, a[:i+1]...)
		dst[len(dst)-1]++
		return dst
	}
	for j := i + 1; j < len(a); j++ {
		if a[j] != 0xff {
			dst = append(dst, a[:j+1]...)
			dst[len(dst)-1]++
			return dst
		}
	}
	return append(dst, a...)
}

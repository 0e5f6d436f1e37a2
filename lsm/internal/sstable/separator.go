package sstable

import "github.com/bookie-index/bookie-index/lsm/internal/block"

// appendSeparator appends to dst a short user key s with a <= s < b, for an
// index entry between a block ending at a and the next block starting at b
// (a < b). Short separators make index entries small; with the common
// prefix stripped, a separator between two ledgers costs a byte or two.
//
// Let i be the first byte where a and b differ. If b is longer than i+1
// bytes, the separator is b[:i+1]: above a (at byte i) and below b (a
// proper prefix of it). That is the highest short separator, and it is
// chosen on purpose: a reverse seek to the end of a key range ending
// between a and b — a floor lookup, the last entry of a ledger — then
// lands on the block ending at a, not on the next block, which holds
// nothing below the target and would be read in vain. (A separator from
// below, like a+1, sends such a seek to the next block first.)
//
// Otherwise (b ends at byte i) the separator is built from a: a[:i] +
// (a[i]+1) if that is still below b, else a[:i+1] with the first byte of a
// after i that is not 0xff incremented. If no byte can be incremented, or
// a is a prefix of b, a itself is the separator.
func appendSeparator(dst, a, b []byte) []byte {
	i := block.SharedPrefixLen(a, b)
	if i >= len(a) || i >= len(b) {
		return append(dst, a...)
	}
	if i+1 < len(b) {
		return append(dst, b[:i+1]...)
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

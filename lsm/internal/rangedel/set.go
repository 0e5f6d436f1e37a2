package rangedel

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// Set is an immutable collection of fragments that answers point lookups.
// It is safe for concurrent use. The zero value and a nil *Set are empty.
type Set struct {
	frags []Fragment
}

// NewSet returns a set over frags after checking them with Validate. The set
// aliases frags, which must not be modified afterwards.
func NewSet(frags []Fragment) (*Set, error) {
	if err := Validate(frags); err != nil {
		return nil, err
	}
	return &Set{frags: frags}, nil
}

// BuildSet fragments ts (see FragmentTombstones) and returns the set of the
// fragments. It cannot fail: any tombstones, in any order, make a valid set.
func BuildSet(ts []Tombstone) *Set {
	return &Set{frags: FragmentTombstones(ts)}
}

// Len returns the number of fragments.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.frags)
}

// Fragments returns the set's fragments in order. They must not be modified.
func (s *Set) Fragments() []Fragment {
	if s == nil {
		return nil
	}
	return s.frags
}

// Covers reports whether a point entry with user key userKey and sequence
// number keySeq is deleted for a reader at readSeq: whether some tombstone
// with keySeq < seq <= readSeq covers userKey. It does not allocate.
func (s *Set) Covers(userKey []byte, keySeq, readSeq base.SeqNum) bool {
	return s.MaxCoveringSeq(userKey, readSeq) > keySeq
}

// MaxCoveringSeq returns the sequence number of the newest tombstone that
// covers userKey and is visible at readSeq, or 0 if there is none. A point
// entry for userKey with a sequence number below the result is deleted for
// that reader; the engine compares it against entries found in older
// levels. It does not allocate.
func (s *Set) MaxCoveringSeq(userKey []byte, readSeq base.SeqNum) base.SeqNum {
	if s == nil {
		return 0
	}
	i := searchEndAbove(s.frags, userKey)
	if i == len(s.frags) || bytes.Compare(s.frags[i].Start, userKey) > 0 {
		return 0
	}
	return s.frags[i].VisibleSeq(readSeq)
}

// searchEndAbove returns the index of the first fragment whose end is above
// userKey: the fragment containing userKey if there is one, else the first
// fragment after it (len(frags) if none). Ends increase with the index
// because fragments are sorted and disjoint.
func searchEndAbove(frags []Fragment, userKey []byte) int {
	lo, hi := 0, len(frags)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(frags[mid].End, userKey) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// searchStartBelow returns the index of the last fragment whose start is
// below userKey, or -1 if there is none.
func searchStartBelow(frags []Fragment, userKey []byte) int {
	lo, hi := 0, len(frags)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(frags[mid].Start, userKey) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

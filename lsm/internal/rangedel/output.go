package rangedel

import (
	"bytes"
	"slices"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// Flatten returns the fragments as tombstones in the order a table stores
// them: start ascending, then sequence number descending. Each fragment
// becomes one tombstone per sequence number, all over the fragment's range.
// The tombstones alias the fragments' keys. Flattening and fragmenting again
// gives back the same fragments.
func Flatten(frags []Fragment) []Tombstone {
	n := 0
	for i := range frags {
		n += len(frags[i].Seqs)
	}
	if n == 0 {
		return nil
	}
	out := make([]Tombstone, 0, n)
	for i := range frags {
		f := &frags[i]
		for _, seq := range f.Seqs {
			out = append(out, Tombstone{Start: f.Start, End: f.End, Seq: seq})
		}
	}
	return out
}

// Truncate clips frags (sorted and disjoint, as this package builds them) to
// the user-key range [lower, upper), dropping fragments that fall outside
// it. A nil upper is unbounded; a nil lower is the smallest key anyway. The
// result aliases the fragments' keys and sequence numbers, but lower and
// upper are copied, so the caller may reuse them. An empty range (lower >=
// upper) gives nil.
//
// Compactions use it to give each output table only the tombstones within
// the table's user-key bounds; see the package comment for the caveat.
func Truncate(frags []Fragment, lower, upper []byte) []Fragment {
	if upper != nil && bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	var out []Fragment
	var lowerCopy, upperCopy []byte
	for i := range frags {
		f := frags[i]
		if upper != nil && bytes.Compare(f.Start, upper) >= 0 {
			break // this and every later fragment start at or after upper
		}
		if bytes.Compare(f.End, lower) <= 0 {
			continue
		}
		if bytes.Compare(f.Start, lower) < 0 {
			if lowerCopy == nil {
				lowerCopy = append(make([]byte, 0, len(lower)), lower...)
			}
			f.Start = lowerCopy
		}
		if upper != nil && bytes.Compare(f.End, upper) > 0 {
			if upperCopy == nil {
				upperCopy = append(make([]byte, 0, len(upper)), upper...)
			}
			f.End = upperCopy
		}
		out = append(out, f)
	}
	return out
}

// Elide keeps, in each fragment, only the newest sequence number of each
// snapshot stripe: with live snapshots s1 < ... < sn the stripes are
// (0, s1], (s1, s2], ..., (sn, ∞), and tombstones of one stripe are
// indistinguishable to every reader at a snapshot or at the latest state
// (see the package comment). Touching fragments left with equal sequence
// numbers are merged. snapshots should be sorted ascending; unsorted input
// is sorted on a copy. The result aliases the fragments' keys.
//
// For every user key k, every keySeq and every readSeq that is one of the
// snapshots or at least the newest tombstone's sequence number, Covers and
// MaxCoveringSeq answer the same before and after Elide.
func Elide(frags []Fragment, snapshots []base.SeqNum) []Fragment {
	if len(frags) == 0 {
		return nil
	}
	if !slices.IsSorted(snapshots) {
		snapshots = slices.Sorted(slices.Values(snapshots))
	}
	total := 0
	for i := range frags {
		total += len(frags[i].Seqs)
	}
	// seqs never grows past its capacity, so slices of it stay valid.
	seqs := make([]base.SeqNum, 0, total)
	out := make([]Fragment, 0, len(frags))
	for i := range frags {
		f := &frags[i]
		low := len(seqs)
		lastStripe := -1
		for _, seq := range f.Seqs {
			// Seqs descend, so stripes do not increase: a change of stripe
			// starts a new run whose first (newest) seq is the one to keep.
			if stripe := snapshotStripe(snapshots, seq); stripe != lastStripe {
				seqs = append(seqs, seq)
				lastStripe = stripe
			}
		}
		kept := seqs[low:len(seqs):len(seqs)]
		if len(kept) == 0 {
			continue // an invalid fragment without sequence numbers
		}
		if n := len(out); n > 0 && bytes.Equal(out[n-1].End, f.Start) && slices.Equal(out[n-1].Seqs, kept) {
			out[n-1].End = f.End
			seqs = seqs[:low]
			continue
		}
		out = append(out, Fragment{Start: f.Start, End: f.End, Seqs: kept})
	}
	return out
}

// snapshotStripe returns the stripe of seq: the number of snapshots below
// it. A snapshot at s sees seq exactly when seq <= s, so seqs with the same
// count of snapshots below them are seen by the same snapshots.
func snapshotStripe(snapshots []base.SeqNum, seq base.SeqNum) int {
	lo, hi := 0, len(snapshots)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if snapshots[mid] < seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

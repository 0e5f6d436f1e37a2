package rangedel

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Tombstone is one range deletion as written: point entries with user keys
// in [Start, End) and sequence numbers below Seq are deleted. A tombstone
// with Start >= End (bytewise) deletes nothing.
type Tombstone struct {
	Start, End []byte
	Seq        base.SeqNum
}

// Fragment is a piece [Start, End) of the user-key space together with the
// sequence numbers of every tombstone that covers all of it, newest first
// and without duplicates. Fragments built by this package are immutable and
// share memory with each other; never modify their keys or Seqs.
type Fragment struct {
	Start, End []byte
	Seqs       []base.SeqNum
}

// Contains reports whether userKey lies in [f.Start, f.End).
func (f *Fragment) Contains(userKey []byte) bool {
	return bytes.Compare(f.Start, userKey) <= 0 && bytes.Compare(userKey, f.End) < 0
}

// VisibleSeq returns the newest of f's sequence numbers that a reader at
// readSeq sees (the largest one <= readSeq), or 0 if the reader sees none.
func (f *Fragment) VisibleSeq(readSeq base.SeqNum) base.SeqNum {
	seqs := f.Seqs
	if len(seqs) == 0 {
		return 0
	}
	// Usually the reader sees the newest tombstone, and fragments rarely
	// carry more than a few sequence numbers.
	if seqs[0] <= readSeq {
		return seqs[0]
	}
	// Find the first (largest) seq <= readSeq in the descending list.
	lo, hi := 1, len(seqs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if seqs[mid] > readSeq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(seqs) {
		return 0
	}
	return seqs[lo]
}

// FragmentTombstones cuts tombstones, given in any order and possibly
// overlapping, duplicated or empty, into sorted disjoint fragments (see the
// package comment). Empty tombstones are dropped; the result is nil when
// nothing is left. The fragments' keys are copies: the caller may reuse ts
// and its keys afterwards.
//
// Cost: O(n log n) for n tombstones plus the size of the output, which is
// O(n²) sequence numbers in the worst case of n nested tombstones.
func FragmentTombstones(ts []Tombstone) []Fragment {
	bounds, spans := boundaries(ts)
	if len(spans) == 0 {
		return nil
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })

	// Sweep the elementary intervals [bounds[i], bounds[i+1]) left to right,
	// keeping the spans that cover the current one sorted by seq descending.
	// Each fragment records its key indexes and its range within seqs; the
	// slices are cut only at the end because seqs may still move.
	type pending struct {
		start, end     int
		seqLow, seqEnd int
	}
	var (
		active []span
		seqs   []base.SeqNum
		out    []pending
		next   int
	)
	for i := 0; i+1 < len(bounds); i++ {
		active = slices.DeleteFunc(active, func(s span) bool { return s.end <= i })
		for ; next < len(spans) && spans[next].start == i; next++ {
			s := spans[next]
			at, _ := slices.BinarySearchFunc(active, s.seq, func(a span, seq base.SeqNum) int {
				return compareSeqsDescending(a.seq, seq)
			})
			active = slices.Insert(active, at, s)
		}
		if len(active) == 0 {
			continue // a gap between tombstones
		}
		low := len(seqs)
		for _, s := range active {
			if len(seqs) == low || seqs[len(seqs)-1] != s.seq {
				seqs = append(seqs, s.seq)
			}
		}
		if n := len(out); n > 0 && out[n-1].end == i &&
			slices.Equal(seqs[out[n-1].seqLow:out[n-1].seqEnd], seqs[low:]) {
			out[n-1].end = i + 1 // same coverage as the touching fragment: extend it
			seqs = seqs[:low]
			continue
		}
		out = append(out, pending{start: i, end: i + 1, seqLow: low, seqEnd: len(seqs)})
	}

	frags := make([]Fragment, len(out))
	for j, p := range out {
		frags[j] = Fragment{
			Start: bounds[p.start],
			End:   bounds[p.end],
			// The capacity limit keeps a caller's append from writing into
			// the next fragment's sequence numbers.
			Seqs: seqs[p.seqLow:p.seqEnd:p.seqEnd],
		}
	}
	return frags
}

// span is a non-empty tombstone rewritten as indexes into the sorted
// boundary keys, so that the sweep compares integers instead of keys.
type span struct {
	start, end int
	seq        base.SeqNum
}

// boundaries returns the distinct start and end keys of the non-empty
// tombstones, sorted and copied into one shared allocation, and the
// tombstones as spans over them (in input order).
func boundaries(ts []Tombstone) ([][]byte, []span) {
	// An endpoint is one start or end key; sorting the endpoints gives both
	// the distinct keys and each span's indexes without a search per key.
	type endpoint struct {
		key   []byte
		span  int
		isEnd bool
	}
	endpoints := make([]endpoint, 0, 2*len(ts))
	spans := make([]span, 0, len(ts))
	for _, t := range ts {
		if bytes.Compare(t.Start, t.End) < 0 {
			endpoints = append(endpoints,
				endpoint{key: t.Start, span: len(spans)},
				endpoint{key: t.End, span: len(spans), isEnd: true})
			spans = append(spans, span{seq: t.Seq})
		}
	}
	if len(spans) == 0 {
		return nil, nil
	}
	slices.SortFunc(endpoints, func(a, b endpoint) int { return bytes.Compare(a.key, b.key) })

	size := 0
	for i, e := range endpoints {
		if i == 0 || !bytes.Equal(e.key, endpoints[i-1].key) {
			size += len(e.key)
		}
	}
	arena := make([]byte, 0, size)
	keys := make([][]byte, 0, len(endpoints))
	for i, e := range endpoints {
		if i == 0 || !bytes.Equal(e.key, endpoints[i-1].key) {
			arena = append(arena, e.key...)
			keys = append(keys, arena[len(arena)-len(e.key):len(arena):len(arena)])
		}
		if e.isEnd {
			spans[e.span].end = len(keys) - 1
		} else {
			spans[e.span].start = len(keys) - 1
		}
	}
	return keys, spans
}

// compareSeqsDescending orders sequence numbers newest first.
func compareSeqsDescending(a, b base.SeqNum) int { return cmp.Compare(b, a) }

// Validate checks that frags are what this package produces: every fragment
// non-empty with at least one sequence number, sequence numbers strictly
// descending, fragments sorted by start and not overlapping. It does not
// require touching fragments with equal sequence numbers to be merged.
func Validate(frags []Fragment) error {
	for i := range frags {
		f := &frags[i]
		if bytes.Compare(f.Start, f.End) >= 0 {
			return errors.Newf("rangedel: fragment %d [%x, %x) is empty", i, f.Start, f.End)
		}
		if len(f.Seqs) == 0 {
			return errors.Newf("rangedel: fragment %d [%x, %x) has no sequence numbers", i, f.Start, f.End)
		}
		for j := 1; j < len(f.Seqs); j++ {
			if f.Seqs[j] >= f.Seqs[j-1] {
				return errors.Newf("rangedel: fragment %d [%x, %x): sequence numbers %v are not strictly descending",
					i, f.Start, f.End, f.Seqs)
			}
		}
		if i > 0 && bytes.Compare(frags[i-1].End, f.Start) > 0 {
			return errors.Newf("rangedel: fragment %d [%x, %x) starts before the end of fragment %d [%x, %x)",
				i, f.Start, f.End, i-1, frags[i-1].Start, frags[i-1].End)
		}
	}
	return nil
}

package rocksdb

import (
	"bytes"
	"sort"
)

// tombstone is a range deletion: it deletes the versions of keys in
// [start, end) with a sequence number below seq.
type tombstone struct {
	start, end []byte
	seq        uint64
}

// fragment is a piece of the key space and the newest tombstone covering it.
type fragment struct {
	start, end []byte
	seq        uint64
}

// rangeDels answers "what is the newest range deletion covering this key"
// for all tombstones of a database at once: the tombstones are cut at each
// other's bounds into disjoint fragments, each with its newest sequence.
// That is all visibility needs, since a key's version is deleted exactly
// when a tombstone covering it is newer.
type rangeDels struct {
	frags []fragment
}

func newRangeDels(ts []tombstone) *rangeDels {
	var bounds [][]byte
	for _, t := range ts {
		if bytes.Compare(t.start, t.end) < 0 {
			bounds = append(bounds, t.start, t.end)
		}
	}
	sort.Slice(bounds, func(i, j int) bool { return bytes.Compare(bounds[i], bounds[j]) < 0 })
	uniq := bounds[:0]
	for _, b := range bounds {
		if len(uniq) == 0 || !bytes.Equal(uniq[len(uniq)-1], b) {
			uniq = append(uniq, b)
		}
	}
	r := &rangeDels{}
	if len(uniq) < 2 {
		return r
	}
	frags := make([]fragment, len(uniq)-1)
	for i := range frags {
		frags[i] = fragment{start: uniq[i], end: uniq[i+1]}
	}
	for _, t := range ts {
		if bytes.Compare(t.start, t.end) >= 0 {
			continue // RocksDB ignores empty ranges
		}
		i := sort.Search(len(frags), func(i int) bool { return bytes.Compare(frags[i].start, t.start) >= 0 })
		for ; i < len(frags) && bytes.Compare(frags[i].start, t.end) < 0; i++ {
			if t.seq > frags[i].seq {
				frags[i].seq = t.seq
			}
		}
	}
	r.frags = frags
	return r
}

// maxSeq returns the sequence number of the newest tombstone covering key,
// or 0 if none does.
func (r *rangeDels) maxSeq(key []byte) uint64 {
	i := sort.Search(len(r.frags), func(i int) bool { return bytes.Compare(r.frags[i].end, key) > 0 })
	if i < len(r.frags) && bytes.Compare(r.frags[i].start, key) <= 0 {
		return r.frags[i].seq
	}
	return 0
}

// truncate clips a table's tombstone to the table's key range, as RocksDB
// does when it reads one: the part outside the table's bounds may have been
// compacted away elsewhere and must not delete what lies there. The largest
// bound is exclusive when it is a range deletion's sentinel end.
func truncate(t tombstone, meta *fileMeta) (tombstone, bool) {
	if meta == nil {
		return t, true
	}
	small, _ := parseInternalKey(meta.smallest)
	large, _ := parseInternalKey(meta.largest)
	if bytes.Compare(t.start, small.user) < 0 {
		t.start = small.user
	}
	end := large.user
	if !(large.seq == maxSequence && large.kind == typeRangeDeletion) {
		end = append(end[:len(end):len(end)], 0) // just past the inclusive bound
	}
	if bytes.Compare(t.end, end) > 0 {
		t.end = end
	}
	return t, bytes.Compare(t.start, t.end) < 0
}

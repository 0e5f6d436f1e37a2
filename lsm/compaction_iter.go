package lsm

import (
	"bytes"
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
)

// compactionIter decides, entry by entry, what a compaction keeps. Input
// entries arrive in internal order (user key ascending, newest first).
//
// Snapshots split the sequence numbers into stripes: a snapshot at s sees
// entries <= s, so two versions of a key in the same stripe (no snapshot
// between them) are indistinguishable to every reader, and only the newer
// one is kept. An entry is dropped when, in its stripe:
//   - a newer version of its key exists (shadowed);
//   - a range tombstone newer than it covers it;
//   - it is a point tombstone of the oldest stripe at the bottom of the
//     tree (nothing older is left for it to delete).
//
// At the bottom of the tree, entries of the oldest stripe get sequence
// number 0: no reader can tell, and a zero trailer costs one byte.
type compactionIter struct {
	snapshots  []base.SeqNum // ascending
	tombs      *rangedel.Set // tombstones that may delete input entries
	bottommost bool

	lastKey     []byte
	haveLastKey bool
	lastStripe  int

	dropped, zeroed int64
}

// stripe returns the index of the first snapshot >= seq (len(snapshots)
// for the newest stripe).
func (c *compactionIter) stripe(seq base.SeqNum) int {
	return sort.Search(len(c.snapshots), func(i int) bool { return c.snapshots[i] >= seq })
}

// stripeTop is the largest sequence number of a stripe.
func (c *compactionIter) stripeTop(stripe int) base.SeqNum {
	if stripe < len(c.snapshots) {
		return c.snapshots[stripe]
	}
	return base.SeqNumMax
}

// keep decides one entry; it returns the trailer to write and whether to
// write it.
func (c *compactionIter) keep(userKey []byte, tr base.Trailer) (base.Trailer, bool) {
	seq := tr.SeqNum()
	stripe := c.stripe(seq)
	if c.haveLastKey && bytes.Equal(userKey, c.lastKey) {
		if stripe == c.lastStripe {
			c.dropped++
			return 0, false // shadowed by a newer version in its stripe
		}
	} else {
		c.lastKey = append(c.lastKey[:0], userKey...)
		c.haveLastKey = true
	}
	c.lastStripe = stripe
	if c.tombs != nil && c.tombs.Covers(userKey, seq, c.stripeTop(stripe)) {
		c.dropped++
		return 0, false
	}
	if c.bottommost && stripe == 0 {
		if tr.Kind() == base.KindDelete {
			c.dropped++
			return 0, false
		}
		if seq != 0 {
			c.zeroed++
			return base.MakeTrailer(0, tr.Kind()), true
		}
	}
	return tr, true
}

// outputTombstones returns the fragments to write: only the newest
// sequence number of each stripe matters, and at the bottom of the tree
// the oldest stripe's tombstones have nothing left to delete.
func (c *compactionIter) outputTombstones(frags []rangedel.Fragment) []rangedel.Fragment {
	frags = rangedel.Elide(frags, c.snapshots)
	if !c.bottommost {
		return frags
	}
	out := frags[:0:0]
	for _, f := range frags {
		var seqs []base.SeqNum
		for _, s := range f.Seqs {
			if c.stripe(s) > 0 {
				seqs = append(seqs, s)
			}
		}
		if len(seqs) > 0 {
			f.Seqs = seqs
			out = append(out, f)
		}
	}
	return out
}

package lsm

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// entryIter is what a flush or compaction reads: a memtable iterator or a
// merging iterator over tables, in internal order.
type entryIter interface {
	First() bool
	Next() bool
	UserKey() []byte
	Trailer() base.Trailer
	Value() []byte
}

// compactionInput yields the entries a flush or compaction writes: the
// entries compactionIter keeps, with merge operands combined.
//
// Merge operands of a key are combined within their snapshot stripe only
// (a reader at a snapshot between two operands must still see the older
// one alone). Walking a stripe's entries newest first from the newest
// operand:
//   - over a Set, a Delete or an entry a range tombstone deletes, or at
//     the key's last entry at the bottom of the tree, the operands are
//     full-merged into a Set with the newest operand's sequence number,
//     and the entries under them in the stripe are dropped as shadowed;
//   - otherwise (the stripe ends, or older tables may hold the key) adjacent
//     operands are partial-merged where the operator can, and what is left
//     is written as operands, newest first, each run under its newest
//     sequence number.
//
// A FullMerge that fails (or a DB without its operator: MERGE-OPERATOR
// removed) leaves the operands and the entry under them as they were, for
// reads to report the error with the key: a bad operand must not stop
// every compaction of the DB, nor lose the value under it.
type compactionInput struct {
	ci    *compactionIter
	in    entryIter
	merge *merger
	d     *DB

	steps   int  // input entries read, for cancellation checks
	valid   bool // in is at an entry not yet consumed
	advance bool // the entry last returned is in's current one: step past it

	// onKey, if set, is called with each entry's key before it is decided
	// (a compaction sets compactionIter.bottommost per key).
	onKey func(k []byte)

	// keepNext makes the next entry (the Set or Delete under operands
	// whose FullMerge failed) bypass the shadowing rule.
	keepNext bool

	// pending holds the entries of a merged key still to return.
	pending  []compactionEntry
	key      []byte
	operands operandStack
}

type compactionEntry struct {
	trailer base.Trailer
	value   []byte
}

func newCompactionInput(d *DB, ci *compactionIter, in entryIter) *compactionInput {
	return &compactionInput{ci: ci, in: in, merge: &d.merge, d: d}
}

// First positions at the first entry to write.
func (c *compactionInput) First() (key []byte, tr base.Trailer, value []byte, ok bool) {
	c.valid, c.advance, c.pending = c.in.First(), false, c.pending[:0]
	return c.Next()
}

// Next returns the next entry to write; the slices are valid until the
// following call.
func (c *compactionInput) Next() (key []byte, tr base.Trailer, value []byte, ok bool) {
	if len(c.pending) > 0 {
		e := c.pending[0]
		c.pending = c.pending[1:]
		return c.key, e.trailer, e.value, true
	}
	if c.advance {
		c.valid, c.advance = c.in.Next(), false
		c.steps++
	}
	for c.valid {
		k, tr := c.in.UserKey(), c.in.Trailer()
		if c.onKey != nil {
			c.onKey(k)
		}
		if c.keepNext {
			c.keepNext = false
			c.advance = true
			return k, tr, c.in.Value(), true
		}
		out, keep := c.ci.keep(k, tr)
		if !keep {
			c.valid = c.in.Next()
			c.steps++
			continue
		}
		if tr.Kind() != base.KindMerge {
			c.advance = true
			return k, out, c.in.Value(), true
		}
		c.mergeOperands(tr)
		if len(c.pending) > 0 {
			e := c.pending[0]
			c.pending = c.pending[1:]
			return c.key, e.trailer, e.value, true
		}
	}
	return nil, 0, nil, false
}

// mergeOperands combines the operands starting at in's current entry (the
// newest of its stripe, kept) into c.pending, leaving in at the first entry
// after them.
func (c *compactionInput) mergeOperands(first base.Trailer) {
	c.key = append(c.key[:0], c.in.UserKey()...)
	stripe := c.ci.stripe(first.SeqNum())
	ops := &c.operands
	ops.reset()
	ops.push(c.in.Value(), first.SeqNum())
	var existing []byte
	// onEntry: in is at the Set or Delete under the operands, not deleted
	// by a range tombstone.
	full, onEntry := false, false
	for c.valid = c.in.Next(); c.valid; c.valid = c.in.Next() {
		c.steps++
		k, tr := c.in.UserKey(), c.in.Trailer()
		if !bytes.Equal(k, c.key) || c.ci.stripe(tr.SeqNum()) != stripe {
			break
		}
		if c.ci.tombs != nil && c.ci.tombs.Covers(k, tr.SeqNum(), c.ci.stripeTop(stripe)) {
			full = true
			break
		}
		if tr.Kind() == base.KindMerge {
			ops.push(c.in.Value(), tr.SeqNum())
			continue
		}
		if tr.Kind() == base.KindSet {
			existing = c.in.Value()
		}
		full, onEntry = true, true
		break
	}
	endOfKey := !c.valid || !bytes.Equal(c.in.UserKey(), c.key)
	if !full && endOfKey && c.ci.bottommost {
		full = true // nothing older is left anywhere
	}
	c.pending = c.pending[:0]
	if full {
		v, err := c.merge.fullMerge(c.key, existing, ops.operands(true /* newestFirst */))
		if err == nil {
			seq := first.SeqNum()
			if c.ci.bottommost && stripe == 0 {
				seq = 0
			}
			c.pending = append(c.pending, compactionEntry{trailer: base.MakeTrailer(seq, base.KindSet), value: v})
			return
		}
		c.d.opts.Logger.Warn("lsm: merge operands left unmerged", "key", c.key, "err", err)
		c.keepNext = onEntry
		for i := range ops.len() {
			c.pending = append(c.pending, compactionEntry{trailer: base.MakeTrailer(ops.seqs[i], base.KindMerge), value: ops.at(i)})
		}
		return
	}
	// Partial merges, oldest first; the result is written newest first.
	for i := ops.len() - 1; i >= 0; i-- {
		v, seq := ops.at(i), ops.seqs[i]
		if n := len(c.pending); n > 0 {
			if merged, ok := c.merge.partialMerge(c.key, c.pending[n-1].value, v); ok {
				c.pending[n-1] = compactionEntry{trailer: base.MakeTrailer(seq, base.KindMerge), value: merged}
				continue
			}
		}
		c.pending = append(c.pending, compactionEntry{trailer: base.MakeTrailer(seq, base.KindMerge), value: v})
	}
	for i, j := 0, len(c.pending)-1; i < j; i, j = i+1, j-1 {
		c.pending[i], c.pending[j] = c.pending[j], c.pending[i]
	}
}

package lsm

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/merge"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/cockroachdb/errors"
)

// IterOptions configure an Iterator.
type IterOptions struct {
	// LowerBound and UpperBound limit the iterator to keys in
	// [LowerBound, UpperBound); nil means unbounded. Backward iteration
	// stops at LowerBound without walking below it.
	LowerBound, UpperBound []byte
	// Snapshot, if set, iterates as of the snapshot.
	Snapshot *Snapshot
	// Stats, if set, accumulates the blocks the iterator reads.
	Stats *ReadStats
}

// Iterator walks the DB's live keys in order, in either direction, as of
// the moment it was created (or its snapshot). Key and Value are valid
// until the iterator moves. An Iterator is not safe for concurrent use;
// Close it when done.
type Iterator struct {
	d       *DB
	rs      *readState
	seq     base.SeqNum
	lower   []byte
	upper   []byte
	merged  *merge.Iter
	tombs   *rangedel.Set
	skipped int64

	valid   bool
	reverse bool // in reverse, merged is positioned before the current key
	key     []byte
	value   []byte
	err     error
	closed  bool
}

// NewIter returns an iterator over the DB.
func (d *DB) NewIter(o *IterOptions) (*Iterator, error) {
	var opts IterOptions
	if o != nil {
		opts = *o
	}
	rs := d.loadReadState()
	if d.isClosed() {
		rs.unref()
		return nil, errors.Wrap(ErrClosed, "lsm: NewIter")
	}
	it := &Iterator{d: d, rs: rs, seq: base.SeqNum(d.visibleSeq.Load()), lower: opts.LowerBound, upper: opts.UpperBound}
	if opts.Snapshot != nil {
		it.seq = opts.Snapshot.seq
	}
	tableOpts := sstable.IterOptions{LowerBound: opts.LowerBound, UpperBound: opts.UpperBound, Stats: opts.Stats}

	// Range tombstones of every source that overlaps the bounds.
	var ts []rangedel.Tombstone
	addFrags := func(set *rangedel.Set) {
		for _, f := range set.Fragments() {
			if it.upper != nil && bytes.Compare(f.Start, it.upper) >= 0 || it.lower != nil && bytes.Compare(f.End, it.lower) <= 0 {
				continue
			}
			for _, s := range f.Seqs {
				if s <= it.seq {
					ts = append(ts, rangedel.Tombstone{Start: f.Start, End: f.End, Seq: s})
				}
			}
		}
	}
	var children []base.InternalIterator
	var withSeq []maxSeqer
	for _, m := range rs.memtables {
		if set := m.rangeDelSet(); set != nil {
			addFrags(set)
		}
		mi := &memIter{maxSeq: base.SeqNum(m.maxSeq.Load())}
		m.mt.InitPointIter(&mi.Iterator)
		withSeq = append(withSeq, mi)
	}
	v := rs.version
	for _, t := range v.Tables(0) {
		if it.upper != nil && bytes.Compare(t.Smallest.UserKey, it.upper) >= 0 || it.lower != nil && tableBefore(t, it.lower) {
			continue
		}
		withSeq = append(withSeq, newLevelIter(d, []*manifest.TableMeta{t}, tableOpts))
	}
	for level := 1; level < manifest.NumLevels; level++ {
		if tables := v.Tables(level); len(tables) > 0 {
			withSeq = append(withSeq, newLevelIter(d, tables, tableOpts))
		}
	}
	// Tombstones of the tables within the bounds.
	for level := 0; level < manifest.NumLevels; level++ {
		for _, t := range v.Tables(level) {
			if t.RangeDeletions == 0 || it.upper != nil && bytes.Compare(t.Smallest.UserKey, it.upper) >= 0 || it.lower != nil && tableBefore(t, it.lower) {
				continue
			}
			h, err := d.tableCache.get(t.FileNum)
			if err != nil {
				rs.unref()
				return nil, err
			}
			addFrags(h.tombstones) // copies the keys (BuildSet below)
			d.tableCache.release(h)
		}
	}
	if len(ts) > 0 {
		it.tombs = rangedel.BuildSet(ts)
	}
	for _, c := range withSeq {
		if it.tombs == nil {
			children = append(children, c)
			continue
		}
		s := &skipDeletedIter{maxSeqer: c, readSeq: it.seq, skipped: &it.skipped}
		s.frags.Init(it.tombs)
		children = append(children, s)
	}
	it.merged = merge.NewIter(children...)
	d.metrics.iterators.Add(1)
	return it, nil
}

// Valid reports whether the iterator is at a key.
func (it *Iterator) Valid() bool { return it.valid }

// Key returns the current key.
func (it *Iterator) Key() []byte { return it.key }

// Value returns the current value.
func (it *Iterator) Value() []byte { return it.value }

// Error returns the error that stopped the iterator, if any.
func (it *Iterator) Error() error {
	if it.err != nil {
		return it.err
	}
	return it.d.markIfClosed(it.merged.Error())
}

// Close releases the iterator's resources.
func (it *Iterator) Close() error {
	if it.closed {
		return errors.Wrap(ErrClosed, "lsm: iterator closed twice")
	}
	it.closed = true
	it.valid = false
	err := it.merged.Close()
	if it.err != nil {
		err = it.err
	}
	it.rs.unref()
	it.d.metrics.rangeDelSkips.Add(it.skipped)
	return it.d.markIfClosed(err)
}

func (it *Iterator) usable() bool {
	if it.closed {
		it.err = errors.Wrap(ErrClosed, "lsm: iterator used after Close")
		it.valid = false
		return false
	}
	return true
}

// visible reports whether an entry is seen by the iterator's snapshot and
// not deleted by a newer range tombstone.
func (it *Iterator) deleted(key []byte, tr base.Trailer) bool {
	return tr.Kind() != base.KindSet || it.tombs != nil && it.tombs.Covers(key, tr.SeqNum(), it.seq)
}

// findNext moves forward from the merged position to the first live key,
// skipping keys equal to skip (already returned or decided).
func (it *Iterator) findNext(skip []byte, haveSkip bool) bool {
	m := it.merged
	for ok := m.Valid(); ok; ok = m.Next() {
		k, tr := m.UserKey(), m.Trailer()
		if it.upper != nil && bytes.Compare(k, it.upper) >= 0 {
			break
		}
		if tr.SeqNum() > it.seq {
			continue
		}
		if haveSkip && bytes.Equal(k, skip) {
			continue
		}
		if it.deleted(k, tr) {
			skip = append(skip[:0], k...)
			haveSkip = true
			continue
		}
		it.key = append(it.key[:0], k...)
		it.value = append(it.value[:0], m.Value()...)
		it.valid, it.reverse = true, false
		return true
	}
	it.valid = false
	return false
}

// findPrev moves backward from the merged position to the last live key;
// it leaves merged before that key's entries.
func (it *Iterator) findPrev() bool {
	m := it.merged
	have := false // key/value hold a live candidate
	for m.Valid() {
		k, tr := m.UserKey(), m.Trailer()
		if it.lower != nil && bytes.Compare(k, it.lower) < 0 {
			break
		}
		if tr.SeqNum() <= it.seq {
			if have && bytes.Compare(k, it.key) < 0 {
				break // the candidate's newest visible version is decided
			}
			if it.deleted(k, tr) {
				have = false
				it.key = append(it.key[:0], k...)
			} else {
				have = true
				it.key = append(it.key[:0], k...)
				it.value = append(it.value[:0], m.Value()...)
			}
		}
		m.Prev()
	}
	it.valid, it.reverse = have, true
	return have
}

// SeekGE moves to the first key >= key.
func (it *Iterator) SeekGE(key []byte) bool {
	if !it.usable() {
		return false
	}
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.merged.SeekGE(key, base.SeekTrailer(base.SeqNumMax))
	return it.findNext(nil, false)
}

// SeekLT moves to the last key < key.
func (it *Iterator) SeekLT(key []byte) bool {
	if !it.usable() {
		return false
	}
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	it.merged.SeekLT(key, base.SeekTrailer(base.SeqNumMax))
	return it.findPrev()
}

// First moves to the first key.
func (it *Iterator) First() bool {
	if !it.usable() {
		return false
	}
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	it.merged.First()
	return it.findNext(nil, false)
}

// Last moves to the last key.
func (it *Iterator) Last() bool {
	if !it.usable() {
		return false
	}
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	it.merged.Last()
	return it.findPrev()
}

// Next moves to the next key.
func (it *Iterator) Next() bool {
	if !it.usable() || !it.valid {
		return false
	}
	if it.reverse {
		// merged is before the current key: move it to the key's entries.
		it.merged.SeekGE(it.key, base.SeekTrailer(base.SeqNumMax))
	}
	return it.findNext(it.key, true)
}

// Prev moves to the previous key.
func (it *Iterator) Prev() bool {
	if !it.usable() || !it.valid {
		return false
	}
	if !it.reverse {
		// merged is at the current key's newest entry: move before it.
		it.merged.SeekLT(it.key, base.SeekTrailer(base.SeqNumMax))
	}
	return it.findPrev()
}

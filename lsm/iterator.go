package lsm

import (
	"bytes"
	"sort"

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
	d   *DB
	s   *iterState // nil once closed
	err error      // after Close
}

// iterState is an iterator's working state: the merging iterator, its
// children and buffers. It is pooled per DB, so that an iteration reuses
// the memory of earlier ones (a floor lookup allocates nothing).
type iterState struct {
	d       *DB
	rs      *readState
	seq     base.SeqNum
	lower   []byte // nil, or lowerBuf
	upper   []byte
	merged  merge.Iter
	tombs   *rangedel.Set
	skipped int64

	valid   bool
	reverse bool // in reverse, merged is positioned before the current key
	key     []byte
	value   []byte
	err     error

	// Reused from one iteration to the next.
	lowerBuf, upperBuf []byte
	ts                 []rangedel.Tombstone
	memIters           []memIter
	levelIters         []levelIter
	skips              []skipDeletedIter
	withSeq            []maxSeqer
	children           []base.InternalIterator
	operands           operandStack // a merged key's operands (merge_read.go)
	mergeBase          []byte       // the value under them, walking backward

	// minRun is MinTombstonesForRangeConversion (0: off); run the run of
	// point tombstones being walked (tombstone_conversion.go).
	minRun int
	run    tombstoneRun
}

// resize returns s with length n, reusing its array when it is big
// enough (elements keep their buffers).
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return append(s[:cap(s)], make([]T, n-cap(s))...)
	}
	return s[:n]
}

// NewIter returns an iterator over the DB.
func (d *DB) NewIter(o *IterOptions) (*Iterator, error) {
	var opts IterOptions
	if o != nil {
		opts = *o
	}
	s, err := d.newIterState(opts.LowerBound, opts.UpperBound, opts.Snapshot, opts.Stats)
	if err != nil {
		return nil, err
	}
	return &Iterator{d: d, s: s}, nil
}

// newIterState takes an iteration state from the pool and sets it up. The
// bounds are copied, so the caller's may live on its stack (escape analysis
// does not tell a struct's fields apart, hence separate arguments).
func (d *DB) newIterState(lower, upper []byte, snapshot *Snapshot, stats *ReadStats) (*iterState, error) {
	return d.newIterStateOn(d.loadReadState(), lower, upper, snapshot, stats)
}

// newIterStateOn is newIterState on a read state the caller loaded; it
// takes over the caller's reference.
func (d *DB) newIterStateOn(rs *readState, lower, upper []byte, snapshot *Snapshot, stats *ReadStats) (*iterState, error) {
	if d.isClosed() {
		rs.unref()
		return nil, errors.Wrap(ErrClosed, "lsm: NewIter")
	}
	s, _ := d.iterPool.Get().(*iterState)
	if s == nil {
		s = &iterState{}
	}
	s.d, s.rs, s.seq = d, rs, base.SeqNum(d.visibleSeq.Load())
	if snapshot != nil {
		s.seq = snapshot.seq
	}
	s.lower, s.upper = nil, nil
	if lower != nil {
		s.lowerBuf = append(s.lowerBuf[:0], lower...)
		s.lower = s.lowerBuf
	}
	if upper != nil {
		s.upperBuf = append(s.upperBuf[:0], upper...)
		s.upper = s.upperBuf
	}
	s.valid, s.reverse, s.err, s.tombs, s.skipped = false, false, nil, nil, 0
	s.minRun = 0
	// An iterator reading at an older snapshot does not convert runs: its
	// tombstone would go into the mutable memtable at the snapshot's
	// sequence number, below entries of the immutable memtables and tables
	// under it, which the read path takes to be older than the memtable
	// (TestTombstoneConversionConcurrent lost live keys that way under load).
	if !d.opts.ReadOnly && (snapshot == nil || snapshot.seq >= base.SeqNum(d.visibleSeq.Load())) {
		s.minRun = d.opts.MinTombstonesForRangeConversion
	}
	tableOpts := sstable.IterOptions{LowerBound: s.lower, UpperBound: s.upper, Stats: stats}
	v := rs.version

	// The children: memtables, the L0 tables in the bounds, then one
	// iterator per non-empty level.
	s.memIters = resize(s.memIters, len(rs.memtables))
	nLevels := 0
	for _, t := range v.Tables(0) {
		if s.inBounds(t) {
			nLevels++
		}
	}
	for level := 1; level < manifest.NumLevels; level++ {
		if v.NumTables(level) > 0 {
			nLevels++
		}
	}
	s.levelIters = resize(s.levelIters, nLevels)
	s.withSeq = s.withSeq[:0]
	s.ts = s.ts[:0]
	for i, m := range rs.memtables {
		if set := m.rangeDelSet(); set != nil {
			s.addTombstones(set)
		}
		mi := &s.memIters[i]
		mi.maxSeq = base.SeqNum(m.maxSeq.Load())
		m.mt.InitPointIter(&mi.Iterator)
		s.withSeq = append(s.withSeq, mi)
	}
	j := 0
	l0 := v.Tables(0)
	for i, t := range l0 {
		if !s.inBounds(t) {
			continue
		}
		s.levelIters[j].init(d, l0[i:i+1], tableOpts)
		s.withSeq = append(s.withSeq, &s.levelIters[j])
		j++
	}
	for level := 1; level < manifest.NumLevels; level++ {
		if tables := v.Tables(level); len(tables) > 0 {
			s.levelIters[j].init(d, tables, tableOpts)
			s.withSeq = append(s.withSeq, &s.levelIters[j])
			j++
		}
	}
	// Range tombstones of the tables within the bounds.
	for level := 0; level < manifest.NumLevels; level++ {
		for _, t := range v.Tables(level) {
			if t.RangeDeletions == 0 || !s.inBounds(t) {
				continue
			}
			h, err := d.tableCache.get(t.FileNum)
			if err != nil {
				s.release()
				return nil, err
			}
			s.addTombstones(h.tombstones) // BuildSet below copies the keys
			d.tableCache.release(h)
		}
	}
	s.children = s.children[:0]
	if len(s.ts) > 0 {
		s.tombs = rangedel.BuildSet(s.ts)
		s.skips = resize(s.skips, len(s.withSeq))
		for i, c := range s.withSeq {
			sk := &s.skips[i]
			*sk = skipDeletedIter{maxSeqer: c, readSeq: s.seq, skipped: &s.skipped}
			sk.frags.Init(s.tombs)
			s.children = append(s.children, sk)
		}
	} else {
		for _, c := range s.withSeq {
			s.children = append(s.children, c)
		}
	}
	s.merged.Init(s.children...)
	d.metrics.iterators.Add(1)
	return s, nil
}

// inBounds reports whether table t may hold keys within the bounds.
func (s *iterState) inBounds(t *manifest.TableMeta) bool {
	return (s.upper == nil || bytes.Compare(t.Smallest.UserKey, s.upper) < 0) && (s.lower == nil || !tableBefore(t, s.lower))
}

// addTombstones collects the tombstones of set that overlap the bounds and
// are visible at the iteration's sequence number.
func (s *iterState) addTombstones(set *rangedel.Set) {
	frags := set.Fragments()
	i := 0
	if s.lower != nil {
		// Fragments are sorted and disjoint: skip those ending before
		// the lower bound.
		i = sort.Search(len(frags), func(i int) bool { return bytes.Compare(frags[i].End, s.lower) > 0 })
	}
	for ; i < len(frags); i++ {
		f := &frags[i]
		if s.upper != nil && bytes.Compare(f.Start, s.upper) >= 0 {
			break
		}
		for _, seq := range f.Seqs {
			if seq <= s.seq {
				s.ts = append(s.ts, rangedel.Tombstone{Start: f.Start, End: f.End, Seq: seq})
			}
		}
	}
}

// close closes the children and returns the state to the pool.
func (s *iterState) close() error {
	err := s.merged.Close()
	if s.err != nil {
		err = s.err
	}
	s.d.metrics.rangeDelSkips.Add(s.skipped)
	d := s.d
	s.release()
	return d.markIfClosed(err)
}

// release drops the state's references and pools it.
func (s *iterState) release() {
	d := s.d
	s.rs.unref()
	s.rs, s.tombs, s.valid = nil, nil, false
	clear(s.ts)
	clear(s.withSeq)
	clear(s.children)
	for i := range s.memIters {
		s.memIters[i] = memIter{}
	}
	for i := range s.levelIters {
		l := &s.levelIters[i]
		l.d, l.tables, l.handle, l.iter = nil, nil, nil, nil
	}
	for i := range s.skips {
		s.skips[i] = skipDeletedIter{}
	}
	s.d = nil
	d.iterPool.Put(s)
}

// LastInRange appends to keyDst and valueDst the last live key in
// [lower, upper) and its value. It is what a floor lookup needs, without an
// Iterator: with the blocks cached and room in the buffers it allocates
// nothing. found is false when the range holds no live key.
func (d *DB) LastInRange(keyDst, valueDst, lower, upper []byte, ro *ReadOptions) (key, value []byte, found bool, err error) {
	var snapshot *Snapshot
	var stats *ReadStats
	if ro != nil {
		snapshot, stats = ro.Snapshot, ro.Stats
	}
	if !d.generalFloorsOnly {
		k, v, found, handled, err := d.lastInOneTableStriped(keyDst, valueDst, lower, upper, snapshot, stats)
		if handled || err != nil {
			return k, v, found, err
		}
	}
	// The general path reads a state perhaps newer than the one-table
	// path saw: either is a state current during the call.
	s, err := d.newIterStateOn(d.loadReadState(), lower, upper, snapshot, stats)
	if err != nil {
		return keyDst, valueDst, false, err
	}
	if s.Last() {
		keyDst = append(keyDst, s.key...)
		valueDst = append(valueDst, s.value...)
		found = true
	}
	if err := s.Error(); err != nil {
		_ = s.close()
		return keyDst, valueDst, false, err
	}
	return keyDst, valueDst, found, s.close()
}

// Valid reports whether the iterator is at a key.
func (it *Iterator) Valid() bool { return it.s != nil && it.s.valid }

// Key returns the current key.
func (it *Iterator) Key() []byte {
	if it.s == nil {
		return nil
	}
	return it.s.key
}

// Value returns the current value.
func (it *Iterator) Value() []byte {
	if it.s == nil {
		return nil
	}
	return it.s.value
}

// Error returns the error that stopped the iterator, if any.
func (it *Iterator) Error() error {
	if it.s == nil {
		return it.err
	}
	return it.s.Error()
}

// Close releases the iterator's resources; the iterator must not be used
// afterwards (its methods then fail with ErrClosed).
func (it *Iterator) Close() error {
	if it.s == nil {
		return errors.Wrap(ErrClosed, "lsm: iterator closed twice")
	}
	err := it.s.close()
	it.s = nil
	it.err = errIteratorClosed
	return err
}

// errIteratorClosed is made once: Close is on every iteration's path and a
// fresh error would capture a stack each time.
var errIteratorClosed = errors.Wrap(ErrClosed, "lsm: iterator used after Close")

// use returns the state, or nil (recording why) after Close.
func (it *Iterator) use() *iterState {
	if it.s == nil {
		it.err = errIteratorClosed
	}
	return it.s
}

// SeekGE moves to the first key >= key.
func (it *Iterator) SeekGE(key []byte) bool { s := it.use(); return s != nil && s.SeekGE(key) }

// SeekLT moves to the last key < key.
func (it *Iterator) SeekLT(key []byte) bool { s := it.use(); return s != nil && s.SeekLT(key) }

// First moves to the first key.
func (it *Iterator) First() bool { s := it.use(); return s != nil && s.First() }

// Last moves to the last key.
func (it *Iterator) Last() bool { s := it.use(); return s != nil && s.Last() }

// Next moves to the next key.
func (it *Iterator) Next() bool { s := it.use(); return s != nil && s.Next() }

// Prev moves to the previous key.
func (it *Iterator) Prev() bool { s := it.use(); return s != nil && s.Prev() }

// Error returns the error that stopped the iteration, if any.
func (it *iterState) Error() error {
	if it.err != nil {
		return it.err
	}
	return it.d.markIfClosed(it.merged.Error())
}

// deleted reports whether a visible entry hides its key: a point tombstone
// (or a kind the iterator does not know), or an entry a newer range
// tombstone deletes.
func (it *iterState) deleted(key []byte, tr base.Trailer) bool {
	if k := tr.Kind(); k != base.KindSet && k != base.KindMerge {
		return true
	}
	return it.tombs != nil && it.tombs.Covers(key, tr.SeqNum(), it.seq)
}

// findNext moves forward from the merged position to the first live key,
// skipping keys equal to skip (already returned or decided).
func (it *iterState) findNext(skip []byte, haveSkip bool) bool {
	m := &it.merged
	convert := it.conversionOn()
	if convert {
		it.runReset(nil)
	}
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
			if convert {
				it.runForward(k, it.pointDeleted(k, tr))
			}
			skip = append(skip[:0], k...)
			haveSkip = true
			continue
		}
		if convert {
			it.runLive(k)
		}
		it.key = append(it.key[:0], k...)
		if tr.Kind() == base.KindMerge {
			return it.mergeForward()
		}
		it.value = append(it.value[:0], m.Value()...)
		it.valid, it.reverse = true, false
		return true
	}
	if convert && it.run.count > 0 {
		it.runForwardDone(skip)
	}
	it.valid = false
	return false
}

// pointDeleted reports whether a deleted entry is a point tombstone that no
// range tombstone deletes.
func (it *iterState) pointDeleted(key []byte, tr base.Trailer) bool {
	return tr.Kind() == base.KindDelete && (it.tombs == nil || !it.tombs.Covers(key, tr.SeqNum(), it.seq))
}

// findPrev moves backward from the merged position to the last live key;
// it leaves merged before that key's entries. A key's entries come oldest
// first, so each visible one replaces the candidate (a Set or Delete) or
// stacks on it (a merge operand, see mergeBackward).
//
// end is the exclusive end of the keys walked (nil: unbounded), for the
// conversion of point-tombstone runs.
func (it *iterState) findPrev(end []byte) bool {
	m := &it.merged
	have := false    // key/value hold a live candidate
	merging := false // ... made of it.operands over it.mergeBase
	hasBase := false // the candidate's operands stack on a Set
	// For the conversion: the candidate exists and, when deleted, is so by
	// a point tombstone.
	convert := it.conversionOn()
	haveCand, candPoint := false, false
	if convert {
		it.runReset(end)
	}
	for m.Valid() {
		k, tr := m.UserKey(), m.Trailer()
		if it.lower != nil && bytes.Compare(k, it.lower) < 0 {
			break
		}
		if tr.SeqNum() <= it.seq {
			if have && bytes.Compare(k, it.key) < 0 {
				break // the candidate's newest visible version is decided
			}
			if convert {
				if haveCand && bytes.Compare(k, it.key) < 0 {
					it.runBackward(it.key, candPoint) // a deleted candidate is decided
				}
				haveCand, candPoint = true, it.pointDeleted(k, tr)
			}
			switch {
			case it.deleted(k, tr):
				have, merging = false, false
				it.key = append(it.key[:0], k...)
			case tr.Kind() == base.KindMerge:
				if !merging {
					// On a Set of this key (have), or on nothing.
					hasBase = have
					if have {
						it.mergeBase = append(it.mergeBase[:0], it.value...)
					}
					it.operands.reset()
					merging = true
				}
				have = true
				it.key = append(it.key[:0], k...)
				it.operands.push(m.Value(), tr.SeqNum())
			default:
				have, merging = true, false
				it.key = append(it.key[:0], k...)
				it.value = append(it.value[:0], m.Value()...)
			}
		}
		m.Prev()
	}
	if convert {
		if haveCand && !have {
			it.runBackward(it.key, candPoint)
		}
		it.runBackwardDone()
	}
	if merging && !it.mergeBackward(hasBase) {
		have = false
	}
	it.valid, it.reverse = have, true
	return have
}

// SeekGE moves to the first key >= key.
func (it *iterState) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.merged.SeekGE(key, base.SeekTrailer(base.SeqNumMax))
	return it.findNext(nil, false)
}

// SeekLT moves to the last key < key.
func (it *iterState) SeekLT(key []byte) bool {
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	it.merged.SeekLT(key, base.SeekTrailer(base.SeqNumMax))
	return it.findPrev(key)
}

// First moves to the first key.
func (it *iterState) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	it.merged.First()
	return it.findNext(nil, false)
}

// Last moves to the last key.
func (it *iterState) Last() bool {
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	it.merged.Last()
	return it.findPrev(nil)
}

// Next moves to the next key.
func (it *iterState) Next() bool {
	if !it.valid {
		return false
	}
	if it.reverse {
		// merged is before the current key: move it to the key's entries.
		it.merged.SeekGE(it.key, base.SeekTrailer(base.SeqNumMax))
	}
	return it.findNext(it.key, true)
}

// Prev moves to the previous key.
func (it *iterState) Prev() bool {
	if !it.valid {
		return false
	}
	if !it.reverse {
		// merged is at the current key's newest entry: move before it.
		it.merged.SeekLT(it.key, base.SeekTrailer(base.SeqNumMax))
	}
	return it.findPrev(it.key)
}

package lsm

import (
	"bytes"
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/memtable"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
)

// The one-table floor. A settled index is one sorted run, and a floor
// lookup (LastInRange over one ledger) then finds its answer in one table
// with nothing above it. The general path still builds a merging iterator
// over every memtable and level, positions each, and steps back over the
// answer's versions: about a third of a cached floor's CPU on the 5M-key
// bench. lastInOneTable answers from the table alone when that cannot
// differ from the general path's answer:
//
//   - no memtable holds a range tombstone, or a point entry in the bounds
//     (of any sequence number);
//   - exactly one table overlaps the bounds, and it has no range
//     tombstones (a range tombstone covering the bounds lives in a
//     memtable or a table overlapping them);
//   - the table's last entry in the bounds is a Set visible at the read's
//     sequence number, and the entry before it in its block holds another
//     user key: SeekLT lands on a key's oldest version, so that Set is the
//     key's only version.
//
// Anything else (a deletion or merge operand at the end of the range,
// several versions, the answer at a restart point or a block's first
// entry, an unbounded range) falls back to the general path.

// lastInRangeScratch is what a one-table floor uses, pooled.
type lastInRangeScratch struct {
	mem   memtable.Iterator
	table sstable.Iter
	// lower and upper are the bounds copied: the pooled table iterator
	// keeps them, and the caller's may live on its stack.
	lower, upper []byte
	// stripe is the read stripe the floor references its read state on
	// (see readStripes).
	stripe int
}

// newLastInRangeScratch is the DB's lastInRangePool's New.
func (d *DB) newLastInRangeScratch() any {
	return &lastInRangeScratch{stripe: int(d.stripes.Add(1) % readStripes)}
}

// lastInOneTableStriped runs lastInOneTable on the current read state,
// referenced on a stripe: a floor that the one table answers takes no
// reference on the line every core updates.
func (d *DB) lastInOneTableStriped(keyDst, valueDst, lower, upper []byte, snapshot *Snapshot, stats *ReadStats) (key, value []byte, found, handled bool, err error) {
	sc := d.lastInRangePool.Get().(*lastInRangeScratch)
	rs := d.loadReadStateStripe(sc.stripe)
	key, value, found, handled, err = d.lastInOneTable(rs, sc, keyDst, valueDst, lower, upper, snapshot, stats)
	rs.unrefStripe(sc.stripe)
	sc.mem = memtable.Iterator{} // see GetAppend
	d.lastInRangePool.Put(sc)
	return key, value, found, handled, err
}

// lastInOneTable tries the one-table floor on the read state rs with the
// scratch sc. handled is false when the general path must answer.
func (d *DB) lastInOneTable(rs *readState, sc *lastInRangeScratch, keyDst, valueDst, lower, upper []byte, snapshot *Snapshot, stats *ReadStats) (key, value []byte, found, handled bool, err error) {
	if lower == nil || upper == nil || bytes.Compare(lower, upper) >= 0 {
		return keyDst, valueDst, false, false, nil
	}
	if d.isClosed() {
		return keyDst, valueDst, false, false, nil // the general path reports it
	}
	seq := base.SeqNum(d.visibleSeq.Load())
	if snapshot != nil {
		seq = snapshot.seq
	}
	for _, m := range rs.memtables {
		if m.mt.Empty() {
			continue
		}
		if m.rangeDelSet() != nil {
			return keyDst, valueDst, false, false, nil
		}
		m.mt.InitPointIter(&sc.mem)
		if sc.mem.SeekLT(upper, base.SeekTrailer(base.SeqNumMax)) && bytes.Compare(sc.mem.UserKey(), lower) >= 0 {
			return keyDst, valueDst, false, false, nil
		}
	}
	t, ok := onlyTableInRange(rs.version, lower, upper)
	if !ok || t != nil && t.RangeDeletions > 0 {
		return keyDst, valueDst, false, false, nil
	}
	if t == nil {
		return keyDst, valueDst, false, true, nil // nothing anywhere in the bounds
	}
	h, err := d.tableCache.get(t.FileNum)
	if err != nil {
		return keyDst, valueDst, false, true, err
	}
	defer d.tableCache.release(h)
	sc.lower, sc.upper = append(sc.lower[:0], lower...), append(sc.upper[:0], upper...)
	it := &sc.table
	h.reader.InitIter(it, sstable.IterOptions{LowerBound: sc.lower, UpperBound: sc.upper, Stats: stats})
	valid := it.SeekLT(sc.upper, base.SeekTrailer(base.SeqNumMax))
	if valid {
		tr := it.Trailer()
		if tr.Kind() != base.KindSet || tr.SeqNum() > seq || !it.PrevKeyDiffers() {
			if err := it.Close(); err != nil {
				return keyDst, valueDst, false, true, err
			}
			return keyDst, valueDst, false, false, nil
		}
		keyDst = append(keyDst, it.UserKey()...)
		valueDst = append(valueDst, it.Value()...)
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return keyDst, valueDst, false, true, err
	}
	return keyDst, valueDst, valid, true, nil
}

// onlyTableInRange returns the one table of v overlapping the user keys
// [lower, upper) (nil if none); ok is false if more than one does.
func onlyTableInRange(v *manifest.Version, lower, upper []byte) (t *manifest.TableMeta, ok bool) {
	overlaps := func(m *manifest.TableMeta) bool {
		return bytes.Compare(m.Smallest.UserKey, upper) < 0 && !tableBefore(m, lower)
	}
	for _, m := range v.Tables(0) {
		if overlaps(m) {
			if t != nil {
				return nil, false
			}
			t = m
		}
	}
	for level := 1; level < manifest.NumLevels; level++ {
		tables := v.Tables(level)
		i := sort.Search(len(tables), func(i int) bool { return !tableBefore(tables[i], lower) })
		for ; i < len(tables) && bytes.Compare(tables[i].Smallest.UserKey, upper) < 0; i++ {
			if t != nil {
				return nil, false
			}
			t = tables[i]
		}
	}
	return t, true
}

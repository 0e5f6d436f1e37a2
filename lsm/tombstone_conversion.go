package lsm

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
)

// Read-path conversion of point-tombstone runs (Options.
// MinTombstonesForRangeConversion). An iterator that steps over at least
// that many consecutive keys whose newest visible entry is a point
// tombstone, with no live key between them, inserts one range tombstone
// [first tombstone, next live key) into the mutable memtable, so that later
// iterations seek past the run (skipDeletedIter) instead of stepping
// through it. The tombstone is derived data: it is not written to the WAL
// (a crash loses it; a later read makes it again).
//
// Its sequence number is the iterator's read sequence number Q. That is
// safe for every reader: one below Q does not see it; for one at or above
// Q, every entry of the span older than Q is already deleted — the keys the
// iterator saw in the span were point-deleted (newest entry at or below Q a
// Delete), deleted by a range tombstone at or below Q, or had no entry at
// or below Q — so it hides nothing that was visible, and entries newer than
// Q (newer writes) are above it. Q is the largest safe choice, and it has
// to be: a smaller one (the run's newest tombstone, RocksDB's choice before
// it raises it to the memtable's first sequence number) is not above the
// table holding the run, so later iterations could not seek past that
// table and would not get faster. An entry with sequence number exactly Q
// in the span can only be one of the run's tombstones, which is why
// skipDeletedIter seeks past a fragment whose sequence number equals a
// child's largest.
//
// An iterator at a snapshot older than the DB does not convert at all:
// its Q may be below entries of the immutable memtables and tables under
// the mutable memtable, which the read path takes to be older than it.
//
// Get stops at the first source newer than nothing it still has to look
// for (every entry older than the newest covering tombstone seen so far);
// that relies on the sources below a memtable being older than it, which
// ingestion breaks: a table ingested with sequence numbers above Q sits
// under the memtable. So the insertion is dropped
// (ReadPathRangeTombstonesDiscarded) when a table was ingested above Q, as
// well as when the memtable switched since the iterator was made, or when a
// commit is in progress (an iterator never waits for writers). An ingestion
// after the insertion sees the memtable's tombstone and flushes it first. It is skipped when the
// memtable already holds a tombstone covering the span at Q or above (the
// same run met by another iterator).

// tombstoneRun tracks the current run of point tombstones of one
// positioning call of an iterator.
type tombstoneRun struct {
	count int
	start []byte // forward: the run's first key; backward: its smallest so far
	end   []byte // backward: the run's exclusive end
	// endSet: backward, end is set (an unbounded Last starts without one).
	endSet bool
}

// conversionOn reports whether the iterator converts runs.
func (it *iterState) conversionOn() bool { return it.minRun > 0 }

// runReset starts a new run; backward, end is the exclusive end of the
// keys about to be walked (nil: unbounded).
func (it *iterState) runReset(end []byte) {
	r := &it.run
	r.count = 0
	r.endSet = end != nil
	if end != nil {
		r.end = append(r.end[:0], end...)
	}
}

// runForward notes the decision of key k walking forward. A key whose
// newest visible entry is a point tombstone that no range tombstone
// deletes (pointDeleted) extends the run; a key a range tombstone deletes
// neither extends nor ends it (see the sequence number argument above); a
// live key ends it at k (runLive).
func (it *iterState) runForward(k []byte, pointDeleted bool) {
	r := &it.run
	if !pointDeleted {
		return
	}
	if r.count == 0 {
		r.start = append(r.start[:0], k...)
	}
	r.count++
}

// runLive ends the run at live key k.
func (it *iterState) runLive(k []byte) {
	if it.run.count > 0 {
		it.runEnd(it.run.start, k)
	}
}

// runForwardDone ends a forward walk that stopped at the upper bound or the
// end of the data; last is the last key walked.
func (it *iterState) runForwardDone(last []byte) {
	if it.run.count < it.minRun || it.merged.Error() != nil {
		it.run.count = 0
		return
	}
	if it.upper != nil {
		it.runEnd(it.run.start, it.upper)
		return
	}
	it.runEnd(it.run.start, append(append([]byte(nil), last...), 0))
}

// runBackward notes the final decision of deleted key k walking backward
// (see runForward).
func (it *iterState) runBackward(k []byte, pointDeleted bool) {
	r := &it.run
	if !pointDeleted {
		return
	}
	if !r.endSet {
		r.end = append(append(r.end[:0], k...), 0) // just after k
		r.endSet = true
	}
	r.start = append(r.start[:0], k...)
	r.count++
}

// runBackwardDone ends a backward walk, at a live key or at the start of
// the keys.
func (it *iterState) runBackwardDone() {
	if it.run.count == 0 || it.merged.Error() != nil {
		it.run.count = 0
		return
	}
	it.runEnd(it.run.start, it.run.end)
}

// runEnd converts the run into [start, end) if it is long enough, and
// starts a new one.
func (it *iterState) runEnd(start, end []byte) {
	n := it.run.count
	it.run.count = 0
	if n >= it.minRun && it.err == nil {
		it.d.insertRunTombstone(it, start, end)
	}
}

// insertRunTombstone inserts [start, end) at the iterator's sequence
// number into the memtable that was mutable when the iterator was made.
func (d *DB) insertRunTombstone(it *iterState, start, end []byte) {
	if it.seq == 0 || bytes.Compare(start, end) >= 0 {
		return
	}
	m := it.rs.memtables[0]
	if spanCovered(m.rangeDelSet(), start, end, it.seq) {
		return
	}
	// Switches and ingestions hold the commit lock: with it, the memtable
	// stays mutable and no table is placed under it until the insert is
	// done (and a later ingestion sees the tombstone and flushes first).
	if !d.commitMu.TryLock() {
		d.metrics.readPathTombsDiscarded.Add(1)
		return
	}
	defer d.commitMu.Unlock()
	if d.readState.Load().memtables[0] != m || base.SeqNum(d.ingestedSeq.Load()) > it.seq {
		d.metrics.readPathTombsDiscarded.Add(1)
		return
	}
	m.applyMu.Lock()
	err := m.add(it.seq, base.KindRangeDelete, start, end)
	m.applyMu.Unlock()
	if err != nil {
		// A full arena, or the same tombstone inserted by another
		// iterator (or the batch at Q was a DeleteRange of the same start).
		d.metrics.readPathTombsDiscarded.Add(1)
		return
	}
	d.metrics.readPathTombsInserted.Add(1)
}

// spanCovered reports whether the tombstones of set delete all of
// [start, end) at sequence number seq or above.
func spanCovered(set *rangedel.Set, start, end []byte, seq base.SeqNum) bool {
	if set == nil {
		return false
	}
	var it rangedel.Iter
	it.Init(set)
	at := start
	for f := it.SeekGE(start); f != nil; f = it.Next() {
		if !f.Contains(at) || f.Seqs[0] < seq {
			return false
		}
		if bytes.Compare(f.End, end) >= 0 {
			return true
		}
		at = f.End
	}
	return false
}

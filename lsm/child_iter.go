package lsm

import (
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/memtable"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
)

// memIter adapts a memtable iterator to base.InternalIterator.
type memIter struct {
	memtable.Iterator
	maxSeq base.SeqNum
}

func (m *memIter) Error() error               { return nil }
func (m *memIter) Close() error               { return nil }
func (m *memIter) currentMaxSeq() base.SeqNum { return m.maxSeq }

// maxSeqer is implemented by child iterators that know the largest
// sequence number of the entries around their position.
type maxSeqer interface {
	base.InternalIterator
	currentMaxSeq() base.SeqNum
}

// skipDeletedIter hides the runs of a child's entries that a range
// tombstone newer than all of them deletes, by seeking the child past the
// tombstone's fragment instead of stepping through it. Every entry the
// child holds around its position has a sequence number at most
// currentMaxSeq, so a fragment visible at a newer sequence number deletes
// all of them. One visible at exactly currentMaxSeq does too: no point
// entry shares a sequence number with a written range tombstone, and the
// only one that can share it with a tombstone converted from a run
// (tombstone_conversion.go) is a point tombstone of that run. This is what keeps a floor lookup or a scan over a deleted
// ledger from crawling through its entries until compaction removes them.
type skipDeletedIter struct {
	maxSeqer
	frags   rangedel.Iter
	readSeq base.SeqNum
	skipped *int64 // counts skips, for metrics
}

// deletesAll reports whether fragment f deletes every entry of the child
// within it.
func (s *skipDeletedIter) deletesAll(f *rangedel.Fragment) bool {
	v := f.VisibleSeq(s.readSeq)
	return v > 0 && v >= s.currentMaxSeq()
}

func (s *skipDeletedIter) forward(ok bool) bool {
	for ok {
		f := s.frags.SeekGE(s.UserKey())
		if f == nil || !f.Contains(s.UserKey()) || !s.deletesAll(f) {
			return true
		}
		*s.skipped++
		ok = s.maxSeqer.SeekGE(f.End, base.SeekTrailer(base.SeqNumMax))
	}
	return false
}

func (s *skipDeletedIter) backward(ok bool) bool {
	for ok {
		f := s.frags.SeekGE(s.UserKey())
		if f == nil || !f.Contains(s.UserKey()) || !s.deletesAll(f) {
			return true
		}
		*s.skipped++
		ok = s.maxSeqer.SeekLT(f.Start, base.SeekTrailer(base.SeqNumMax))
	}
	return false
}

func (s *skipDeletedIter) SeekGE(k []byte, t base.Trailer) bool {
	return s.forward(s.maxSeqer.SeekGE(k, t))
}
func (s *skipDeletedIter) SeekLT(k []byte, t base.Trailer) bool {
	return s.backward(s.maxSeqer.SeekLT(k, t))
}
func (s *skipDeletedIter) First() bool { return s.forward(s.maxSeqer.First()) }
func (s *skipDeletedIter) Last() bool  { return s.backward(s.maxSeqer.Last()) }
func (s *skipDeletedIter) Next() bool  { return s.forward(s.maxSeqer.Next()) }
func (s *skipDeletedIter) Prev() bool  { return s.backward(s.maxSeqer.Prev()) }

package merge

import (
	"slices"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// entry is one internal key and value of a test child.
type entry struct {
	userKey []byte
	trailer base.Trailer
	value   []byte
}

func compareEntries(a, b entry) int {
	return base.CompareInternal(a.userKey, a.trailer, b.userKey, b.trailer)
}

// errInjected is the error a sliceIter fails with.
var errInjected = errors.New("injected child failure")

// sliceIter is a base.InternalIterator over sorted entries. It can be made
// to fail: with failAt = k > 0 its k-th positioning call (counting every
// Seek, First, Last, Next and Prev) and every later one return false, and
// Error returns errInjected. closeErr is what Close returns if it is not
// otherwise failing.
type sliceIter struct {
	entries []entry
	// pos is the current entry; -1 or len(entries) when not positioned.
	pos      int
	calls    int
	failAt   int
	err      error
	closeErr error
	closed   int
}

func newSliceIter(entries []entry) *sliceIter {
	return &sliceIter{entries: entries, pos: -1}
}

var _ base.InternalIterator = (*sliceIter)(nil)

// call counts a positioning call and reports whether it may proceed.
func (s *sliceIter) call() bool {
	s.calls++
	if s.failAt > 0 && s.calls >= s.failAt {
		s.err = errInjected
	}
	if s.err != nil {
		s.pos = -1
		return false
	}
	return true
}

// search returns the index of the first entry >= (userKey, trailer).
func (s *sliceIter) search(userKey []byte, trailer base.Trailer) int {
	lo, hi := 0, len(s.entries)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		e := &s.entries[mid]
		if base.CompareInternal(e.userKey, e.trailer, userKey, trailer) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func (s *sliceIter) SeekGE(userKey []byte, trailer base.Trailer) bool {
	if !s.call() {
		return false
	}
	s.pos = s.search(userKey, trailer)
	return s.Valid()
}

func (s *sliceIter) SeekLT(userKey []byte, trailer base.Trailer) bool {
	if !s.call() {
		return false
	}
	s.pos = s.search(userKey, trailer) - 1
	return s.Valid()
}

func (s *sliceIter) First() bool {
	if !s.call() {
		return false
	}
	s.pos = 0
	return s.Valid()
}

func (s *sliceIter) Last() bool {
	if !s.call() {
		return false
	}
	s.pos = len(s.entries) - 1
	return s.Valid()
}

func (s *sliceIter) Next() bool {
	if !s.Valid() {
		panic("sliceIter: Next on an invalid iterator")
	}
	if !s.call() {
		return false
	}
	s.pos++
	return s.Valid()
}

func (s *sliceIter) Prev() bool {
	if !s.Valid() {
		panic("sliceIter: Prev on an invalid iterator")
	}
	if !s.call() {
		return false
	}
	s.pos--
	return s.Valid()
}

func (s *sliceIter) Valid() bool { return s.pos >= 0 && s.pos < len(s.entries) }

func (s *sliceIter) UserKey() []byte {
	if !s.Valid() {
		return nil
	}
	return s.entries[s.pos].userKey
}

func (s *sliceIter) Trailer() base.Trailer {
	if !s.Valid() {
		return 0
	}
	return s.entries[s.pos].trailer
}

func (s *sliceIter) Value() []byte {
	if !s.Valid() {
		return nil
	}
	return s.entries[s.pos].value
}

func (s *sliceIter) Error() error { return s.err }

func (s *sliceIter) Close() error {
	s.closed++
	if s.err != nil {
		return s.err
	}
	return s.closeErr
}

// sortEntries sorts entries in internal order, keeping duplicates in their
// original order.
func sortEntries(entries []entry) {
	slices.SortStableFunc(entries, compareEntries)
}

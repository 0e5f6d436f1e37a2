package merge

import (
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// maxTrailer is the largest trailer: with a user key k, the first internal
// key of k in internal order.
const maxTrailer = ^base.Trailer(0)

// Iter merges child iterators into one iterator in internal order (see the
// package doc). After construction none of its methods allocates, except to
// build an error.
//
// Keys and values returned stay valid until the iterator moves. A seek key
// must not alias memory owned by the iterator (such as a slice returned by
// UserKey): seeking moves every child, and the key could change under the
// children that seek after the one that owns it.
type Iter struct {
	children []base.InternalIterator
	heap     heap
	// err is the first child error; once set the iterator stays invalid.
	err    error
	closed bool
	// successorKey is scratch space for successor.
	successorKey []byte
}

var _ base.InternalIterator = (*Iter)(nil)

// NewIter returns an iterator over the union of iters, which it owns from
// now on (Close closes them). The iterator is unpositioned.
func NewIter(iters ...base.InternalIterator) *Iter {
	i := &Iter{}
	i.Init(iters...)
	return i
}

// Init makes i a fresh, unpositioned iterator over iters, reusing its memory
// so that pooled Iters do not allocate. Any previous children are dropped,
// not closed.
func (i *Iter) Init(iters ...base.InternalIterator) {
	// Copy before clearing: iters may be i.children itself.
	old := i.children
	children := append(i.children[:0], iters...)
	if len(old) > len(children) {
		clear(old[len(children):])
	}
	clear(i.heap.items[:cap(i.heap.items)])
	items := i.heap.items[:0]
	if cap(items) < len(iters) {
		items = make([]item, 0, len(iters))
	}
	*i = Iter{children: children, heap: heap{items: items}, successorKey: i.successorKey[:0]}
}

// SeekGE moves to the first entry >= (userKey, trailer).
func (i *Iter) SeekGE(userKey []byte, trailer base.Trailer) bool {
	if !i.startPositioning(false /* reverse */) {
		return false
	}
	for j, c := range i.children {
		if !i.add(j, c.SeekGE(userKey, trailer)) {
			return false
		}
	}
	return i.finishPositioning()
}

// SeekLT moves to the last entry < (userKey, trailer).
func (i *Iter) SeekLT(userKey []byte, trailer base.Trailer) bool {
	if !i.startPositioning(true /* reverse */) {
		return false
	}
	for j, c := range i.children {
		if !i.add(j, c.SeekLT(userKey, trailer)) {
			return false
		}
	}
	return i.finishPositioning()
}

// First moves to the first entry.
func (i *Iter) First() bool {
	if !i.startPositioning(false /* reverse */) {
		return false
	}
	for j, c := range i.children {
		if !i.add(j, c.First()) {
			return false
		}
	}
	return i.finishPositioning()
}

// Last moves to the last entry.
func (i *Iter) Last() bool {
	if !i.startPositioning(true /* reverse */) {
		return false
	}
	for j, c := range i.children {
		if !i.add(j, c.Last()) {
			return false
		}
	}
	return i.finishPositioning()
}

// Next moves to the following entry. On an invalid iterator it returns
// false and stays invalid.
func (i *Iter) Next() bool {
	if len(i.heap.items) == 0 {
		return false
	}
	if i.heap.reverse {
		return i.switchToForward()
	}
	top := i.heap.items[0].index
	return i.topMoved(i.children[top].Next())
}

// Prev moves to the preceding entry. On an invalid iterator it returns
// false and stays invalid.
func (i *Iter) Prev() bool {
	if len(i.heap.items) == 0 {
		return false
	}
	if !i.heap.reverse {
		return i.switchToBackward()
	}
	top := i.heap.items[0].index
	return i.topMoved(i.children[top].Prev())
}

// Valid reports whether the iterator is at an entry.
func (i *Iter) Valid() bool { return len(i.heap.items) > 0 }

// UserKey returns the current entry's user key (nil when not Valid).
func (i *Iter) UserKey() []byte {
	if len(i.heap.items) == 0 {
		return nil
	}
	return i.heap.items[0].userKey
}

// Trailer returns the current entry's trailer (0 when not Valid).
func (i *Iter) Trailer() base.Trailer {
	if len(i.heap.items) == 0 {
		return 0
	}
	return i.heap.items[0].trailer
}

// Value returns the current entry's value (nil when not Valid).
func (i *Iter) Value() []byte {
	if len(i.heap.items) == 0 {
		return nil
	}
	return i.children[i.heap.items[0].index].Value()
}

// Error returns the error that stopped the iterator: a child's error, or
// base.ErrClosed after Close.
func (i *Iter) Error() error { return i.err }

// Close closes every child, even after an error, and returns the first
// error: the one that stopped the iterator, else the first a child's Close
// returned. A second Close returns base.ErrClosed.
func (i *Iter) Close() error {
	if i.closed {
		return base.ErrClosed
	}
	i.closed = true
	err := i.err
	for j, c := range i.children {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = errors.Wrapf(cerr, "merge: closing child %d", j)
		}
	}
	clear(i.children)
	i.children = i.children[:0]
	i.clearHeap()
	if i.err == nil {
		i.err = base.ErrClosed
	}
	return err
}

// startPositioning empties the heap for an absolute positioning call in the
// given direction. It returns false if the iterator has stopped.
func (i *Iter) startPositioning(reverse bool) bool {
	i.clearHeap()
	i.heap.reverse = reverse
	return i.err == nil
}

// add records the result of positioning child j: a child at an entry joins
// the heap; one that is not is checked for an error. It returns false if the
// iterator stopped.
func (i *Iter) add(j int, ok bool) bool {
	c := i.children[j]
	if ok {
		i.heap.items = append(i.heap.items, item{userKey: c.UserKey(), trailer: c.Trailer(), index: j})
		return true
	}
	if err := c.Error(); err != nil {
		return i.fail(j, err)
	}
	return true
}

// finishPositioning orders the heap after every child was positioned.
func (i *Iter) finishPositioning() bool {
	i.heap.init()
	return len(i.heap.items) > 0
}

// topMoved updates the heap after the top child stepped in the current
// direction; ok is what the step returned.
func (i *Iter) topMoved(ok bool) bool {
	top := &i.heap.items[0]
	c := i.children[top.index]
	if ok {
		top.userKey, top.trailer = c.UserKey(), c.Trailer()
		i.heap.down(0)
		return true
	}
	if err := c.Error(); err != nil {
		return i.fail(top.index, err)
	}
	i.heap.popTop()
	return len(i.heap.items) > 0
}

// switchToForward implements Next after a backward move. Every child other
// than the current one is positioned at its first entry after the current
// one in merged order; then the current child steps forward. The current
// child moves last because the other children seek with its key.
func (i *Iter) switchToForward() bool {
	cur := i.heap.items[0]
	succKey, succTrailer := i.successor(cur.userKey, cur.trailer)
	i.clearHeap()
	i.heap.reverse = false
	for j, c := range i.children {
		var ok bool
		switch {
		case j < cur.index:
			// Entries equal to the current key come before it in merged
			// order: skip them.
			ok = c.SeekGE(succKey, succTrailer)
		case j > cur.index:
			ok = c.SeekGE(cur.userKey, cur.trailer)
		default:
			continue
		}
		if !i.add(j, ok) {
			return false
		}
	}
	if !i.add(cur.index, i.children[cur.index].Next()) {
		return false
	}
	return i.finishPositioning()
}

// switchToBackward implements Prev after a forward move, mirroring
// switchToForward: every other child goes to its last entry before the
// current one in merged order, then the current child steps back.
func (i *Iter) switchToBackward() bool {
	cur := i.heap.items[0]
	succKey, succTrailer := i.successor(cur.userKey, cur.trailer)
	i.clearHeap()
	i.heap.reverse = true
	for j, c := range i.children {
		var ok bool
		switch {
		case j < cur.index:
			// Entries equal to the current key come before it in merged
			// order: include them.
			ok = c.SeekLT(succKey, succTrailer)
		case j > cur.index:
			ok = c.SeekLT(cur.userKey, cur.trailer)
		default:
			continue
		}
		if !i.add(j, ok) {
			return false
		}
	}
	if !i.add(cur.index, i.children[cur.index].Prev()) {
		return false
	}
	return i.finishPositioning()
}

// successor returns the smallest internal key after (userKey, trailer):
// SeekGE of it finds the first entry > (userKey, trailer) and SeekLT the
// last entry <= it. Trailers sort descending, so that is trailer-1 of the
// same user key, or, after trailer 0, the first key of the next user key,
// userKey+"\x00" (built in scratch space, so it allocates only to grow).
func (i *Iter) successor(userKey []byte, trailer base.Trailer) ([]byte, base.Trailer) {
	if trailer > 0 {
		return userKey, trailer - 1
	}
	i.successorKey = append(append(i.successorKey[:0], userKey...), 0)
	return i.successorKey, maxTrailer
}

// fail stops the iterator with child j's error.
func (i *Iter) fail(j int, err error) bool {
	i.err = errors.Wrapf(err, "merge: child %d", j)
	i.clearHeap()
	return false
}

// clearHeap empties the heap, dropping its references to child keys.
func (i *Iter) clearHeap() {
	clear(i.heap.items)
	i.heap.items = i.heap.items[:0]
}

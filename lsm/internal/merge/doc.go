// Package merge provides the merging iterator: one base.InternalIterator
// over the union of several child iterators (memtables, L0 tables, levels),
// each already in internal order.
//
// # Order
//
// The merged sequence is the children's entries sorted by internal key (user
// key ascending, trailer descending) and, among entries with the same user
// key and trailer, by child index ascending. The engine never stores the
// same (user key, trailer) twice, but the tie-break makes the iterator
// deterministic if it happens: forward iteration yields the lower child
// first, backward iteration the higher child first, so the two directions
// are exact reverses of each other.
//
// # Heap
//
// The iterator keeps the children that are at an entry in a binary heap,
// ordered for the current direction: smallest entry on top when moving
// forward, largest when moving backward. Each heap item caches its child's
// user key and trailer, so sifting compares cached keys without calling
// through the child interface. Next (forward) advances the top child and
// sifts it down, O(log n) comparisons; an exhausted child leaves the heap.
//
// # Switching direction
//
// Moving forward, every child other than the current one (the heap top) is
// positioned after the current entry; moving backward, before it. So Prev
// after Next cannot simply step the top child back: the other children
// must first be repositioned to their last entry before the current key.
// The switch seeks every other child once (SeekLT of the current key for
// Prev, SeekGE for Next), steps the current child, and rebuilds the heap in
// the new direction: O(n) seeks, where n is the number of children.
// Children ordered before the current one by the tie-break seek to the
// current key's immediate successor instead, so that equal keys land on the
// right side.
//
// # Errors
//
// A child that stops with an error stops the merging iterator: it becomes
// invalid, Error returns the child's error, and every later positioning call
// returns false. Close closes every child and returns the first error.
//
// # Thread safety
//
// An Iter is not safe for concurrent use.
package merge

package memtable

import "github.com/bookie-index/bookie-index/lsm/internal/base"

// Iterator walks a Skiplist in internal-key order. It is safe to use while
// another goroutine adds to the list: it sees every entry published before
// each step and possibly some published during it, and never a partly written
// entry. An Iterator itself is not safe for concurrent use.
//
// Positioning methods return whether the iterator is at an entry (Valid).
// The slices returned by UserKey and Value point into the arena: they stay
// valid and unchanged for the list's life and must not be modified.
//
// Costs: SeekGE, SeekLT, First and Last search from the head, O(log n).
// Next is O(1). Prev is O(log n) too: the list links forward only, so Prev
// searches for the predecessor of the current entry. Reverse scans over many
// entries are therefore slower than forward ones; the engine's floor lookups
// need one SeekLT and few Prev steps, which is what this layout favours.
// None of them allocates.
//
// The zero Iterator is not usable: get one from NewIter, or reset one with
// InitIter.
type Iterator struct {
	list *Skiplist
	// nd is the current node, 0 when the iterator is not at an entry.
	nd uint32
}

// SeekGE moves to the first entry at or after (userKey, trailer) in internal
// order: the smallest user key >= userKey, and among entries of userKey
// itself those with a trailer <= trailer (newest first).
func (it *Iterator) SeekGE(userKey []byte, trailer base.Trailer) bool {
	_, it.nd = it.list.seek(userKey, trailer)
	return it.nd != 0
}

// SeekLT moves to the last entry strictly before (userKey, trailer) in
// internal order.
func (it *Iterator) SeekLT(userKey []byte, trailer base.Trailer) bool {
	prev, _ := it.list.seek(userKey, trailer)
	it.setOrClear(prev)
	return it.nd != 0
}

// First moves to the first entry.
func (it *Iterator) First() bool {
	it.nd = it.list.arena.next(it.list.head, 0)
	return it.nd != 0
}

// Last moves to the last entry.
func (it *Iterator) Last() bool {
	it.nd = it.list.last()
	return it.nd != 0
}

// Next moves to the following entry. On an unpositioned iterator it stays
// unpositioned and returns false.
func (it *Iterator) Next() bool {
	if it.nd == 0 {
		return false
	}
	it.nd = it.list.arena.next(it.nd, 0)
	return it.nd != 0
}

// Prev moves to the preceding entry by searching for it from the head,
// O(log n). On an unpositioned iterator it stays unpositioned and returns
// false.
func (it *Iterator) Prev() bool {
	if it.nd == 0 {
		return false
	}
	a := it.list.arena
	prev, _ := it.list.seek(a.nodeKey(it.nd), a.nodeTrailer(it.nd))
	it.setOrClear(prev)
	return it.nd != 0
}

// Valid reports whether the iterator is at an entry.
func (it *Iterator) Valid() bool { return it.nd != 0 }

// UserKey returns the current entry's user key (nil when not Valid).
func (it *Iterator) UserKey() []byte {
	if it.nd == 0 {
		return nil
	}
	return it.list.arena.nodeKey(it.nd)
}

// Trailer returns the current entry's trailer (0 when not Valid).
func (it *Iterator) Trailer() base.Trailer {
	if it.nd == 0 {
		return 0
	}
	return it.list.arena.nodeTrailer(it.nd)
}

// Value returns the current entry's value (nil when not Valid).
func (it *Iterator) Value() []byte {
	if it.nd == 0 {
		return nil
	}
	return it.list.arena.nodeValue(it.nd)
}

// setOrClear positions the iterator at nd, or unpositions it when nd is the
// head (nothing precedes the search key).
func (it *Iterator) setOrClear(nd uint32) {
	if nd == it.list.head {
		nd = 0
	}
	it.nd = nd
}

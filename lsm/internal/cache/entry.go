package cache

import (
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// EntryOverhead is the fixed number of bytes charged for every cached entry
// on top of len(value): the entry struct (104 bytes on 64-bit platforms:
// key, value header, charge, state, flags, shard pointer, four list links
// and the LRU stamp) plus its slot in the shard's map (a 24-byte key/pointer pair at a
// load factor between 7/16 and 7/8, so up to about 56 bytes), rounded up.
// Without it a cache of tiny blocks would use far more memory than its
// capacity says.
const EntryOverhead = 160

// key identifies a block: the cache id of its table file (Cache.NewID) and
// its offset in the file. It is a comparable struct of two integers, so map
// lookups with it do not allocate.
type key struct {
	id, offset uint64
}

// Bits of entry.state. The state packs "is cached" with the count of
// outside references (handles) into one atomic word, so that Release can
// drop a reference without the shard lock and still know exactly whether
// it made the entry's charge stop counting as pinned.
const (
	stateCached = 1 // the cache holds the entry (it is in a shard's map and lists)
	stateRef    = 2 // one outside reference (one unreleased Handle)
)

// entry is one block. key, value, charge, kind, pri and shard never change
// after the entry is published, so Handle reads them without a lock.
// The list links and inHighPool are guarded by the shard's mutex.
type entry struct {
	key    key
	value  []byte
	charge int64
	// state is stateCached|n*stateRef for a cached entry with n outside
	// references, n*stateRef for a detached or removed one. Outside
	// references are only added under the shard lock (by a lookup or
	// insert that found the entry in the map), and removed by Release
	// without it; stateCached is only set and cleared under the lock.
	// So under the lock, state == stateCached proves the entry may be
	// evicted, and nobody can invalidate that until the lock is dropped.
	state      atomic.Int32
	kind       Kind
	pri        Priority
	inHighPool bool   // which LRU list the entry is on
	shard      *shard // nil for a detached entry

	// prev and next link the entry into its LRU list (circular, with the
	// list's sentinel). filePrev and fileNext link the entries of one
	// file within the shard (nil-terminated; the head is in shard.files).
	prev, next         *entry
	filePrev, fileNext *entry
	// stamp is the list's push count when the entry was last pushed to
	// its front (see list.recent).
	stamp uint64
}

// newDetachedEntry makes an entry that no shard knows of, holding one outside
// reference: the handle Insert and GetOrLoad return for a value they do not
// cache. Releasing it only drops that reference.
func newDetachedEntry(k key, kind Kind, value []byte) *entry {
	e := &entry{key: k, value: value, charge: int64(len(value)) + EntryOverhead, kind: kind}
	e.state.Store(stateRef)
	return e
}

// Handle is a reference to a block's bytes, returned by Lookup, Insert and
// GetOrLoad. While a handle is unreleased the cache does not evict its
// entry. Values are ordinary garbage-collected slices that the cache never
// reuses, so Value stays correct even after Release; Release only tells the
// cache that the entry may be evicted again. Every handle must be released
// exactly once; releasing the zero Handle does nothing.
//
// A detached handle (Insert or GetOrLoad of a value the cache did not keep:
// oversized, strict limit, or a disabled cache) works the same way; its
// Release has no effect on the cache.
type Handle struct {
	e *entry
}

// Value returns the block's bytes, or nil for the zero Handle. The caller
// must not modify them.
func (h Handle) Value() []byte {
	if h.e == nil {
		return nil
	}
	return h.e.value
}

// Valid reports whether h refers to a value (it is not the zero Handle).
func (h Handle) Valid() bool { return h.e != nil }

// Release drops the caller's reference. It takes no lock and allocates
// nothing: an atomic decrement, plus an atomic update of the shard's
// pinned-bytes counter when this was the last outside reference of a cached
// entry.
func (h Handle) Release() {
	e := h.e
	if e == nil {
		return
	}
	n := e.state.Add(-stateRef)
	if n == stateCached {
		// Last outside reference of an entry that is still cached: its
		// charge stops counting as pinned. (e.shard is set for every
		// entry that was ever cached.)
		e.shard.entryPinned.Add(-e.charge)
	}
	if base.InvariantsEnabled && n < 0 {
		panic(errors.AssertionFailedf("cache: handle released more often than acquired (state %d)", n))
	}
}

// list is a circular doubly linked LRU list of entries with a sentinel:
// root.next is the most recently used entry, root.prev the least.
type list struct {
	root   entry
	bytes  int64  // sum of the charges of the entries on the list
	len    int    // entries on the list
	pushes uint64 // pushFront calls so far
}

func (l *list) init() {
	l.root.next = &l.root
	l.root.prev = &l.root
}

func (l *list) empty() bool { return l.root.next == &l.root }

// pushFront makes e the most recently used entry of l.
func (l *list) pushFront(e *entry) {
	e.prev = &l.root
	e.next = l.root.next
	e.next.prev = e
	l.root.next = e
	l.bytes += e.charge
	l.len++
	l.pushes++
	e.stamp = l.pushes
}

// recent reports whether e, which is on l, is among the newest quarter of
// its entries: fewer than len/4 entries were pushed in front of it since
// its own push (removals only bring it closer to the front).
func (l *list) recent(e *entry) bool { return l.pushes-e.stamp < uint64(l.len/4) }

// remove unlinks e, which must be on l.
func (l *list) remove(e *entry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
	l.bytes -= e.charge
	l.len--
}

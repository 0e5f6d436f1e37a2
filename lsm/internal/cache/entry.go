package cache

import (
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manual"
	"github.com/cockroachdb/errors"
)

// EntryOverhead is the fixed number of bytes charged for every cached entry
// on top of its buffer's size: the entry struct (104 bytes on 64-bit
// platforms: key, buffer, state, flags, shard pointer, four list links and
// the LRU stamp) plus its slot in the shard's map (a 24-byte key/pointer
// pair at a load factor between 7/16 and 7/8, so up to about 56 bytes),
// rounded up. Without it a cache of tiny blocks would use far more memory
// than its capacity says.
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
// it made the entry's charge stop counting as pinned, or freed it.
const (
	stateCached = 1 // the cache holds the entry (it is in a shard's map and lists)
	stateRef    = 2 // one outside reference (one unreleased Handle)
)

// entry is one block. key, buf, kind, pri, flags and shard never change
// after the entry is published, so Handle reads them without a lock.
// The list links and inHighPool are guarded by the shard's mutex.
//
// The entry owns buf, memory of the cache's allocator (package manual):
// whoever takes the state to zero — the removal of an entry without
// handles, or the release of the last handle of an entry no longer
// cached — frees it, exactly once. Until then no holder of a handle can
// see the bytes change.
type entry struct {
	key key
	buf manual.Buf
	// state is stateCached|n*stateRef for a cached entry with n outside
	// references, n*stateRef for a detached or removed one; zero once
	// freed. Outside references are only added under the shard lock (by a
	// lookup or insert that found the entry in the map), and removed by
	// Release without it; stateCached is only set and cleared under the
	// lock. So under the lock, state == stateCached proves the entry may
	// be evicted, and nobody can invalidate that until the lock is dropped.
	state      atomic.Int32
	kind       Kind
	pri        Priority
	inHighPool bool // which LRU list the entry is on
	// flags (entryDetached, entryTrackPinned) never change after the
	// entry is published; one byte, so that the entry stays 104 bytes.
	flags uint8
	shard *shard // the shard the key belongs to, cached or not

	// prev and next link the entry into its LRU list (circular, with the
	// list's sentinel). filePrev and fileNext link the entries of one
	// file within the shard (nil-terminated; the head is in shard.files).
	prev, next         *entry
	filePrev, fileNext *entry
	// stamp is the list's push count when the entry was last pushed to
	// its front (see list.recent).
	stamp uint64
}

// Bits of entry.flags.
const (
	// entryDetached: never cached, a value the cache handed back
	// (Handle.Cached).
	entryDetached = 1 << iota
	// entryTrackPinned: the shard keeps entryPinned (its trackPinned),
	// read by Release from the entry's own cache line.
	entryTrackPinned
)

func (e *entry) detached() bool    { return e.flags&entryDetached != 0 }
func (e *entry) trackPinned() bool { return e.flags&entryTrackPinned != 0 }

// charge is what the entry counts against the cache's capacity: the
// memory its buffer takes and the entry's own overhead.
func (e *entry) charge() int64 { return e.buf.Size() + EntryOverhead }

// value returns the block's bytes.
func (e *entry) value() []byte { return e.buf.Bytes() }

// entries recycles entry structs: an insert per missed block would
// otherwise leave one behind for the collector at every eviction. An
// entry goes back only after its state reached zero, when no handle and
// no shard refers to it. Invariants builds do not recycle, so that a
// handle released once too often finds its own dead entry and panics
// instead of corrupting another block's count.
var entries = sync.Pool{New: func() any { return new(entry) }}

func newEntry() *entry {
	if base.InvariantsEnabled {
		return new(entry)
	}
	return entries.Get().(*entry)
}

// free gives the entry's buffer back to the allocator and recycles the
// entry. The caller took its state to zero.
func (e *entry) free() {
	e.shard.alloc.Free(e.buf)
	if base.InvariantsEnabled {
		e.buf = manual.Buf{}
		return
	}
	*e = entry{}
	entries.Put(e)
}

// newDetachedEntry makes an entry that no shard holds, with one outside
// reference: the handle Insert and GetOrLoad return for a value they do not
// cache. Releasing it frees the buffer.
func newDetachedEntry(s *shard, k key, kind Kind, buf manual.Buf) *entry {
	e := newEntry()
	e.key, e.buf, e.kind, e.shard, e.flags = k, buf, kind, s, entryDetached
	e.state.Store(stateRef)
	return e
}

// Handle is a reference to a block's bytes, returned by Lookup, Insert and
// GetOrLoad. While a handle is unreleased the cache does not evict its
// entry and its bytes do not change. Every handle must be released exactly
// once, and its Value must not be used afterwards: once the entry has left
// the cache (evicted, replaced, or its file evicted) the release of its
// last handle frees the memory, which the next block read reuses.
// Releasing the zero Handle does nothing.
//
// A detached handle (Insert or GetOrLoad of a value the cache did not keep:
// oversized, strict limit, or a disabled cache) works the same way; its
// Release frees the value.
type Handle struct {
	e *entry
}

// Value returns the block's bytes, or nil for the zero Handle. The caller
// must not modify them, nor use them after Release.
func (h Handle) Value() []byte {
	if h.e == nil {
		return nil
	}
	return h.e.value()
}

// Valid reports whether h refers to a value (it is not the zero Handle).
func (h Handle) Valid() bool { return h.e != nil }

// Release drops the caller's reference. It takes no lock and allocates
// nothing: an atomic decrement (plus, under StrictCapacityLimit, an update
// of the shard's pinned-bytes counter when this was the last outside
// reference of a cached entry), or the buffer's release to the allocator
// when it was the last reference of all.
func (h Handle) Release() {
	e := h.e
	if e == nil {
		return
	}
	// Read before the decrement: once it is done, an eviction may free
	// and recycle the entry at any moment.
	s, charge, track := e.shard, e.charge(), e.trackPinned()
	n := e.state.Add(-stateRef)
	switch {
	case n == stateCached:
		// Last outside reference of an entry that is still cached: its
		// charge stops counting as pinned.
		if track {
			s.entryPinned.Add(-charge)
		}
	case n == 0:
		// Last reference of an entry the cache no longer holds.
		e.free()
	case base.InvariantsEnabled && n < 0:
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
	l.bytes += e.charge()
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
	l.bytes -= e.charge()
	l.len--
}

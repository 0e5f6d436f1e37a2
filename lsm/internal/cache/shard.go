package cache

import (
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/manual"
)

// cacheLinePad keeps neighbouring shards in the Cache's slice off each
// other's cache lines, so cores working on different shards do not contend.
const cacheLinePad = 64

// shard is one independently locked part of the cache: a map from key to
// entry, two byte-charged LRU lists (the high-priority pool and the
// low-priority list), per-file entry lists for EvictFile, the loads in
// flight for GetOrLoad, and the shard's counters.
//
// Every cached entry is on exactly one of the two lists, whether or not it
// is referenced; eviction walks a list from its tail and skips referenced
// entries in place (see evictLocked for the cost).
type shard struct {
	mu sync.Mutex
	// entryPinned is the charge of the cached entries that have outside
	// references, kept only under StrictCapacityLimit (trackPinned),
	// which needs it on every insert. Release updates it without the
	// lock; it is exact when no Release is in flight and otherwise may
	// only overstate. Without the limit nothing keeps it: a lookup and
	// its release would each add a write of this shared line to the hit
	// path, and Metrics counts the referenced entries instead.
	entryPinned atomic.Int64
	// full is set when the shard's last insert had to evict to make room,
	// cleared when one fitted without evicting (read by Admit without the
	// lock).
	full atomic.Bool
	// alloc is the cache's allocator, which entries' buffers go back to.
	alloc *manual.Allocator
	// trackPinned: keep entryPinned (StrictCapacityLimit). Set at New.
	trackPinned bool

	// The fields below are guarded by mu.

	entries map[key]*entry
	// files maps a file id to the head of the list of that file's entries
	// in this shard, linked through entry.fileNext.
	files map[uint64]*entry
	// flights holds the GetOrLoad loads in progress; made on first use.
	flights map[key]*flight
	high    list // high-priority pool; high.bytes <= highCapacity after every insert
	low     list // low-priority entries and entries demoted from the pool
	// capacity and highCapacity are the limits the shard last applied
	// (on its last insert); see Cache.shardCapacity.
	capacity     int64
	highCapacity int64
	counters     [NumKinds]KindMetrics
	oversized    int64 // values refused because their charge exceeded capacity
	strict       int64 // values refused by the strict capacity limit

	_ [cacheLinePad]byte
}

func (s *shard) init(alloc *manual.Allocator, trackPinned bool) {
	s.alloc, s.trackPinned = alloc, trackPinned
	s.entries = make(map[key]*entry)
	s.files = make(map[uint64]*entry)
	s.high.init()
	s.low.init()
}

// usageLocked is the charge of every entry the shard holds.
func (s *shard) usageLocked() int64 { return s.high.bytes + s.low.bytes }

// setCapacityLocked applies the shard's current effective capacity. Shards
// learn of a changed pinned usage only here, on their next insert, so that
// AddPinned never has to visit every shard. A smaller pool demotes its
// oldest entries at once; entries beyond the smaller capacity are evicted
// only when an insert needs the room, so an insert that is refused (an
// oversized value) evicts nothing.
func (s *shard) setCapacityLocked(capacity int64, highRatio float64) {
	if capacity == s.capacity {
		return
	}
	s.capacity = capacity
	s.highCapacity = int64(float64(capacity) * highRatio)
	s.demoteLocked()
}

// acquireLocked adds n outside references to e, which is cached in s or
// detached. Adding references under the lock is what makes the
// state == stateCached test in evictLocked safe.
func (s *shard) acquireLocked(e *entry, n int) {
	if n == 0 {
		return
	}
	after := e.state.Add(int32(n) * stateRef)
	if e.trackPinned() && after-int32(n)*stateRef == stateCached {
		// The first outside reference of a cached entry: it is pinned.
		s.entryPinned.Add(e.charge())
	}
}

// touchLocked makes e, a cached entry, the most recently used entry of the
// list its priority selects — unless it is already on that list and among
// its newest quarter (list.recent), where it stays put: the LRU order is
// then approximate within the front quarter, which never holds eviction
// candidates while the rest of the list has unreferenced entries. Skipping
// the move spares most hits on a hot working set the list update, which
// writes the cache lines of two neighbouring entries and was the largest
// part of a hit (cache.(*list).remove and touchLocked: 15% of the get
// phase's CPU at a 1 GiB cache on the 50M-key bench).
func (s *shard) touchLocked(e *entry) {
	if e.inHighPool == (e.pri == PriorityHigh) {
		l := &s.low
		if e.inHighPool {
			l = &s.high
		}
		if l.recent(e) {
			return
		}
	}
	if e.inHighPool {
		s.high.remove(e)
	} else {
		s.low.remove(e)
	}
	s.pushLocked(e)
}

// pushLocked puts e at the front of the high-priority pool if it is a
// high-priority entry that fits in the pool, and at the front of the
// low-priority list otherwise. Putting an entry larger than the whole pool
// into it would only demote every other pool entry and then itself.
func (s *shard) pushLocked(e *entry) {
	if e.pri == PriorityHigh && e.charge() <= s.highCapacity {
		e.inHighPool = true
		s.high.pushFront(e)
		s.demoteLocked()
		return
	}
	e.inHighPool = false
	s.low.pushFront(e)
}

// demoteLocked moves the oldest entries of the high-priority pool to the
// front of the low-priority list until the pool is within its capacity.
// Demoted entries stay cached; they only lose the pool's protection.
func (s *shard) demoteLocked() {
	for s.high.bytes > s.highCapacity && !s.high.empty() {
		e := s.high.root.prev
		s.high.remove(e)
		e.inHighPool = false
		s.low.pushFront(e)
	}
}

// removeLocked takes e out of the cache: off its LRU list, its file list and
// the map, and drops the cache's own reference. Outside handles of e stay
// valid; the release of the last one frees its buffer. Without handles it
// is freed here.
func (s *shard) removeLocked(e *entry) {
	if e.inHighPool {
		s.high.remove(e)
	} else {
		s.low.remove(e)
	}
	s.unlinkFileLocked(e)
	delete(s.entries, e.key)
	// Read before the decrement, after which a Release may free e.
	charge, track := e.charge(), e.trackPinned()
	switch n := e.state.Add(-stateCached); {
	case n == 0:
		e.free()
	case n >= stateRef && track:
		// It was pinned by handles; now it is merely referenced.
		s.entryPinned.Add(-charge)
	}
}

// evictLocked evicts unreferenced entries, least recently used first, from
// the low-priority list and then from the high-priority pool, until an
// entry of the given charge fits within the shard's capacity or nothing
// unreferenced is left.
//
// Referenced entries are skipped where they are, so one call costs
// O(evicted entries + referenced entries passed over). Handles are held
// briefly (one per open iterator and level), so few entries are passed
// over in practice; a shard filled with pinned entries costs a walk of its
// list per insert.
func (s *shard) evictLocked(charge int64) {
	for _, l := range [2]*list{&s.low, &s.high} {
		for e := l.root.prev; e != &l.root && s.usageLocked()+charge > s.capacity; {
			prev := e.prev
			if e.state.Load() == stateCached {
				s.counters[e.kind].Evictions++
				s.removeLocked(e)
			}
			e = prev
		}
	}
}

// insertOutcome says what insertLocked did with a value.
type insertOutcome uint8

const (
	// outcomeCached: the value is cached; the entry has one outside reference.
	outcomeCached insertOutcome = iota
	// outcomeOversized: the value's charge exceeds the shard's capacity.
	// It was not inserted and nothing was evicted; the entry returned is
	// detached, with one outside reference.
	outcomeOversized
	// outcomeStrictReject: the value would fit in an empty shard but not
	// beside the referenced entries, and the strict capacity limit is on.
	// Nothing was evicted; no entry is returned.
	outcomeStrictReject
)

// insertLocked caches buf under k, replacing any entry already there,
// after applying the shard's capacity (setCapacityLocked must have run).
// On outcomeStrictReject buf is still the caller's.
func (s *shard) insertLocked(k key, kind Kind, pri Priority, buf manual.Buf, strict bool) (*entry, insertOutcome) {
	if old := s.entries[k]; old != nil {
		s.removeLocked(old)
	}
	charge := buf.Size() + EntryOverhead
	if charge > s.capacity {
		// The oversized-block policy (see doc.go): never make room for a
		// value that cannot fit in the shard at all. Inserting it would
		// empty the shard and then be evicted on its release, so every
		// read would pay for a re-read and a cleared shard.
		s.oversized++
		return newDetachedEntry(s, k, kind, buf), outcomeOversized
	}
	if strict && s.entryPinned.Load()+charge > s.capacity {
		// Even evicting every unreferenced entry would not make room:
		// refuse before evicting anything. Under the lock entryPinned can
		// only overstate (a Release in flight has dropped its reference
		// but not yet its charge), so this may refuse a value that such a
		// release makes room for, exactly as if the release came a moment
		// later, but never admits one that cannot fit.
		s.strict++
		return nil, outcomeStrictReject
	}
	full := s.usageLocked()+charge > s.capacity
	if full != s.full.Load() {
		s.full.Store(full)
	}
	s.evictLocked(charge)

	e := newEntry()
	e.key, e.buf, e.kind, e.pri, e.shard = k, buf, kind, pri, s
	if s.trackPinned {
		e.flags = entryTrackPinned
	}
	e.state.Store(stateCached | stateRef)
	if s.trackPinned {
		s.entryPinned.Add(charge)
	}
	s.entries[k] = e
	s.pushFileLocked(e)
	s.pushLocked(e)
	s.counters[kind].Inserts++
	s.counters[kind].BytesInserted += int64(buf.Len())
	return e, outcomeCached
}

// pushFileLocked links e at the head of its file's list.
func (s *shard) pushFileLocked(e *entry) {
	head := s.files[e.key.id]
	e.filePrev = nil
	e.fileNext = head
	if head != nil {
		head.filePrev = e
	}
	s.files[e.key.id] = e
}

// unlinkFileLocked unlinks e from its file's list.
func (s *shard) unlinkFileLocked(e *entry) {
	switch {
	case e.filePrev != nil:
		e.filePrev.fileNext = e.fileNext
	case e.fileNext != nil:
		s.files[e.key.id] = e.fileNext
	default:
		delete(s.files, e.key.id)
	}
	if e.fileNext != nil {
		e.fileNext.filePrev = e.filePrev
	}
	e.filePrev, e.fileNext = nil, nil
}

// evictFileLocked removes every entry of file id from the shard, referenced
// or not. It costs O(entries of the file in this shard).
func (s *shard) evictFileLocked(id uint64) {
	for e := s.files[id]; e != nil; {
		next := e.fileNext
		s.removeLocked(e)
		e = next
	}
}

// addMetricsLocked adds the shard's counters and usage to m.
func (s *shard) addMetricsLocked(m *Metrics) {
	m.Usage += s.usageLocked()
	m.EntryPinnedUsage += s.referencedLocked()
	m.Entries += int64(len(s.entries))
	m.OversizedRejects += s.oversized
	m.StrictRejects += s.strict
	for i := range s.counters {
		m.Kinds[i].add(s.counters[i])
	}
}

// referencedLocked is the charge of the cached entries that have outside
// references, counted: a walk of the shard, for Metrics.
func (s *shard) referencedLocked() int64 {
	var n int64
	for _, l := range [2]*list{&s.low, &s.high} {
		for e := l.root.next; e != &l.root; e = e.next {
			if e.state.Load() >= stateCached+stateRef {
				n += e.charge()
			}
		}
	}
	return n
}

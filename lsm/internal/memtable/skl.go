package memtable

import (
	"math/bits"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// ErrDuplicateKey is returned (wrapped; test with errors.Is) by Add when the
// list already holds the same (user key, trailer).
var ErrDuplicateKey = errors.New("memtable: duplicate key")

// headNodeSize is the arena space the head node takes: a full tower, no key
// or value, rounded up to the alignment.
const headNodeSize = (nodeTowerOffset + maxHeight*towerSlotSize + arenaAlign - 1) &^ (arenaAlign - 1)

// Skiplist is an arena skiplist of internal keys and values. One goroutine
// may call Add at a time; any number of goroutines may read concurrently
// with it (see the package comment).
type Skiplist struct {
	arena *arena
	head  uint32
	// height is the number of levels in use (1..maxHeight). Readers load it
	// to know where to start a search; head slots above it are nil.
	height atomic.Uint32
	count  atomic.Int64

	// The fields below belong to the writer.

	// rng is the state of the height generator (splitmix64). Heights only
	// affect speed, so a fixed seed is fine and keeps benchmarks repeatable.
	rng uint64
	// splice holds, for every level, the predecessor and successor of the
	// last key the writer searched for (see findSplice).
	splice      splice
	spliceValid bool
	// disableSpliceReuse forces a search from the head on every insert; the
	// benchmarks use it to measure what the cached splice saves.
	disableSpliceReuse bool
}

// splice records where a key goes: at each level i, prev[i] sorts before the
// key and next[i] (nil for the end) after it, and next[i] is prev[i]'s
// successor at level i. prev[i] is the head at levels above the list height.
type splice struct {
	prev [maxHeight]uint32
	next [maxHeight]uint32
}

// NewSkiplist returns an empty skiplist whose arena holds arenaSize bytes,
// head node included. Sizes below what the head needs are raised to it (every
// Add then fails with ErrArenaFull); sizes above 4 GiB, the most uint32
// offsets address, are lowered to it.
func NewSkiplist(arenaSize int) *Skiplist {
	return newSkiplistInArena(newArena(arenaSize, arenaReserved+headNodeSize))
}

// newSkiplistInArena builds a skiplist in an arena shared with other lists.
// The arena must have room for the head node.
func newSkiplistInArena(a *arena) *Skiplist {
	head, ok := a.newNode(maxHeight, nil, 0, nil)
	if !ok {
		// Callers size the arena with headNodeSize per list: a bug, not input.
		panic(errors.AssertionFailedf("memtable: arena of %d bytes has no room for a head node", a.capacity()))
	}
	s := &Skiplist{arena: a, head: head, rng: 0x9e3779b97f4a7c15 ^ uint64(head)}
	s.height.Store(1)
	s.resetSplice()
	return s
}

// Size returns the arena bytes used, head nodes included. When the list
// shares its arena (inside a Memtable), that is the whole arena's usage.
func (s *Skiplist) Size() int { return s.arena.size() }

// Count returns the number of entries.
func (s *Skiplist) Count() int { return int(s.count.Load()) }

// NewIter returns an unpositioned iterator over the list.
func (s *Skiplist) NewIter() *Iterator {
	it := &Iterator{}
	s.InitIter(it)
	return it
}

// InitIter resets it to an unpositioned iterator over the list, so that one
// Iterator can be reused without allocating.
func (s *Skiplist) InitIter(it *Iterator) {
	*it = Iterator{list: s}
}

// Add inserts (userKey, trailer) → value, copying both into the arena. It
// returns an error wrapping ErrDuplicateKey if the list already holds the same
// (userKey, trailer), and one wrapping ErrArenaFull if the arena cannot hold
// the entry; in both cases the list is unchanged.
//
// REQUIRES: no other goroutine is in Add on this list or on a list sharing
// its arena.
func (s *Skiplist) Add(userKey []byte, trailer base.Trailer, value []byte) error {
	if s.findSplice(userKey, trailer) {
		return errors.Wrapf(ErrDuplicateKey, "adding %q #%d,%s", userKey, trailer.SeqNum(), trailer.Kind())
	}
	height := s.randomHeight()
	if base.InvariantsEnabled {
		s.checkSplice(userKey, trailer, height)
	}
	nd, ok := s.arena.newNode(height, userKey, trailer, value)
	if !ok {
		return errors.Wrapf(ErrArenaFull, "adding %d-byte key and %d-byte value (%d bytes with node) with %d of %d arena bytes used",
			len(userKey), len(value), alignUp(nodeSize(height)+uint64(len(userKey))+uint64(len(value))),
			s.arena.size(), s.arena.capacity())
	}

	// Fill the whole tower before the node becomes reachable, then link it
	// bottom-up: a reader that finds it at level i can follow it at every
	// level below.
	sp := &s.splice
	for i := 0; i < height; i++ {
		s.arena.setNext(nd, i, sp.next[i])
	}
	for i := 0; i < height; i++ {
		s.arena.setNext(sp.prev[i], i, nd)
		sp.prev[i] = nd
	}
	if uint32(height) > s.height.Load() {
		s.height.Store(uint32(height))
	}
	s.count.Add(1)
	return nil
}

// maxSpliceClimb bounds how many levels findSplice climbs from the cached
// splice before giving up and searching from the head. A key that is not
// bracketed by the cached splice within a few levels is far from the previous
// one (as with random inserts), and further comparisons would be wasted. With
// the bound a random insert pays at most maxSpliceClimb+2 comparisons with
// cache-resident nodes for trying the splice; BenchmarkAdd/order=random puts
// that at 0-10% of an insert, within this machine's noise, against 7x faster
// inserts for keys that extend the previous one.
const maxSpliceClimb = 4

// findSplice points s.splice at the place of (key, trailer) and reports
// whether the list already holds that exact internal key.
//
// When the cached splice from the previous insert starts before the key, it
// is reused: climbing from level 0, every level whose cached successor sorts
// after the key is already correct, and the levels below the lowest such
// level are searched starting from the cached successor one level down, which
// is known to sort before the key. A key right after the previous one costs a
// comparison with the previous key and one with its successor at level 0.
// Otherwise the search starts at the head.
func (s *Skiplist) findSplice(key []byte, trailer base.Trailer) (exists bool) {
	sp := &s.splice
	listHeight := int(s.height.Load())
	level, from := listHeight, s.head
	var stop uint32 // a node known to sort after the key, so the walk need not compare it
	if s.spliceValid && !s.disableSpliceReuse && s.after(key, trailer, sp.prev[0]) {
		bracket, exists := s.cachedBracket(key, trailer, listHeight)
		switch {
		case exists:
			return true
		case bracket == 0:
			return false
		case bracket > 0:
			level, from = bracket, sp.next[bracket-1]
			if bracket < listHeight {
				stop = sp.next[bracket]
			}
		}
	}
	if from == s.head {
		for i := listHeight; i < maxHeight; i++ {
			sp.prev[i], sp.next[i] = s.head, 0
		}
	}

	// Descend from `from`, which sorts before the key, at level-1.
	for i := level - 1; i >= 0; i-- {
		for {
			succ := s.arena.next(from, i)
			if succ == 0 || succ == stop {
				sp.prev[i], sp.next[i] = from, succ
				break
			}
			c := s.compareToNode(key, trailer, succ)
			if c == 0 {
				// Levels below i are stale; rebuild the splice next time.
				s.spliceValid = false
				return true
			}
			if c < 0 {
				sp.prev[i], sp.next[i] = from, succ
				stop = succ
				break
			}
			from = succ
		}
	}
	s.spliceValid = true
	return false
}

// cachedBracket returns the lowest level at which the cached splice's
// successor sorts after (key, trailer) (listHeight when none does), or -1 if
// that level is above maxSpliceClimb. exists reports that a successor equals
// the key.
//
// REQUIRES: the key sorts after s.splice.prev[0], hence after every
// s.splice.prev[i].
func (s *Skiplist) cachedBracket(key []byte, trailer base.Trailer, listHeight int) (level int, exists bool) {
	var lastBefore uint32 // a successor already known to sort before the key
	for level = 0; level < listHeight; level++ {
		if level > maxSpliceClimb {
			return -1, false
		}
		succ := s.splice.next[level]
		if succ == 0 {
			return level, false
		}
		if succ == lastBefore {
			continue
		}
		c := s.compareToNode(key, trailer, succ)
		if c == 0 {
			return 0, true
		}
		if c < 0 {
			return level, false
		}
		lastBefore = succ
	}
	return listHeight, false
}

// after reports whether (key, trailer) sorts strictly after node nd; every
// key sorts after the head.
func (s *Skiplist) after(key []byte, trailer base.Trailer, nd uint32) bool {
	return nd == s.head || s.compareToNode(key, trailer, nd) > 0
}

// checkSplice panics unless s.splice brackets (key, trailer) at every level
// below height with adjacent nodes. It guards the splice reuse logic in
// invariants builds.
func (s *Skiplist) checkSplice(key []byte, trailer base.Trailer, height int) {
	for i := 0; i < height; i++ {
		prev, next := s.splice.prev[i], s.splice.next[i]
		if !s.after(key, trailer, prev) || (next != 0 && s.compareToNode(key, trailer, next) >= 0) || s.arena.next(prev, i) != next {
			panic(errors.AssertionFailedf("memtable: splice at level %d does not bracket %q #%d", i, key, trailer))
		}
	}
}

// resetSplice makes the splice describe the empty list, which is valid for
// any key.
func (s *Skiplist) resetSplice() {
	for i := range s.splice.prev {
		s.splice.prev[i], s.splice.next[i] = s.head, 0
	}
	s.spliceValid = true
}

// compareToNode compares (key, trailer) with node nd's internal key.
func (s *Skiplist) compareToNode(key []byte, trailer base.Trailer, nd uint32) int {
	return base.CompareInternal(key, trailer, s.arena.nodeKey(nd), s.arena.nodeTrailer(nd))
}

// randomHeight draws a height in [1, maxHeight] where each level above the
// first is kept with probability 1/4: every two trailing zero bits of a random
// word add a level.
func (s *Skiplist) randomHeight() int {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return min(1+bits.TrailingZeros64(z)/2, maxHeight)
}

// seek finds, at level 0, the last node sorting before (key, trailer) (the
// head if none) and its successor (0 if none). It only reads and is safe
// concurrently with Add.
func (s *Skiplist) seek(key []byte, trailer base.Trailer) (prev, next uint32) {
	prev = s.head
	var stop uint32
	for i := int(s.height.Load()) - 1; i >= 0; i-- {
		for {
			next = s.arena.next(prev, i)
			if next == 0 || next == stop || s.compareToNode(key, trailer, next) <= 0 {
				break
			}
			prev = next
		}
		stop = next
	}
	return prev, next
}

// last returns the last node of the list, or 0 if it is empty.
func (s *Skiplist) last() uint32 {
	nd := s.head
	for i := int(s.height.Load()) - 1; i >= 0; i-- {
		for {
			next := s.arena.next(nd, i)
			if next == 0 {
				break
			}
			nd = next
		}
	}
	if nd == s.head {
		return 0
	}
	return nd
}

// sortedRun is a run of nodes built by prepareSorted in the arena and not
// yet reachable: publishSorted links it in, discardSorted frees it.
type sortedRun struct {
	// tail is the list's last node of every level when the run was
	// built: where the run's towers attach.
	tail [maxHeight]uint32
	// first and last are the run's first and last node of each level
	// below height.
	first, last [maxHeight]uint32
	height      int
	n           int
	// mark is the arena's use before the run, for discardSorted.
	mark uint32
}

// prepareSorted builds a run of entries that all sort after the list's
// last entry in the arena, without searching or comparing with the list:
// each node is linked to the next node of each level of its tower with
// plain stores, since the run is unreachable. next yields the run, ending
// it by returning ok false or refusing it by returning refused.
// prepareSorted returns false, with the list unchanged and no arena byte
// kept, when the run is refused, does not sort strictly increasing after
// the list's last entry, or does not fit in the arena. On true the run
// must be given to publishSorted or discardSorted before anything else is
// added.
//
// REQUIRES: no other goroutine is in Add on this list or on a list sharing
// its arena, until publishSorted or discardSorted.
func (s *Skiplist) prepareSorted(run *sortedRun, next func() (key []byte, trailer base.Trailer, value []byte, ok, refused bool)) bool {
	a := s.arena
	*run = sortedRun{}
	listHeight := int(s.height.Load())
	nd := s.head
	for l := listHeight - 1; l >= 0; l-- {
		for succ := a.next(nd, l); succ != 0; succ = a.next(nd, l) {
			nd = succ
		}
		run.tail[l] = nd
	}
	for l := listHeight; l < maxHeight; l++ {
		run.tail[l] = s.head
	}
	run.mark = a.used.Load()
	// The arena's use, stored once the run is built: nobody else
	// allocates meanwhile.
	end := uint64(run.mark)
	// Each key is compared with the previous one of the run, and the
	// first with the list's last node.
	var prevKey []byte
	var prevTrailer base.Trailer
	for ; ; run.n++ {
		key, trailer, value, ok, refused := next()
		if refused {
			return false
		}
		if ok {
			if run.n > 0 {
				if base.CompareInternal(key, trailer, prevKey, prevTrailer) <= 0 {
					return false
				}
			} else if run.tail[0] != s.head && s.compareToNode(key, trailer, run.tail[0]) <= 0 {
				return false
			}
		}
		if !ok {
			break
		}
		h := s.randomHeight()
		nd, ok := a.newNodeAfter(&end, h, key, trailer, value)
		if !ok {
			return false
		}
		prevKey, prevTrailer = key, trailer
		for l := 0; l < h; l++ {
			if run.last[l] == 0 {
				run.first[l] = nd
			} else {
				// Not reachable yet: a plain store, published by the
				// atomic stores of publishSorted.
				a.setNextUnpublished(run.last[l], l, nd)
			}
			run.last[l] = nd
		}
		run.height = max(run.height, h)
	}
	a.used.Store(uint32(end))
	// The run's last node at each level ends that level (a recycled arena
	// holds old bytes in its tower).
	for l := 0; l < run.height; l++ {
		a.setNextUnpublished(run.last[l], l, 0)
	}
	return true
}

// publishSorted links a run built by prepareSorted after the list's last
// entry, making it visible to readers at once.
func (s *Skiplist) publishSorted(run *sortedRun) {
	if run.n == 0 {
		return
	}
	// Publish bottom-up, as Add links a node: a node reachable at a level
	// is reachable at every level below. The list height is raised last, so
	// a search that starts at a new level finds it linked.
	for l := 0; l < run.height; l++ {
		s.arena.setNext(run.tail[l], l, run.first[l])
	}
	if uint32(run.height) > s.height.Load() {
		s.height.Store(uint32(run.height))
	}
	s.count.Add(int64(run.n))
	s.spliceValid = false
}

// discardSorted frees the arena bytes of a run built by prepareSorted and
// not published; the list is as it was before.
func (s *Skiplist) discardSorted(run *sortedRun) {
	s.rollback(run.mark)
}

// rollback frees the arena bytes allocated since mark, which no reader can
// reach.
func (s *Skiplist) rollback(mark uint32) {
	s.arena.used.Store(mark)
}

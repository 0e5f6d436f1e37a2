package manual

import (
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

const (
	// unitShift is log2 of the allocation unit: requests are rounded up to
	// whole units (1 KiB), so a 64 KiB data block wastes at most 1 KiB and
	// the side arrays cost 12 bytes per KiB of arena. With invariants the
	// unit is the page size instead, so that every run can be protected.
	unitShift = 10
	// maxListed: free runs of fewer units have a list per length; longer
	// ones share list 0.
	maxListed = 1024
	// unitBits is how many bits of a run id hold the unit within its
	// arena: an arena has at most 2^16 units.
	unitBits = 16
	// noRun ends a free list.
	noRun = ^uint32(0)
	// largeArena marks a Buf with a mapping of its own.
	largeArena = 1<<16 - 1

	// MinArenaBytes and MaxArenaBytes bound Options.ArenaBytes.
	MinArenaBytes = 1 << 20
	MaxArenaBytes = 64 << 20

	// poisonByte fills freed memory in invariants builds: a stale read
	// that does not fault sees it.
	poisonByte = 0xdb
	// quarantineBytes is how much freed memory an invariants build keeps
	// protected and out of reach of Alloc before reusing it.
	quarantineBytes = 4 << 20
)

// Run states, the low two bits of a boundary tag; the rest is the run's
// length in units.
const (
	tagUsed        = 1
	tagFree        = 2
	tagQuarantined = 3
	tagStateMask   = 3
	tagLenShift    = 2
)

// Buf is one allocation: Bytes are its n bytes, in memory the allocator
// owns until the Buf is freed. The zero Buf is empty and freeing it does
// nothing.
type Buf struct {
	b     []byte // length n, capacity the units allocated
	arena uint16 // index in Allocator.set.arenas, or largeArena
	unit  uint16 // first unit of the run
	units uint16 // run length (at most a quarter arena, 2^14 units)
}

// Bytes returns the buffer's bytes. They are valid until the Buf is freed.
func (b Buf) Bytes() []byte { return b.b }

// Len returns the length asked for.
func (b Buf) Len() int { return len(b.b) }

// Size returns the bytes the allocation takes: its length rounded up to
// whole units (or pages, for a buffer with a mapping of its own).
func (b Buf) Size() int64 { return int64(cap(b.b)) }

// Truncate returns b with its length cut to n (at most Len); Free takes
// either.
func (b Buf) Truncate(n int) Buf {
	b.b = b.b[:n]
	return b
}

// Options configure an Allocator.
type Options struct {
	// ArenaBytes is the size of one arena, rounded to whole units and
	// clamped to [MinArenaBytes, MaxArenaBytes]; 0 means MinArenaBytes.
	// Requests above a quarter of it get mappings of their own.
	ArenaBytes int
}

// ArenaBytesFor returns a good arena size for a cache of capacity bytes:
// an eighth of it, within [MinArenaBytes, MaxArenaBytes]. Only pages that
// are written become resident, so a large arena costs address space, not
// memory; a smaller one is unmapped sooner once empty.
func ArenaBytesFor(capacity int64) int {
	return int(min(max(capacity/8, MinArenaBytes), MaxArenaBytes))
}

// Metrics describe an allocator's memory.
type Metrics struct {
	// InUseBytes is the Size of the buffers not yet freed.
	InUseBytes int64
	// MappedBytes is the memory the allocator holds: its arenas and the
	// mappings of large buffers. Arena pages never written are not
	// resident, so this bounds what the allocator adds to the process's
	// resident memory.
	MappedBytes int64
	// Buffers is the number of buffers not yet freed.
	Buffers int64
	// Arenas is the number of arenas mapped.
	Arenas int
}

// arena is one mapping carved into runs. tags holds a boundary tag at the
// first and the last unit of every run; next and prev link a free run (by
// its first unit) into its list.
type arena struct {
	mem        []byte
	tags       []uint32
	next, prev []uint32
	free       uint32 // units in free runs
}

// arenaSet is what the allocator has mapped; it is its own object so that
// the cleanup that unmaps an allocator nobody closed can hold it without
// holding the allocator.
type arenaSet struct {
	arenas []*arena         // by id; nil where an arena was unmapped
	large  map[*byte][]byte // mappings of large buffers, by first byte
}

// Allocator hands out Bufs. It is safe for concurrent use.
type Allocator struct {
	mu         sync.Mutex
	unitShift  uint
	arenaBytes int
	arenaUnits uint32

	set *arenaSet
	// heads[l] is the first free run of l units (l < maxListed), heads[0]
	// the first of the longer ones; nonEmpty has bit l set when heads[l]
	// is a run.
	heads    [maxListed]uint32
	nonEmpty [maxListed / 64]uint64
	// emptyArenas counts arenas with no unit in use.
	emptyArenas int

	inUse, mapped, buffers int64
	quarantine             []Buf
	quarantined            int64
	closed                 bool
}

// UnitSize is what allocations within an arena are rounded up to: 1 KiB,
// or the page size in invariants builds.
func UnitSize() int { return 1 << currentUnitShift() }

func currentUnitShift() uint {
	if base.InvariantsEnabled {
		return uint(bits.TrailingZeros(uint(os.Getpagesize())))
	}
	return unitShift
}

// New returns an allocator.
func New(opts Options) *Allocator {
	a := &Allocator{unitShift: currentUnitShift(), set: &arenaSet{large: make(map[*byte][]byte)}}
	size := opts.ArenaBytes
	if size == 0 {
		size = MinArenaBytes
	}
	size = min(max(size, MinArenaBytes), MaxArenaBytes)
	a.arenaUnits = uint32(size >> a.unitShift)
	a.arenaBytes = int(a.arenaUnits) << a.unitShift
	for i := range a.heads {
		a.heads[i] = noRun
	}
	// An allocator dropped without Close gives its mappings back when it
	// is collected. Nothing can still use them then: every holder of a
	// buffer (a cache entry) keeps the allocator reachable.
	runtime.AddCleanup(a, unmapAll, a.set)
	return a
}

func unmapAll(set *arenaSet) {
	for i, ar := range set.arenas {
		if ar != nil {
			unmapMemory(ar.mem)
			set.arenas[i] = nil
		}
	}
	for k, m := range set.large {
		unmapMemory(m)
		delete(set.large, k)
	}
}

// ErrClosed is returned by Alloc after Close.
var ErrClosed = errors.New("manual: allocator closed")

// Alloc returns a buffer of n bytes (contents undefined). The caller must
// Free it exactly once.
func (a *Allocator) Alloc(n int) (Buf, error) {
	if n <= 0 {
		return Buf{b: []byte{}}, nil
	}
	units := uint64(n+(1<<a.unitShift)-1) >> a.unitShift
	if units > uint64(a.arenaUnits)/4 {
		return a.allocLarge(n)
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return Buf{}, errors.Wrapf(ErrClosed, "manual: allocating %d bytes", n)
	}
	id := a.findFit(uint32(units))
	if id == noRun {
		var err error
		if id, err = a.newArenaLocked(); err != nil {
			a.mu.Unlock()
			return Buf{}, errors.Wrapf(err, "manual: allocating %d bytes", n)
		}
	}
	ar, u := a.set.arenas[id>>unitBits], id&(1<<unitBits-1)
	l := ar.tags[u] >> tagLenShift
	a.unlist(id, l)
	if ar.free == a.arenaUnits {
		a.emptyArenas--
	}
	if rest := l - uint32(units); rest > 0 {
		setRun(ar, u+uint32(units), rest, tagFree)
		a.list(id+uint32(units), rest)
	}
	setRun(ar, u, uint32(units), tagUsed)
	ar.free -= uint32(units)
	size := int64(units) << a.unitShift
	a.inUse += size
	a.buffers++
	a.mu.Unlock()

	off := int(u) << a.unitShift
	b := Buf{b: ar.mem[off : off+n : off+int(size)], arena: uint16(id >> unitBits), unit: uint16(u), units: uint16(units)}
	if base.InvariantsEnabled {
		protect(b.b[:cap(b.b)], true)
	}
	return b, nil
}

// allocLarge maps a buffer of its own.
func (a *Allocator) allocLarge(n int) (Buf, error) {
	page := os.Getpagesize()
	m, err := mapMemory((n+page-1)/page*page, true)
	if err != nil {
		return Buf{}, errors.Wrapf(err, "manual: mapping %d bytes", n)
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		unmapMemory(m)
		return Buf{}, errors.Wrapf(ErrClosed, "manual: allocating %d bytes", n)
	}
	a.set.large[&m[0]] = m
	a.inUse += int64(len(m))
	a.mapped += int64(len(m))
	a.buffers++
	a.mu.Unlock()
	return Buf{b: m[:n:len(m)], arena: largeArena}, nil
}

// Free returns b's memory to the allocator. b must come from this
// allocator's Alloc and not have been freed; nothing may use its bytes
// afterwards.
func (a *Allocator) Free(b Buf) {
	if cap(b.b) == 0 {
		return
	}
	full := b.b[:cap(b.b)]
	a.mu.Lock()
	defer a.mu.Unlock()
	if b.arena == largeArena {
		m, ok := a.set.large[&full[0]]
		if !ok || len(m) != len(full) {
			panic(errors.AssertionFailedf("manual: free of a %d-byte buffer that is not allocated (freed twice?)", len(full)))
		}
		if base.InvariantsEnabled {
			poison(full)
		}
		delete(a.set.large, &full[0])
		a.inUse -= int64(len(m))
		a.mapped -= int64(len(m))
		a.buffers--
		unmapMemory(m)
		return
	}
	var ar *arena
	if int(b.arena) < len(a.set.arenas) {
		ar = a.set.arenas[b.arena]
	}
	arenaID, u, units := uint32(b.arena), uint32(b.unit), uint32(b.units)
	want := units<<tagLenShift | tagUsed
	if ar == nil || u+units > a.arenaUnits || ar.tags[u] != want || ar.tags[u+units-1] != want {
		panic(errors.AssertionFailedf("manual: free of a %d-unit run at unit %d of arena %d that is not allocated (freed twice?)",
			units, u, arenaID))
	}
	a.inUse -= int64(units) << a.unitShift
	a.buffers--
	if base.InvariantsEnabled {
		// Checked first: poisoning a run freed twice could fault on its
		// protection instead of reporting the double free.
		poison(full)
		protect(full, false)
	}
	if !base.InvariantsEnabled || a.closed {
		a.releaseLocked(arenaID, u, units)
		return
	}
	// Quarantine: the run stays protected and out of Alloc's reach for a
	// while, so that a stale read faults instead of reading a new block.
	setRun(ar, u, units, tagQuarantined)
	a.quarantine = append(a.quarantine, b)
	a.quarantined += b.Size()
	for a.quarantined > quarantineBytes {
		a.popQuarantineLocked()
	}
}

// popQuarantineLocked really frees the oldest quarantined run.
func (a *Allocator) popQuarantineLocked() {
	q := a.quarantine[0]
	a.quarantine[0] = Buf{}
	a.quarantine = a.quarantine[1:]
	a.quarantined -= q.Size()
	a.releaseLocked(uint32(q.arena), uint32(q.unit), uint32(q.units))
}

// releaseLocked puts the run back on a free list, merged with its free
// neighbours, and unmaps its arena if that leaves two arenas empty (or
// the allocator is closed).
func (a *Allocator) releaseLocked(arenaID, u, units uint32) {
	ar := a.set.arenas[arenaID]
	ar.free += units
	if u > 0 {
		if t := ar.tags[u-1]; t&tagStateMask == tagFree {
			l := t >> tagLenShift
			u -= l
			units += l
			a.unlist(arenaID<<unitBits|u, l)
		}
	}
	if end := u + units; end < a.arenaUnits {
		if t := ar.tags[end]; t&tagStateMask == tagFree {
			l := t >> tagLenShift
			a.unlist(arenaID<<unitBits|end, l)
			units += l
		}
	}
	setRun(ar, u, units, tagFree)
	a.list(arenaID<<unitBits|u, units)
	if ar.free != a.arenaUnits {
		return
	}
	a.emptyArenas++
	if a.emptyArenas > 1 || a.closed {
		a.unmapArenaLocked(arenaID)
	}
}

// unmapArenaLocked unmaps an empty arena.
func (a *Allocator) unmapArenaLocked(id uint32) {
	ar := a.set.arenas[id]
	a.unlist(id<<unitBits, a.arenaUnits)
	a.set.arenas[id] = nil
	a.emptyArenas--
	a.mapped -= int64(len(ar.mem))
	unmapMemory(ar.mem)
}

// newArenaLocked maps an arena and lists it as one free run; it returns
// that run.
func (a *Allocator) newArenaLocked() (uint32, error) {
	id := -1
	for i, ar := range a.set.arenas {
		if ar == nil {
			id = i
			break
		}
	}
	if id < 0 {
		if len(a.set.arenas) >= largeArena {
			return noRun, errors.Newf("manual: %d arenas mapped", len(a.set.arenas))
		}
		id = len(a.set.arenas)
		a.set.arenas = append(a.set.arenas, nil)
	}
	mem, err := mapMemory(a.arenaBytes, !base.InvariantsEnabled)
	if err != nil {
		return noRun, err
	}
	n := a.arenaUnits
	ar := &arena{mem: mem, tags: make([]uint32, n), next: make([]uint32, n), prev: make([]uint32, n), free: n}
	a.set.arenas[id] = ar
	a.mapped += int64(len(mem))
	a.emptyArenas++
	setRun(ar, 0, n, tagFree)
	run := uint32(id) << unitBits
	a.list(run, n)
	return run, nil
}

func setRun(ar *arena, u, units, state uint32) {
	t := units<<tagLenShift | state
	ar.tags[u] = t
	ar.tags[u+units-1] = t
}

func listFor(units uint32) uint32 {
	if units >= maxListed {
		return 0
	}
	return units
}

// list pushes the free run id of the given length onto its list.
func (a *Allocator) list(id, units uint32) {
	i := listFor(units)
	ar, u := a.set.arenas[id>>unitBits], id&(1<<unitBits-1)
	head := a.heads[i]
	ar.next[u], ar.prev[u] = head, noRun
	if head != noRun {
		a.set.arenas[head>>unitBits].prev[head&(1<<unitBits-1)] = id
	}
	a.heads[i] = id
	a.nonEmpty[i/64] |= 1 << (i % 64)
}

// unlist removes the free run id of the given length from its list.
func (a *Allocator) unlist(id, units uint32) {
	i := listFor(units)
	ar, u := a.set.arenas[id>>unitBits], id&(1<<unitBits-1)
	next, prev := ar.next[u], ar.prev[u]
	if prev != noRun {
		a.set.arenas[prev>>unitBits].next[prev&(1<<unitBits-1)] = next
	} else {
		a.heads[i] = next
	}
	if next != noRun {
		a.set.arenas[next>>unitBits].prev[next&(1<<unitBits-1)] = prev
	}
	if a.heads[i] == noRun {
		a.nonEmpty[i/64] &^= 1 << (i % 64)
	}
}

// findFit returns the shortest free run of at least units units, or noRun.
func (a *Allocator) findFit(units uint32) uint32 {
	if units < maxListed {
		w := units / 64
		word := a.nonEmpty[w] &^ (1<<(units%64) - 1)
		for {
			if word != 0 {
				return a.heads[w*64+uint32(bits.TrailingZeros64(word))]
			}
			if w++; w == uint32(len(a.nonEmpty)) {
				break
			}
			word = a.nonEmpty[w]
		}
	}
	// The long runs (all of maxListed units or more): first fit.
	for id := a.heads[0]; id != noRun; {
		ar, u := a.set.arenas[id>>unitBits], id&(1<<unitBits-1)
		if ar.tags[u]>>tagLenShift >= units {
			return id
		}
		id = ar.next[u]
	}
	return noRun
}

// Metrics returns the allocator's current figures.
func (a *Allocator) Metrics() Metrics {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := Metrics{InUseBytes: a.inUse, MappedBytes: a.mapped, Buffers: a.buffers}
	for _, ar := range a.set.arenas {
		if ar != nil {
			m.Arenas++
		}
	}
	return m
}

// Close unmaps every arena with nothing in use and refuses further
// allocations. Buffers still in use stay valid; each arena is unmapped
// when its last one is freed. It returns an error naming them if any are
// left: every buffer should have been freed by then (a leak, or a reader
// still running).
func (a *Allocator) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	for len(a.quarantine) > 0 {
		a.popQuarantineLocked()
	}
	for id, ar := range a.set.arenas {
		if ar != nil && ar.free == a.arenaUnits {
			a.unmapArenaLocked(uint32(id))
		}
	}
	if a.buffers > 0 {
		return errors.AssertionFailedf("manual: %d buffers (%d bytes) still in use at close", a.buffers, a.inUse)
	}
	return nil
}

// String describes the allocator's figures, for test failures.
func (m Metrics) String() string {
	return fmt.Sprintf("%d buffers, %d bytes in use, %d mapped in %d arenas", m.Buffers, m.InUseBytes, m.MappedBytes, m.Arenas)
}

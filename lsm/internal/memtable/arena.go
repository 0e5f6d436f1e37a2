package memtable

import (
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/bookie-index/bookie-index/lsm/internal/manual"

	"github.com/cockroachdb/errors"
)

// ErrArenaFull is returned (wrapped; test with errors.Is) by Add when the
// arena cannot hold the entry. Nothing is inserted in that case and the list
// stays usable; a smaller entry may still fit.
var ErrArenaFull = errors.New("memtable: arena full")

const (
	// arenaAlign is the alignment of every allocation. Tower slots need 4
	// and the trailer is a uint64; 8 keeps both natural.
	arenaAlign = 8
	// maxArenaSize is the largest arena uint32 offsets can address (and an
	// int can hold, on 32-bit platforms).
	maxArenaSize = min(math.MaxUint32, math.MaxInt) &^ (arenaAlign - 1)
	// arenaReserved bytes at the start of the arena are never handed out, so
	// that offset 0 can mean "no node".
	arenaReserved = arenaAlign
)

// arena is a bump allocator over one fixed buffer. One goroutine allocates
// and writes; any goroutine may read bytes it reached through an atomic load
// (see the package comment) and may call size at any time.
type arena struct {
	buf []byte
	// used is the number of bytes handed out, including arenaReserved.
	used atomic.Uint32
	// testHookStored, when set (by tests only), runs after every atomic
	// store, so that a test can read the list in each state a concurrent
	// reader could observe.
	testHookStored func()
}

// mappedArenaSize: arenas of at least this size are mapped outside the Go
// heap (manual.Map) rather than allocated on it.
const mappedArenaSize = 1 << 20

// newArena allocates an arena of size bytes, clamped to [minSize,
// maxArenaSize] and rounded up to arenaAlign.
//
// A memtable-sized arena is mapped outside the Go heap. On the heap, each
// 80 MiB arena of a 64 MiB write buffer was zeroed (and so made resident)
// in full when allocated, counted towards the collector's heap goal, so
// that a load with three memtables alive let the heap grow to twice their
// size, and stayed resident after its flush until a collection. A mapping
// becomes resident only as the skiplist fills it, and does not count
// towards the heap goal. It is unmapped when the arena becomes
// unreachable (runtime.AddCleanup): every user of the memory — the
// memtable, its skiplists, iterators — holds the arena, and keys and values
// read from it are copied before those are dropped, so nothing can read it
// afterwards.
func newArena(size, minSize int) *arena {
	n := arenaSizeFor(size, minSize)
	if n >= mappedArenaSize {
		// A mapping is page-aligned, which covers the 8-byte alignment
		// the atomic tower accesses rely on.
		if buf, err := manual.Map(n); err == nil {
			a := &arena{buf: buf}
			a.used.Store(arenaReserved)
			runtime.AddCleanup(a, manual.Unmap, buf)
			return a
		}
		// Out of address space or mappings: the heap will do.
	}
	words := n / arenaAlign
	// Allocating []uint64 guarantees 8-byte alignment of the base, which the
	// atomic tower accesses rely on.
	backing := make([]uint64, words)
	a := &arena{buf: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(backing))), words*arenaAlign)}
	a.used.Store(arenaReserved)
	return a
}

// arenaSizeFor returns the size newArena allocates when asked for size bytes.
func arenaSizeFor(size, minSize int) int {
	size = max(size, minSize)
	size = min(size, maxArenaSize)
	return int(alignUp(uint64(size)))
}

// size returns the bytes handed out so far.
func (a *arena) size() int { return int(a.used.Load()) }

// capacity returns the arena's total size in bytes.
func (a *arena) capacity() int { return len(a.buf) }

// alloc reserves n bytes aligned to arenaAlign and returns their offset, or
// false when they do not fit. Only the writer calls it.
func (a *arena) alloc(n uint64) (uint32, bool) {
	if n > uint64(len(a.buf)) {
		return 0, false
	}
	off := uint64(a.used.Load())
	end := off + alignUp(n)
	if end > uint64(len(a.buf)) {
		return 0, false
	}
	a.used.Store(uint32(end))
	return uint32(off), true
}

// loadUint32 atomically reads the 4-byte aligned word at off.
func (a *arena) loadUint32(off uint32) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&a.buf[off])))
}

// storeUint32 atomically writes the 4-byte aligned word at off.
func (a *arena) storeUint32(off, v uint32) {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&a.buf[off])), v)
	if a.testHookStored != nil {
		a.testHookStored()
	}
}

func alignUp(n uint64) uint64 {
	return (n + arenaAlign - 1) &^ (arenaAlign - 1)
}

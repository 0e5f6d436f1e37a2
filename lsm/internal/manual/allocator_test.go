package manual

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkAllocator walks every arena run by run and returns the first broken
// invariant: runs tile the arena, both tags of a run agree, free runs are
// coalesced and each is on the list of its length exactly once, the free
// counts and the in-use bytes add up.
func checkAllocator(a *Allocator) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	listed := map[uint32]uint32{} // run id -> list it is on
	for i, head := range a.heads {
		prev := noRun
		for id := head; id != noRun; {
			if _, dup := listed[id]; dup {
				return fmt.Errorf("run %#x listed twice", id)
			}
			listed[id] = uint32(i)
			ar := a.set.arenas[id>>unitBits]
			u := id & (1<<unitBits - 1)
			if ar.prev[u] != prev {
				return fmt.Errorf("run %#x: prev link %#x, want %#x", id, ar.prev[u], prev)
			}
			prev, id = id, ar.next[u]
		}
		if (a.nonEmpty[i/64]>>(i%64)&1 == 1) != (head != noRun) {
			return fmt.Errorf("list %d: bitmap disagrees with its head", i)
		}
	}
	var inUse int64
	empty := 0
	for id, ar := range a.set.arenas {
		if ar == nil {
			continue
		}
		var free uint32
		prevFree := false
		for u := uint32(0); u < a.arenaUnits; {
			t := ar.tags[u]
			l := t >> tagLenShift
			if l == 0 || u+l > a.arenaUnits || ar.tags[u+l-1] != t {
				return fmt.Errorf("arena %d unit %d: bad run tag %#x", id, u, t)
			}
			run := uint32(id)<<unitBits | u
			switch t & tagStateMask {
			case tagFree:
				if prevFree {
					return fmt.Errorf("arena %d unit %d: two free runs side by side", id, u)
				}
				if list, ok := listed[run]; !ok || list != listFor(l) {
					return fmt.Errorf("free run %#x of %d units is not on its list", run, l)
				}
				delete(listed, run)
				free += l
				prevFree = true
			case tagUsed:
				inUse += int64(l) << a.unitShift
				prevFree = false
			case tagQuarantined:
				prevFree = false
			default:
				return fmt.Errorf("arena %d unit %d: bad state in tag %#x", id, u, t)
			}
			u += l
		}
		if free != ar.free {
			return fmt.Errorf("arena %d: %d free units, counter says %d", id, free, ar.free)
		}
		if free == a.arenaUnits {
			empty++
		}
	}
	if len(listed) != 0 {
		return fmt.Errorf("%d listed runs are not free runs of a mapped arena", len(listed))
	}
	for _, m := range a.set.large {
		inUse += int64(len(m))
	}
	if inUse != a.inUse {
		return fmt.Errorf("runs in use sum to %d bytes, counter says %d", inUse, a.inUse)
	}
	if empty != a.emptyArenas {
		return fmt.Errorf("%d empty arenas, counter says %d", empty, a.emptyArenas)
	}
	return nil
}

// drainQuarantine releases the runs an invariants build holds back.
func drainQuarantine(a *Allocator) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.quarantine) > 0 {
		a.popQuarantineLocked()
	}
}

// fill writes a pattern derived from seed; check verifies it, so that a
// buffer overlapping another shows up.
func fill(b []byte, seed uint64) {
	for i := range b {
		b[i] = byte(seed + uint64(i)*31)
	}
}

func intact(b []byte, seed uint64) bool {
	for i := range b {
		if b[i] != byte(seed+uint64(i)*31) {
			return false
		}
	}
	return true
}

// TestAllocatorRandomized allocates and frees random sizes (mostly around a
// 64 KiB data block, some small, some larger than a quarter arena) and
// checks after every step that no live buffer was overwritten and that the
// allocator's structures are consistent. Then it frees everything and
// expects the memory back.
func TestAllocatorRandomized(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	a := New(Options{ArenaBytes: 2 << 20})
	type live struct {
		buf  Buf
		seed uint64
	}
	var bufs []live
	steps := 3000
	if testing.Short() {
		steps = 500
	}
	for step := 0; step < steps; step++ {
		if len(bufs) > 0 && (rng.IntN(2) == 0 || len(bufs) > 200) {
			i := rng.IntN(len(bufs))
			l := bufs[i]
			require.True(t, intact(l.buf.Bytes(), l.seed), "step %d: buffer %d overwritten", step, i)
			a.Free(l.buf)
			bufs[i] = bufs[len(bufs)-1]
			bufs = bufs[:len(bufs)-1]
		} else {
			var n int
			switch rng.IntN(10) {
			case 0:
				n = 1 + rng.IntN(5000)
			case 1:
				n = 512<<10 + rng.IntN(1<<20) // its own mapping
			default:
				n = 32<<10 + rng.IntN(36<<10)
			}
			b, err := a.Alloc(n)
			require.NoError(t, err)
			require.Equal(t, n, b.Len())
			require.GreaterOrEqual(t, b.Size(), int64(n))
			s := rng.Uint64()
			fill(b.Bytes(), s)
			bufs = append(bufs, live{b, s})
		}
		if err := checkAllocator(a); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	for _, l := range bufs {
		require.True(t, intact(l.buf.Bytes(), l.seed))
		a.Free(l.buf)
	}
	require.NoError(t, checkAllocator(a))
	drainQuarantine(a)
	require.NoError(t, checkAllocator(a))
	m := a.Metrics()
	require.Zero(t, m.InUseBytes, "%v", m)
	require.Zero(t, m.Buffers, "%v", m)
	require.LessOrEqual(t, m.Arenas, 1, "every empty arena but one is unmapped: %v", m)
	require.NoError(t, a.Close())
	require.Zero(t, a.Metrics().MappedBytes)
}

// TestAllocatorReusesFreedMemory: a steady stream of 64 KiB blocks, each
// freed after a while as a full cache evicts, stays within the memory of
// the blocks alive at once (rounded to units): nothing grows with the
// number of blocks that went through.
func TestAllocatorReusesFreedMemory(t *testing.T) {
	a := New(Options{ArenaBytes: 4 << 20})
	const alive = 100
	ring := make([]Buf, alive)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		a.Free(ring[i%alive])
		b, err := a.Alloc(48<<10 + rng.IntN(20<<10)) // data blocks cut between 48 and 68 KiB
		require.NoError(t, err)
		ring[i%alive] = b
	}
	m := a.Metrics()
	// 100 blocks of at most 68 KiB are 6.8 MB; the arenas hold them with
	// some free runs between.
	require.LessOrEqual(t, m.MappedBytes, int64(12<<20), "%v", m)
	for _, b := range ring {
		a.Free(b)
	}
	require.NoError(t, a.Close())
}

func TestAllocatorDoubleFreePanics(t *testing.T) {
	a := New(Options{})
	b, err := a.Alloc(100)
	require.NoError(t, err)
	a.Free(b)
	require.Panics(t, func() { a.Free(b) })
	big, err := a.Alloc(MinArenaBytes)
	require.NoError(t, err)
	a.Free(big)
	require.Panics(t, func() { a.Free(big) })
	require.NoError(t, a.Close())
}

// TestAllocatorCloseReportsLeaks: Close names the buffers still in use,
// keeps them valid, and unmaps their arena once the last is freed.
func TestAllocatorCloseReportsLeaks(t *testing.T) {
	a := New(Options{})
	b, err := a.Alloc(3000)
	require.NoError(t, err)
	fill(b.Bytes(), 7)
	err = a.Close()
	require.ErrorContains(t, err, "1 buffers")
	require.True(t, intact(b.Bytes(), 7), "a buffer in use at Close stays valid")
	_, err = a.Alloc(10)
	require.ErrorIs(t, err, ErrClosed)
	a.Free(b)
	require.Zero(t, a.Metrics().MappedBytes)
}

func TestAllocatorZeroLength(t *testing.T) {
	a := New(Options{})
	b, err := a.Alloc(0)
	require.NoError(t, err)
	require.Zero(t, b.Len())
	a.Free(b)
	a.Free(Buf{})
	require.NoError(t, a.Close())
}

// TestAllocatorConcurrent allocates and frees from several goroutines
// (run with -race in CI).
func TestAllocatorConcurrent(t *testing.T) {
	a := New(Options{ArenaBytes: 2 << 20})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			var mine []Buf
			for i := 0; i < 2000; i++ {
				if len(mine) > 20 || len(mine) > 0 && rng.IntN(2) == 0 {
					b := mine[len(mine)-1]
					mine = mine[:len(mine)-1]
					if !intact(b.Bytes(), uint64(g)) {
						t.Errorf("goroutine %d: buffer overwritten", g)
						return
					}
					a.Free(b)
					continue
				}
				b, err := a.Alloc(1 + rng.IntN(70<<10))
				if err != nil {
					t.Error(err)
					return
				}
				fill(b.Bytes(), uint64(g))
				mine = append(mine, b)
			}
			for _, b := range mine {
				a.Free(b)
			}
		}(g)
	}
	wg.Wait()
	require.NoError(t, checkAllocator(a))
	require.NoError(t, a.Close())
}

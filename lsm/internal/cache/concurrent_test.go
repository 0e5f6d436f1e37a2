package cache

import (
	"bytes"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// blockSize is the size of block (id, offset) in the concurrency test:
// fixed per key, so that any handle's bytes can be checked. About one key
// in 50 is larger than a shard, to exercise the oversized path.
func blockSize(id, offset uint64, shardCapacity int64) int {
	h := hashKey(key{id: id, offset: offset})
	if h%50 == 0 {
		return int(shardCapacity) // oversized once the overhead is added
	}
	return 32 + int(h%400)
}

// TestConcurrentOperations runs many goroutines doing every operation on a
// small cache, so evictions, replacements and EvictFile removals race with
// lookups and releases constantly; every handle must hold its key's bytes.
// Run it with -race.
func TestConcurrentOperations(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			testConcurrentOperations(t, strict)
		})
	}
}

func testConcurrentOperations(t *testing.T, strict bool) {
	const (
		goroutines = 8
		files      = 6
		blocks     = 64
		shardBits  = 2
	)
	iterations := 5000
	if *longTests {
		iterations = 200000
	}
	shardCapacity := 6 * charge(250) // a handful of entries per shard
	c := newTestCache(t, Options{
		Capacity:            shardCapacity << shardBits,
		NumShardBits:        shardBits,
		StrictCapacityLimit: strict,
	})
	want := func(id, offset uint64) []byte {
		return valueFor(id, offset, blockSize(id, offset, shardCapacity))
	}
	errLoad := errors.New("injected load error")

	var lookups [goroutines]int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			var held []Handle
			var heldKeys []key
			var pinned int64
			check := func(h Handle, id, offset uint64, what string) error {
				if !bytes.Equal(h.Value(), want(id, offset)) {
					return errors.Newf("%s(%d, %d) returned the wrong bytes", what, id, offset)
				}
				return nil
			}
			keep := func(h Handle, id, offset uint64) {
				if rng.Intn(4) == 0 && len(held) < 8 {
					held = append(held, h)
					heldKeys = append(heldKeys, key{id, offset})
				} else {
					h.Release()
				}
			}
			for i := 0; i < iterations; i++ {
				id := uint64(1 + rng.Intn(files))
				offset := uint64(rng.Intn(1 + rng.Intn(blocks))) // skewed: low offsets are hot
				kind := Kind(rng.Intn(int(NumKinds)))
				pri := Priority(rng.Intn(2))
				var err error
				switch r := rng.Intn(100); {
				case r < 15:
					lookups[g]++
					// A lookup used at once, as a point lookup does.
					if h, ok := c.Lookup(id, offset, kind); ok {
						if !bytes.Equal(h.Value(), want(id, offset)) {
							err = errors.Newf("Lookup(%d, %d) returned another block's bytes", id, offset)
						}
						h.Release()
					}
				case r < 35:
					lookups[g]++
					if h, ok := c.Lookup(id, offset, kind); ok {
						err = check(h, id, offset, "Lookup")
						keep(h, id, offset)
					}
				case r < 70:
					lookups[g]++
					fail := rng.Intn(20) == 0
					h, _, lerr := c.getOrLoadBytes(id, offset, kind, pri, func() ([]byte, error) {
						if fail {
							return nil, errLoad
						}
						return want(id, offset), nil
					})
					switch {
					case lerr != nil && !errors.Is(lerr, errLoad):
						err = lerr
					case lerr == nil:
						err = check(h, id, offset, "GetOrLoad")
						keep(h, id, offset)
					}
				case r < 85:
					h, ierr := c.insertBytes(id, offset, kind, pri, want(id, offset))
					switch {
					case ierr != nil && !(strict && errors.Is(ierr, ErrFull)):
						err = ierr
					case ierr == nil:
						err = check(h, id, offset, "Insert")
						keep(h, id, offset)
					}
				case r < 95:
					if len(held) > 0 {
						j := rng.Intn(len(held))
						err = check(held[j], heldKeys[j].id, heldKeys[j].offset, "held handle")
						held[j].Release()
						held = append(held[:j], held[j+1:]...)
						heldKeys = append(heldKeys[:j], heldKeys[j+1:]...)
					}
				case r < 98:
					c.EvictFile(id)
				default:
					d := int64(rng.Intn(2000))
					if pinned > 0 {
						d = -pinned
					}
					c.AddPinned(d)
					pinned += d
				}
				if err != nil {
					errs <- err
					return
				}
			}
			for j, h := range held {
				if err := check(h, heldKeys[j].id, heldKeys[j].offset, "held handle"); err != nil {
					errs <- err
					return
				}
				h.Release()
			}
			c.AddPinned(-pinned)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	checkInvariants(t, c, true)
	m := c.Metrics()
	require.Zero(t, m.EntryPinnedUsage)
	require.Zero(t, m.PinnedUsage)
	total := m.Total()
	var n int64
	for _, l := range lookups {
		n += l
	}
	require.Equal(t, n, total.Hits+total.Misses)
	require.Positive(t, total.Evictions, "the test should force evictions")
	require.Positive(t, m.OversizedRejects)
	require.Positive(t, total.Hits)
	for i := range c.shards {
		require.Empty(t, c.shards[i].flights)
	}
	if strict {
		require.LessOrEqual(t, m.Usage, m.Capacity)
		require.Positive(t, m.StrictRejects)
	}
}

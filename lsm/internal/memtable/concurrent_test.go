package memtable

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// concurrentValue derives an entry's value from its index in the insert order,
// its trailer and its key, so a reader can tell a fully written node from a
// torn one and know which entry it is looking at:
//
//	BE64(trailer) | BE32(index) | key
func concurrentValue(index int, key []byte, trailer base.Trailer) []byte {
	v := binary.BigEndian.AppendUint64(nil, uint64(trailer))
	v = binary.BigEndian.AppendUint32(v, uint32(index))
	return append(v, key...)
}

// checkConcurrentValue returns the index stored in the current entry's value,
// or an error if the value does not match the entry's key and trailer.
func checkConcurrentValue(it *Iterator) (int, error) {
	v := it.Value()
	if len(v) != 12+len(it.UserKey()) || binary.BigEndian.Uint64(v) != uint64(it.Trailer()) || !bytes.Equal(v[12:], it.UserKey()) {
		return 0, errors.Newf("torn node %q#%d: value %x", it.UserKey(), it.Trailer(), v)
	}
	return int(binary.BigEndian.Uint32(v[8:])), nil
}

// TestConcurrentReaders runs readers that scan and seek while one writer
// inserts. Every reader checks that the list is sorted, that each node's
// value matches its key (no torn node), and that every key whose Add
// returned before the reader's scan began is found. Run it with -race.
func TestConcurrentReaders(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	g := newKeyGen(rng)
	n := scale(3000, 30)

	// Mix ascending ledger-like runs (the splice fast path) with random keys.
	var keys []entry
	seen := map[string]bool{}
	for len(keys) < n {
		var k []byte
		if rng.Intn(2) == 0 {
			k = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(rng.Intn(4))), uint64(len(keys)))
		} else {
			k = g.key()
		}
		e := entry{key: k, trailer: g.trailer()}
		id := string(k) + string(binary.BigEndian.AppendUint64(nil, uint64(e.trailer)))
		if seen[id] {
			continue
		}
		seen[id] = true
		e.value = concurrentValue(len(keys), e.key, e.trailer)
		keys = append(keys, e)
	}

	s := NewSkiplist(64 << 20)
	var published atomic.Int64 // keys[:published] have been added
	var done atomic.Bool
	const readers = 3
	type readerState struct {
		passes  atomic.Int64
		started chan struct{} // receives (without blocking the reader) when a pass starts
		exited  chan struct{} // closed when the reader returns
	}
	var rs [readers]readerState
	for r := range rs {
		rs[r].started = make(chan struct{}, 1)
		rs[r].exited = make(chan struct{})
	}
	errs := make(chan error, readers+1)
	var wg sync.WaitGroup

	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		const chunks = 20
		for i, e := range keys {
			if err := s.Add(e.key, e.trailer, e.value); err != nil {
				errs <- err
				return
			}
			published.Store(int64(i + 1))
			if (i+1)%(len(keys)/chunks) != 0 {
				continue
			}
			// The writer is much faster than a verification pass. Before
			// each chunk, wait for every reader to start a new pass, so that
			// passes overlap inserts however the goroutines are scheduled.
			for r := range rs {
				select {
				case <-rs[r].started: // a stale signal from an earlier pass
				default:
				}
				select {
				case <-rs[r].started:
				case <-rs[r].exited:
				}
			}
		}
	}()

	for r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(rs[r].exited)
			var it Iterator
			seenInPass := make([]int, len(keys))
			for pass := 1; ; pass++ {
				last := done.Load()
				want := int(published.Load())
				rs[r].passes.Add(1)
				select {
				case rs[r].started <- struct{}{}:
					// Let a writer waiting for this signal run now rather
					// than after this goroutine's time slice.
					runtime.Gosched()
				default:
				}
				if err := verifyPass(s, &it, keys[:want], seenInPass, pass); err != nil {
					errs <- errors.Wrapf(err, "reader %d pass %d (%d keys published)", r, pass, want)
					return
				}
				if last {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, len(keys), s.Count())
	for r := range rs {
		require.Greater(t, rs[r].passes.Load(), int64(20), "reader %d made too few passes to overlap the writer", r)
		t.Logf("reader %d: %d passes", r, rs[r].passes.Load())
	}
}

// verifyPass scans the list once, checking order and node integrity and that
// every published entry is present, then seeks to a sample of them.
// seenInPass[i] is set to pass when entry i is scanned.
func verifyPass(s *Skiplist, it *Iterator, published []entry, seenInPass []int, pass int) error {
	s.InitIter(it)
	var prevKey []byte
	var prevTrailer base.Trailer
	scanned := 0
	for ok := it.First(); ok; ok = it.Next() {
		if scanned > 0 && base.CompareInternal(prevKey, prevTrailer, it.UserKey(), it.Trailer()) >= 0 {
			return errors.Newf("unsorted: %q#%d then %q#%d", prevKey, prevTrailer, it.UserKey(), it.Trailer())
		}
		index, err := checkConcurrentValue(it)
		if err != nil {
			return err
		}
		seenInPass[index] = pass
		prevKey, prevTrailer = it.UserKey(), it.Trailer()
		scanned++
	}
	for i, e := range published {
		if seenInPass[i] != pass {
			return errors.Newf("published entry %d %q#%d missing from the scan", i, e.key, e.trailer)
		}
	}
	// Seeks find published entries too; check a sample, a different one on
	// each pass.
	for i := pass % 37; i < len(published); i += 37 {
		e := published[i]
		if !it.SeekGE(e.key, e.trailer) || !bytes.Equal(it.UserKey(), e.key) || it.Trailer() != e.trailer {
			return errors.Newf("published key %q#%d not found by SeekGE", e.key, e.trailer)
		}
		if it.Prev() && base.CompareInternal(it.UserKey(), it.Trailer(), e.key, e.trailer) >= 0 {
			return errors.Newf("Prev from %q#%d went to %q#%d", e.key, e.trailer, it.UserKey(), it.Trailer())
		}
	}
	// A short reverse walk from the end stays sorted.
	if it.Last() {
		k, tr := it.UserKey(), it.Trailer()
		for range 20 {
			if !it.Prev() {
				break
			}
			if base.CompareInternal(it.UserKey(), it.Trailer(), k, tr) >= 0 {
				return errors.Newf("reverse walk unsorted: %q#%d before %q#%d", it.UserKey(), it.Trailer(), k, tr)
			}
			k, tr = it.UserKey(), it.Trailer()
		}
	}
	return nil
}

// TestPublicationSteps checks every intermediate state of every insert, as a
// reader running between two of the writer's atomic stores would see it: the
// list must be sorted, hold only intact nodes and contain every entry added
// before. Unlike TestConcurrentReaders it does not depend on scheduling.
func TestPublicationSteps(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	g := newKeyGen(rng)
	var keys []entry
	var ids modelBuilder
	for len(keys) < scale(300, 10) {
		e := entry{key: g.key(), trailer: g.trailer()}
		if rng.Intn(2) == 0 && len(keys) > 0 {
			// Continue an ascending run to exercise the cached splice.
			e.key = append(slices.Clone(keys[len(keys)-1].key), 0)
		}
		if !ids.insert(e) {
			continue
		}
		e.value = concurrentValue(len(keys), e.key, e.trailer)
		keys = append(keys, e)
	}

	s := NewSkiplist(1 << 20)
	var it Iterator
	seenInPass := make([]int, len(keys))
	pass, steps := 0, 0
	for i, e := range keys {
		s.arena.testHookStored = func() {
			pass++
			steps++
			if err := verifyPass(s, &it, keys[:i], seenInPass, pass); err != nil {
				t.Fatalf("adding entry %d %s, after store %d: %v", i, e, steps, err)
			}
		}
		require.NoError(t, s.Add(e.key, e.trailer, e.value))
	}
	// Two stores per level of every node: its own tower, then its predecessor.
	require.Greater(t, steps, 2*len(keys), "some nodes must be taller than one level")
}

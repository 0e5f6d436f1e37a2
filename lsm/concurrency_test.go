package lsm

import (
	"context"
	"encoding/binary"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestConcurrentEverythingThenClose runs writers, point readers, iterators,
// flushes, manual compactions and range deletions together, then closes
// the DB in the middle of it all: nothing may panic or hang, every call
// after Close fails with ErrClosed, and each value read is one that was
// written for its key.
func TestConcurrentEverythingThenClose(t *testing.T) {
	o := smallOptions(NewMemFS())
	o.MaxBackgroundJobs = 3
	d, err := Open("db", o)
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	run := func(seed int64, f func(r *rand.Rand) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := f(r); err != nil {
					if errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) {
						return
					}
					t.Errorf("unexpected error: %v", err)
					return
				}
			}
		}()
	}
	value := func(l, e uint64) []byte { return entryKey(l*7, e*3)[4:12] }
	for w := 0; w < 2; w++ {
		run(int64(w), func(r *rand.Rand) error {
			var b Batch
			l := uint64(r.Intn(20))
			for i := 0; i < 50; i++ {
				e := uint64(r.Intn(1000))
				b.Set(entryKey(l, e), value(l, e))
			}
			if r.Intn(20) == 0 {
				b.DeleteRange(entryKey(l, 0), entryKey(l, 100))
			}
			return d.Apply(&b, &WriteOptions{Sync: r.Intn(2) == 0})
		})
	}
	run(10, func(r *rand.Rand) error {
		l, e := uint64(r.Intn(20)), uint64(r.Intn(1000))
		v, err := d.Get(entryKey(l, e))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err == nil && string(v) != string(value(l, e)) {
			t.Errorf("Get(%d,%d) = %x, want %x", l, e, v, value(l, e))
		}
		return err
	})
	run(11, func(r *rand.Rand) error {
		l := uint64(r.Intn(20))
		it, err := d.NewIter(&IterOptions{LowerBound: entryKey(l, 0), UpperBound: entryKey(l+1, 0)})
		if err != nil {
			return err
		}
		n := 0
		for ok := it.Last(); ok && n < 50; ok = it.Prev() {
			k := it.Key()
			if string(it.Value()) != string(value(binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]))) {
				t.Errorf("iterator value mismatch at %x", k)
			}
			n++
		}
		return it.Close()
	})
	run(12, func(r *rand.Rand) error {
		time.Sleep(time.Duration(r.Intn(5)) * time.Millisecond)
		if r.Intn(2) == 0 {
			return d.Flush()
		}
		err := d.Compact(ctx, nil, nil)
		if errors.Is(err, ErrClosed) {
			return err
		}
		return err
	})
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, d.Close())
	close(stop)
	wg.Wait()
	_, err = d.Get(entryKey(1, 1))
	require.True(t, errors.Is(err, ErrClosed))
	var b Batch
	b.Set([]byte("x"), []byte("y"))
	require.True(t, errors.Is(d.Apply(&b, Sync), ErrClosed))
	_, err = d.NewIter(nil)
	require.True(t, errors.Is(err, ErrClosed))
	require.True(t, errors.Is(d.Flush(), ErrClosed))
	require.True(t, errors.Is(d.Compact(ctx, nil, nil), ErrClosed))
	_, err = d.NewSnapshot()
	require.True(t, errors.Is(err, ErrClosed))
}

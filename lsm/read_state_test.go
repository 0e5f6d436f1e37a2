package lsm

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestGetsReleaseReadStates runs gets and floors, which reference read
// states on stripes (loadReadStateStripe), while flushes and compactions replace the
// state many times a second. Every get must find its value (a state freed
// under a get would have its tables deleted), and once the gets stop and
// the next flush deletes obsolete files, the directory must hold exactly
// the live tables (a state never freed would keep its tables).
func TestGetsReleaseReadStates(t *testing.T) {
	fs := NewMemFS()
	o := smallOptions(fs)
	d, err := Open("db", o)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	value := func(l, e uint64) []byte { return entryKey(l*7, e*3)[4:12] }
	write := func(l uint64) {
		var b Batch
		for e := uint64(0); e < 200; e++ {
			b.Set(entryKey(l, e), value(l, e))
		}
		require.NoError(t, d.Apply(&b, NoSync))
	}
	write(0)
	require.NoError(t, d.Flush())

	stop := make(chan struct{})
	var wg sync.WaitGroup
	gets := make([]int, 4)
	for g := range gets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := uint64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g == 0 { // floors reference states on stripes too
					k, _, found, err := d.LastInRange(nil, nil, entryKey(0, 0), entryKey(1, 0), nil)
					if err != nil || !found || string(k) != string(entryKey(0, 199)) {
						t.Errorf("LastInRange(ledger 0) = %x, %v, %v", k, found, err)
						return
					}
					gets[g]++
					continue
				}
				e := (i*31 + uint64(g)) % 200
				v, err := d.Get(entryKey(0, e))
				if err != nil || string(v) != string(value(0, e)) {
					t.Errorf("Get(0, %d) = %x, %v", e, v, err)
					return
				}
				gets[g]++
			}
		}()
	}
	ctx := context.Background()
	// A fixed number of replacements (each flush and compaction publishes
	// new states), not a time window: a slow machine runs fewer gets
	// between them, never fewer replacements.
	const replacements = 40
	for replaced := 0; replaced < replacements; replaced++ {
		write(uint64(1 + replaced%50))
		require.NoError(t, d.Flush())
		if replaced%5 == 0 {
			require.NoError(t, d.Compact(ctx, nil, nil))
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d flushes, gets per goroutine %v", replacements, gets)
	for g, n := range gets {
		require.Positive(t, n, "goroutine %d read nothing while the states changed", g)
	}

	require.NoError(t, d.WaitForCompactions(ctx))
	write(99)
	require.NoError(t, d.Flush()) // deletes the files of freed versions
	require.NoError(t, d.WaitForCompactions(ctx))
	rs := d.loadReadState()
	var live []uint64 // the current version's tables
	for level := range manifest.NumLevels {
		for _, tm := range rs.version.Tables(level) {
			live = append(live, tm.FileNum)
		}
	}
	rs.unref()
	names, err := fs.List("db")
	require.NoError(t, err)
	var tables []string
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") {
			tables = append(tables, n)
		}
	}
	require.NotEmpty(t, tables)
	require.Equal(t, len(live), len(tables), "%d table files, %d live tables %v: a read state kept its version", len(tables), len(live), live)
	_, err = d.Get(entryKey(0, 1))
	require.False(t, errors.Is(err, ErrNotFound))
}

// TestMemTableArenaRecycledWhenUnreachable: a flushed memtable's arena is
// recycled only once no read state lists it. An iterator opened on it
// keeps reading its values while many later memtables come and go (built
// in recycled arenas); once it closes, the memtable's arena is released
// too, and the next memtable of its size is built in a recycled arena.
func TestMemTableArenaRecycledWhenUnreachable(t *testing.T) {
	d, err := Open("db", smallOptions(NewMemFS()))
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	value := func(l, e uint64) []byte { return entryKey(l*7, e*3)[4:12] }
	write := func(l uint64) {
		var b Batch
		for e := uint64(0); e < 300; e++ {
			b.Set(entryKey(l, e), value(l, e))
		}
		require.NoError(t, d.Apply(&b, NoSync))
	}
	write(0)
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	held := it.s.rs.memtables[0]
	require.NoError(t, d.Flush())
	for l := uint64(1); l < 60; l++ { // many switches and flushes
		write(l)
		if l%5 == 0 {
			require.NoError(t, d.Flush())
		}
	}
	require.NoError(t, d.Flush())
	require.NotNil(t, held.mt, "recycled while an iterator lists it")
	e := uint64(0)
	for ok := it.First(); ok; ok = it.Next() {
		require.Equal(t, string(entryKey(0, e)), string(it.Key()))
		require.Equal(t, string(value(0, e)), string(it.Value()))
		e++
	}
	require.Equal(t, uint64(300), e)
	require.NoError(t, it.Close())
	require.Nil(t, held.mt, "the last reader gone, its arena is recycled")
	require.NotNil(t, d.spareMem.Load())
}

package lsm

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestIdleCompaction: a flush below the L0 trigger stays in L0 while
// writes go on and is compacted into the base level once they stop for
// IdleCompactionDelay; every key reads back, and a negative delay never
// compacts.
func TestIdleCompaction(t *testing.T) {
	for _, delay := range []time.Duration{time.Second, -1} {
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			opts := smallOptions(NewMemFS())
			opts.Level0FileNumCompactionTrigger = 4
			opts.IdleCompactionDelay = delay
			d, err := Open("db", opts)
			require.NoError(t, err)
			defer d.Close()
			var b Batch
			put := func(i int) {
				b.Reset()
				b.Set([]byte(matrixKey(i)), []byte(matrixValue(i)))
				require.NoError(t, d.Apply(&b, NoSync))
			}
			for i := range 200 {
				put(i)
			}
			require.NoError(t, d.Flush())
			require.NoError(t, d.WaitForCompactions(t.Context()))
			require.Equal(t, 1, l0Tables(d))

			// Writes every 20 ms keep the index from being idle (a delay of a
			// second, not less: a loaded machine stalled a 20 ms sleep past
			// 100 ms and the compaction ran).
			for i := range 15 {
				put(1000 + i)
				time.Sleep(20 * time.Millisecond)
			}
			require.Equal(t, 1, l0Tables(d), "compacted while writes went on")

			if delay < 0 {
				time.Sleep(300 * time.Millisecond)
				require.Equal(t, 1, l0Tables(d), "a negative delay compacts nothing")
				return
			}
			require.Eventually(t, func() bool { return l0Tables(d) == 0 }, 10*time.Second, 10*time.Millisecond,
				"the idle compaction did not run")
			tables := 0
			for _, l := range d.Metrics().Levels {
				tables += l.Tables
			}
			require.Positive(t, tables, "the L0 table went to the base level")
			for i := range 200 {
				v, err := d.Get([]byte(matrixKey(i)))
				require.NoError(t, err)
				require.Equal(t, matrixValue(i), string(v))
			}
		})
	}
}

// TestIdleCompactionAfterClose: a DB closed with the idle timer armed
// does not compact or fail when the timer would have fired.
func TestIdleCompactionAfterClose(t *testing.T) {
	opts := smallOptions(NewMemFS())
	opts.Level0FileNumCompactionTrigger = 4
	opts.IdleCompactionDelay = 20 * time.Millisecond
	d, err := Open("db", opts)
	require.NoError(t, err)
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	require.NoError(t, d.Apply(&b, Sync))
	require.NoError(t, d.Flush())
	require.NoError(t, d.Close())
	time.Sleep(60 * time.Millisecond)
	d, err = Open("db", opts)
	require.NoError(t, err)
	defer d.Close()
	v, err := d.Get([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
}

// TestIdleDropsSpareArena: the arena of a flushed memtable is kept for the
// next memtable while writes go on, and given back once the index has had
// no write for the idle delay, even with nothing in L0 to compact.
func TestIdleDropsSpareArena(t *testing.T) {
	opts := smallOptions(NewMemFS())
	opts.IdleCompactionDelay = 100 * time.Millisecond
	d, err := Open("db", opts)
	require.NoError(t, err)
	defer d.Close()
	var b Batch
	for i := range 2000 {
		b.Reset()
		b.Set([]byte(matrixKey(i)), []byte(matrixValue(i)))
		require.NoError(t, d.Apply(&b, NoSync))
	}
	require.NoError(t, d.Flush())
	require.NoError(t, d.Compact(t.Context(), nil, nil)) // L0 empty: no idle compaction to wait for
	require.Zero(t, l0Tables(d))
	require.NotNil(t, d.spareMem.Load(), "a flushed memtable's arena is kept")
	waitUntil(t, "the spare arena given back", func() bool { return d.spareMem.Load() == nil })
}

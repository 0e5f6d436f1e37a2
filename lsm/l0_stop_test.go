package lsm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// l0Tables returns the DB's L0 table count now.
func l0Tables(d *DB) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.mu.versions.Current()
	defer v.Unref()
	return v.NumTables(0)
}

// stopAt4 sets small L0 triggers.
func stopAt4(o *Options) *Options {
	o.Level0FileNumCompactionTrigger = 2
	o.Level0SlowdownWritesTrigger = 3
	o.Level0StopWritesTrigger = 4
	return o
}

// makeL0Tables writes n L0 tables (each spanning the same keys) with
// compactions off, and then one more batch left in the WAL.
func makeL0Tables(t *testing.T, fs FS, n int) {
	d, err := Open("db", noCompactions(smallOptions(fs)))
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		for _, k := range []string{"a", "m", "z"} {
			reviewSet(t, d, k, fmt.Sprint(i))
		}
		require.NoError(t, d.Flush())
	}
	reviewSet(t, d, "m", "wal")
	require.Equal(t, n, l0Tables(d))
	require.NoError(t, d.Close())
}

// The flush of the recovered WAL at open adds an L0 table like any other:
// it waits for L0 to be below the stop trigger. It used to add one at every
// open however full L0 was, which a crash-looping process turned into an
// unbounded L0.
func TestOpenFlushWaitsBelowL0StopTrigger(t *testing.T) {
	fs := NewMemFS()
	makeL0Tables(t, fs, 10)
	d, err := Open("db", stopAt4(smallOptions(fs)))
	require.NoError(t, err)
	defer d.Close()
	require.LessOrEqual(t, l0Tables(d), 4, "Open added its L0 table above the stop trigger")
	require.Equal(t, "wal", reviewGet(t, d, "m", nil))
	require.Equal(t, "9", reviewGet(t, d, "z", nil))
}

// Flush waits below the stop trigger too (it used to switch memtables and
// add an L0 table whatever L0 held).
func TestFlushWaitsBelowL0StopTrigger(t *testing.T) {
	fs := NewMemFS()
	makeL0Tables(t, fs, 10)
	d, err := Open("db", noCompactions(smallOptions(fs)))
	require.NoError(t, err)
	defer d.Close()
	require.Equal(t, 11, l0Tables(d))
	d.mu.Lock()
	stopAt4(d.opts)
	d.mu.Unlock()
	reviewSet(t, d, "m", "flushed")
	require.NoError(t, d.Flush())
	require.LessOrEqual(t, l0Tables(d), 4, "Flush added its L0 table above the stop trigger")
	require.Equal(t, "flushed", reviewGet(t, d, "m", nil))
}

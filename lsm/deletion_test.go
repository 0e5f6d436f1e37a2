package lsm

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func tableBytes(m Metrics) uint64 {
	var n uint64
	for _, l := range m.Levels {
		n += l.Bytes
	}
	return n
}

// TestDeletedLedgersSpaceComesBack deletes most ledgers with one range
// tombstone each and checks that background compactions give their space
// back, without a manual compaction, and that floor lookups on deleted
// ledgers skip their entries instead of stepping through them.
func TestDeletedLedgersSpaceComesBack(t *testing.T) {
	o := smallOptions(NewMemFS())
	o.WriteBufferSize = 256 << 10
	d, err := Open("db", o)
	require.NoError(t, err)
	defer d.Close()
	const ledgers, entries = 40, 2000
	var b Batch
	for l := uint64(0); l < ledgers; l++ {
		b.Reset()
		for e := uint64(0); e < entries; e++ {
			b.Set(entryKey(l, e), entryKey(l, e)[8:])
		}
		require.NoError(t, d.Apply(&b, NoSync))
	}
	require.NoError(t, d.Compact(context.Background(), nil, nil))
	before := tableBytes(d.Metrics())

	// A snapshot older than the deletion keeps the deleted entries in the
	// tables until the floor check below has stepped over them: without it
	// a background compaction could drop them first and the check would
	// find nothing to skip (it failed that way under load).
	snap, err := d.NewSnapshot()
	require.NoError(t, err)

	// Delete 30 of the 40 ledgers, as RemoveOffsetFromDeletedLedgers does.
	b.Reset()
	for l := uint64(0); l < ledgers; l++ {
		if l%4 != 0 {
			b.DeleteRange(entryKey(l, 0), entryKey(l, 1<<63-1))
		}
	}
	require.NoError(t, d.Apply(&b, Sync))
	require.NoError(t, d.Flush())

	// Floor lookup on a deleted ledger: nothing, found by skipping.
	it, err := d.NewIter(&IterOptions{LowerBound: entryKey(5, 0), UpperBound: entryKey(5, 1<<63-1)})
	require.NoError(t, err)
	require.False(t, it.Last())
	require.NoError(t, it.Close())
	require.Greater(t, d.Metrics().RangeDeletionSkips, int64(0))
	_, err = d.Get(entryKey(5, 17))
	require.True(t, errors.Is(err, ErrNotFound))
	require.NoError(t, snap.Close())

	deadline := time.Now().Add(10 * time.Second)
	for {
		after := tableBytes(d.Metrics())
		if after < before/2 {
			t.Logf("table bytes %d -> %d without a manual compaction; metrics %+v", before, after, d.Metrics().Levels)
			break
		}
		require.True(t, time.Now().Before(deadline), "space not reclaimed: %d -> %d bytes", before, after)
		time.Sleep(20 * time.Millisecond)
	}
	// The live ledgers are intact.
	for l := uint64(0); l < ledgers; l += 4 {
		v, err := d.Get(entryKey(l, entries-1))
		require.NoError(t, err)
		require.Equal(t, entryKey(l, entries-1)[8:], v)
	}
	it, err = d.NewIter(&IterOptions{LowerBound: entryKey(8, 0), UpperBound: entryKey(8, 1<<63-1)})
	require.NoError(t, err)
	require.True(t, it.Last())
	require.Equal(t, entryKey(8, entries-1), it.Key())
	require.NoError(t, it.Close())
}

package lsm

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func smallOptions(fs FS) *Options {
	return &Options{
		FS:                             fs,
		WriteBufferSize:                64 << 10,
		TargetFileSizeBase:             64 << 10,
		MaxBytesForLevelBase:           1 << 20,
		Level0FileNumCompactionTrigger: 2,
		BlockSize:                      1024,
		MetadataBlockSize:              256,
		BlockCacheSize:                 1 << 20,
	}
}

func TestBasicReadWrite(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("b"), []byte("2"))
	b.Set([]byte("c"), []byte("3"))
	require.NoError(t, d.Apply(&b, Sync))
	v, err := d.Get([]byte("b"))
	require.NoError(t, err)
	require.Equal(t, "2", string(v))
	_, err = d.Get([]byte("x"))
	require.True(t, errors.Is(err, ErrNotFound))

	b.Reset()
	b.Delete([]byte("b"))
	require.NoError(t, d.Apply(&b, NoSync))
	_, err = d.Get([]byte("b"))
	require.True(t, errors.Is(err, ErrNotFound))

	require.NoError(t, d.Flush())
	v, err = d.Get([]byte("c"))
	require.NoError(t, err)
	require.Equal(t, "3", string(v))

	it, err := d.NewIter(nil)
	require.NoError(t, err)
	var keys []string
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, string(it.Key()))
	}
	require.NoError(t, it.Close())
	require.Equal(t, []string{"a", "c"}, keys)

	b.Reset()
	b.DeleteRange([]byte("a"), []byte("b"))
	require.NoError(t, d.Apply(&b, Sync))
	_, err = d.Get([]byte("a"))
	require.True(t, errors.Is(err, ErrNotFound))
	require.NoError(t, d.Close())

	d, err = Open("db", smallOptions(fs))
	require.NoError(t, err)
	_, err = d.Get([]byte("a"))
	require.True(t, errors.Is(err, ErrNotFound))
	v, err = d.Get([]byte("c"))
	require.NoError(t, err)
	require.Equal(t, "3", string(v))
	for i := 0; i < 2000; i++ {
		b.Reset()
		b.Set([]byte(fmt.Sprintf("k%05d", i)), make([]byte, 100))
		require.NoError(t, d.Apply(&b, NoSync))
	}
	require.NoError(t, d.Compact(context.Background(), nil, nil))
	m := d.Metrics()
	t.Logf("levels: %+v", m.Levels)
	require.Equal(t, 0, m.Levels[0].Tables)
	v, err = d.Get([]byte("k01234"))
	require.NoError(t, err)
	require.Len(t, v, 100)
	require.NoError(t, d.Close())
	_, err = d.Get([]byte("c"))
	require.True(t, errors.Is(err, ErrClosed))
	require.True(t, errors.Is(d.Close(), ErrClosed))
}

// TestRangeDeletionBounds checks the bounds of a range deletion as
// RocksDB and Pebble take them: an empty range (start == end) deletes
// nothing, uses no sequence number and is not an error, alone or in a
// batch; an end before the start makes Apply refuse the whole batch.
func TestRangeDeletionBounds(t *testing.T) {
	d, err := Open("db", smallOptions(NewMemFS()))
	require.NoError(t, err)
	defer d.Close()
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("b"), []byte("2"))
	require.NoError(t, d.Apply(&b, Sync))
	seq := d.Metrics().LastSeqNum

	b.Reset()
	b.DeleteRange([]byte("a"), []byte("a"))
	require.True(t, b.Empty())
	require.NoError(t, d.Apply(&b, Sync))
	b.Reset()
	b.DeleteRange([]byte("b"), []byte("b"))
	b.Set([]byte("c"), []byte("3"))
	require.NoError(t, d.Apply(&b, Sync))
	require.Equal(t, seq+1, d.Metrics().LastSeqNum, "only the Set takes a sequence number")
	for _, k := range []string{"a", "b", "c"} {
		_, err := d.Get([]byte(k))
		require.NoError(t, err, k)
	}

	b.Reset()
	b.Set([]byte("d"), []byte("4"))
	b.DeleteRange([]byte("b"), []byte("a"))
	require.ErrorContains(t, b.Err(), `end "a" is before start "b"`)
	require.ErrorContains(t, d.Apply(&b, Sync), "invalid batch")
	_, err = d.Get([]byte("d"))
	require.ErrorIs(t, err, ErrNotFound)
	_, err = d.Get([]byte("a"))
	require.NoError(t, err)
}

// TestMaxOpenFiles bounds the open tables: reads reopen closed ones.
func TestMaxOpenFiles(t *testing.T) {
	o := smallOptions(NewMemFS())
	o.MaxOpenFiles = 16
	o.Level0FileNumCompactionTrigger = 100 // keep many tables
	o.Level0SlowdownWritesTrigger = 200
	o.Level0StopWritesTrigger = 300
	d, err := Open("db", o)
	require.NoError(t, err)
	defer d.Close()
	var b Batch
	for i := 0; i < 40; i++ {
		b.Reset()
		b.Set([]byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprintf("v%d", i)))
		require.NoError(t, d.Apply(&b, NoSync))
		require.NoError(t, d.Flush())
	}
	require.Equal(t, 40, d.Metrics().Levels[0].Tables)
	for round := 0; round < 3; round++ {
		for i := 0; i < 40; i++ {
			v, err := d.Get([]byte(fmt.Sprintf("k%03d", i)))
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("v%d", i), string(v))
			require.LessOrEqual(t, d.tableCache.openTables(), 16)
		}
	}
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	require.NoError(t, it.Close())
	require.Equal(t, 40, n)
	require.LessOrEqual(t, d.tableCache.openTables(), 16)
	require.NoError(t, d.Check())
}

package sstable

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// TestIncompressibleBlocksSkipCompression: after a run of data blocks that
// LZ4 cannot shrink, the writer stores most blocks raw without trying, and
// probes every probeInterval-th block; once a probe shrinks, every block is
// compressed again. Whatever it chooses, every entry reads back.
func TestIncompressibleBlocksSkipCompression(t *testing.T) {
	fs, dir := tempFS(t)
	rng := rand.New(rand.NewSource(1))
	// 1 KiB blocks: about 30 of random values, then values that compress.
	var kvs []kv
	for i := 0; i < 10000; i++ {
		k := make([]byte, 8)
		binary.BigEndian.PutUint64(k, uint64(i))
		v := bytes.Repeat([]byte{'a'}, 32)
		v[0] = byte(i) // no prefix shared with the previous value
		if i < 700 {
			rng.Read(v)
		}
		kvs = append(kvs, kv{key: base.MakeInternalKey(k, base.SeqNum(i+1), base.KindSet), value: v})
	}
	path := filepath.Join(dir, "t")
	props := writeTable(t, fs, path, WriterOptions{BlockSize: 1024, Compression: CompressionLZ4}, kvs, nil)
	require.Greater(t, props.DataBlocks, uint64(100))

	// Every entry reads back.
	r := openTable(t, fs, path, nil)
	defer r.Close()
	it := r.NewIter(IterOptions{})
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		require.True(t, bytes.Equal(kvs[i].key.UserKey, it.UserKey()) && bytes.Equal(kvs[i].value, it.Value()), "entry %d", i)
		i++
	}
	require.NoError(t, it.Close())
	require.Equal(t, len(kvs), i)
	// The later blocks compress: the table is far below its raw size,
	// so compression resumed after the random run (at most probeInterval
	// blocks late).
	require.Less(t, props.DataStoredBytes, props.DataBytes/2, "compression resumes after a probe shrinks")
}

// TestDataCompressionChoice checks the schedule itself.
func TestDataCompressionChoice(t *testing.T) {
	w := &Writer{opts: WriterOptions{Compression: CompressionLZ4}}
	var tried []int
	for n := 0; n < 40; n++ {
		w.incompressible = n
		if w.dataCompression() == CompressionLZ4 {
			tried = append(tried, n)
		}
	}
	require.Equal(t, []int{0, 1, 2, 3, 16, 32}, tried)
	w.opts.Compression = CompressionNone
	w.incompressible = 0
	require.Equal(t, CompressionNone, w.dataCompression())
}

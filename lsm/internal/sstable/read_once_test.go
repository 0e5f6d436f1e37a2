package sstable

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/stretchr/testify/require"
)

// TestGetReadsUnadmittedBlocksIntoRecycledBuffers: in a full cache that
// admits (almost) no more data blocks, point lookups still return the right
// values, insert nothing, and, for uncompressed blocks, allocate nothing:
// the blocks they read go to recycled buffers.
func TestGetReadsUnadmittedBlocksIntoRecycledBuffers(t *testing.T) {
	const ledgers, entries = 20, 5000
	kvs := entryLocationKVs(ledgers, entries)
	for _, comp := range []Compression{CompressionNone, CompressionLZ4} {
		t.Run(comp.String(), func(t *testing.T) {
			fs, dir := tempFS(t)
			path := filepath.Join(dir, "t.sst")
			writeTable(t, fs, path, WriterOptions{BlockSize: 4096, Compression: comp}, kvs, nil)
			c, err := cache.New(cache.Options{Capacity: 64 << 10, NumShardBits: cache.OneShard, FullAdmitOneIn: 1 << 30})
			require.NoError(t, err)
			r := openTable(t, fs, path, c)
			defer r.Close()
			rng := rand.New(rand.NewSource(9))
			dst := make([]byte, 0, 8)
			var stats Stats
			var wrong []string // no require inside: it would allocate
			get := func() {
				e := kvs[rng.Intn(len(kvs))]
				l := MakeLookup(e.key.UserKey, base.SeqNumMax)
				v, _, found, err := r.Get(dst[:0], &l, &stats)
				if err != nil || !found || string(v) != string(e.value) {
					wrong = append(wrong, fmt.Sprintf("key %x: found %v, value %x, err %v; want %x", e.key.UserKey, found, v, err, e.value))
				}
			}
			for range 2000 {
				get() // fills the cache
			}
			inserts := c.Metrics().Kinds[cache.KindData].Inserts
			reads := stats.DataReads
			allocs := testing.AllocsPerRun(2000, get)
			require.Empty(t, wrong)
			require.Greater(t, stats.DataReads-reads, int64(1000), "most lookups miss the small cache")
			require.Equal(t, inserts, c.Metrics().Kinds[cache.KindData].Inserts, "a full cache admits no more")
			if comp == CompressionNone && !raceEnabled {
				require.Zero(t, allocs, "uncompressed blocks are read into recycled buffers")
			}
		})
	}
}

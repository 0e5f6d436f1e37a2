package sstable

import (
	"bytes"
	"math/rand"
	"sort"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/stretchr/testify/require"
)

// TestTopSearchMatchesModel: seeks in a decoded top-level block return the
// ordinal of the first separator >= the target, as a sorted slice says,
// for keys with and without a common prefix, short and long suffixes.
func TestTopSearchMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 200; iter++ {
		kvs := randomKVs(rng, rng.Intn(300))
		if iter%2 == 1 {
			kvs = entryLocationKVs(1+rng.Intn(20), 1+rng.Intn(50))
		}
		// The entries split over one to three blocks, as index partitions.
		var blocks [][]byte
		b := block.NewBuilder(1, rng.Intn(2) == 0)
		for i, e := range kvs {
			b.Add(e.key.UserKey, e.key.Trailer, BlockHandle{Offset: uint64(i), Length: 7}.AppendTo(nil))
			if rng.Intn(100) == 0 {
				blocks = append(blocks, append([]byte(nil), b.Finish()...))
				b.Reset()
			}
		}
		blocks = append(blocks, append([]byte(nil), b.Finish()...))
		ts, err := newTopSearch(blocks...)
		require.NoError(t, err)
		require.Len(t, ts.keys, len(kvs))
		for i, h := range ts.handles {
			require.Equal(t, BlockHandle{Offset: uint64(i), Length: 7}, h)
		}
		for n := 0; n < 300; n++ {
			var k []byte
			switch {
			case len(kvs) > 0 && rng.Intn(3) > 0:
				k = append([]byte(nil), kvs[rng.Intn(len(kvs))].key.UserKey...)
				switch rng.Intn(4) {
				case 0:
					k = k[:rng.Intn(len(k)+1)]
				case 1:
					k = append(k, byte(rng.Intn(256)))
				case 2:
					if len(k) > 0 {
						k[rng.Intn(len(k))] = byte(rng.Intn(256))
					}
				}
			default:
				k = make([]byte, rng.Intn(20))
				rng.Read(k)
			}
			tr := base.MakeTrailer(base.SeqNum(rng.Intn(12)), base.KindSet)
			want := sort.Search(len(kvs), func(i int) bool {
				return base.CompareInternal(kvs[i].key.UserKey, kvs[i].key.Trailer, k, tr) >= 0
			})
			require.Equal(t, want, ts.seek(k, tr), "iter %d key %x", iter, k)
		}
	}
}

func TestPrefixValueOrdersLikeBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for n := 0; n < 100000; n++ {
		a, b := make([]byte, rng.Intn(12)), make([]byte, rng.Intn(12))
		for i := range a {
			a[i] = byte(rng.Intn(3))
		}
		for i := range b {
			b[i] = byte(rng.Intn(3))
		}
		if prefixValue(a) < prefixValue(b) {
			require.Negative(t, bytes.Compare(a, b), "%x %x", a, b)
		}
	}
}

// BenchmarkTopSearch: a 64 MiB table's top-level filter index (~3,800
// partitions of 1,000 ledgers' entries), random lookups of existing keys.
func BenchmarkTopSearch(b *testing.B) {
	bld := block.NewBuilder(1, true)
	const ledgers, perLedger = 250, 15
	for l := uint64(0); l < ledgers; l++ {
		for p := uint64(1); p <= perLedger; p++ {
			bld.Add(entryKey(l, p*3276), 0, BlockHandle{Offset: l*perLedger + p, Length: 4096}.AppendTo(nil))
		}
	}
	ts, err := newTopSearch(bld.Finish())
	require.NoError(b, err)
	rng := rand.New(rand.NewSource(1))
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = entryKey(uint64(rng.Intn(ledgers)), uint64(rng.Intn(perLedger*3276)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ts.seek(keys[i%len(keys)], base.SeekTrailer(base.SeqNumMax)) >= len(ts.keys) {
			b.Fatal("past the end")
		}
	}
}

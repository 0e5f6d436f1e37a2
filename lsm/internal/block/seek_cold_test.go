package block

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// coldBlocks builds numBlocks 64 KiB blocks of consecutive entry-location
// keys, entriesPerLedger to a ledger (0: one endless ledger), and picks
// targets in each: gets (existing keys spread over the block) and floors
// (the bound GetLastEntryInLedger seeks below).
func coldBlocks(numBlocks int, entriesPerLedger uint64) (blocks [][]byte, gets, floors [][][]byte) {
	blocks = make([][]byte, numBlocks)
	gets = make([][][]byte, numBlocks)
	floors = make([][][]byte, numBlocks)
	e := uint64(0)
	for bi := range blocks {
		bld := NewBuilder(24, true)
		bld.ShareValuePrefixes = true
		bld.CompactEntries = true
		for ; bld.EstimatedSize() < 64<<10; e++ {
			k := entryLocationKey(123, 1_000_000+e)
			if entriesPerLedger > 0 {
				k = entryLocationKey(123+e/entriesPerLedger, e%entriesPerLedger)
			}
			if e%97 == 0 {
				gets[bi] = append(gets[bi], k)
			}
			bld.Add(k, base.MakeTrailer(0, base.KindSet), binary.BigEndian.AppendUint64(nil, 1<<32|(1028*e+4)))
		}
		if entriesPerLedger > 0 {
			// GetLastEntryInLedger's bound, (L, 2^63), of each ledger
			// that ends in the block (the index sends its floor here).
			first, last := 123+(e-uint64(bld.entries))/entriesPerLedger, 123+(e-1)/entriesPerLedger
			for l := first; l < max(last, first+1); l++ {
				floors[bi] = append(floors[bi], entryLocationKey(l, 1<<63))
			}
		}
		blocks[bi] = append([]byte(nil), bld.Finish()...)
	}
	return blocks, gets, floors
}

// BenchmarkSeekGECold seeks random keys in random blocks of a set far
// larger than the CPU caches (1,000 blocks of 64 KiB), so that each restart
// probe is a likely cache miss, as in a get from a large block cache; with
// and without the restart stride hint (SetRestartStride).
func BenchmarkSeekGECold(b *testing.B) { benchmarkColdSeeks(b, []uint64{0, 5000, 1000, 100}, false) }

// BenchmarkSeekLTFloorCold is BenchmarkSeekGECold's floor: SeekLT to
// (L, 2^63), the bound of GetLastEntryInLedger(L).
func BenchmarkSeekLTFloorCold(b *testing.B) { benchmarkColdSeeks(b, []uint64{5000, 1000, 100}, true) }

func benchmarkColdSeeks(b *testing.B, entriesPerLedger []uint64, lt bool) {
	for _, n := range entriesPerLedger {
		blocks, gets, floors := coldBlocks(1000, n)
		targets := gets
		if lt {
			targets = floors
		}
		for _, stride := range []int{0, 24} {
			b.Run(fmt.Sprintf("entries-per-ledger=%d/stride=%d", n, stride), func(b *testing.B) {
				var it Iter
				probes := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					bi := (i * 7919) % len(blocks)
					ks := targets[bi]
					if err := it.Init(blocks[bi]); err != nil {
						b.Fatal(err)
					}
					it.SetRestartStride(stride)
					it.probes = 0
					k := ks[(i*31)%len(ks)]
					if lt && !it.SeekLT(k, base.SeekTrailer(base.SeqNumMax)) || !lt && !it.SeekGE(k, base.SeekTrailer(base.SeqNumMax)) {
						b.Fatal("not found")
					}
					probes += it.probes
				}
				b.ReportMetric(float64(probes)/float64(b.N), "probes/op")
			})
		}
	}
}

// TestRestartStrideJumpsInDenseRuns checks what the stride hint is for: in
// blocks of two or three 5,000-entry ledgers, where interpolating on the
// first key bytes misses at ledger boundaries, a seek reads few restart
// keys, for gets and for floor bounds ((L, 2^63), past the ledger's end).
func TestRestartStrideJumpsInDenseRuns(t *testing.T) {
	blocks, gets, floors := coldBlocks(20, 5000)
	probesPerSeek := func(stride int, lt bool) float64 {
		var it Iter
		n, probes := 0, 0
		for bi, data := range blocks {
			targets := gets[bi]
			if lt {
				targets = floors[bi]
			}
			for _, k := range targets {
				require.NoError(t, it.Init(data))
				it.SetRestartStride(stride)
				it.probes = 0
				if lt {
					require.True(t, it.SeekLT(k, base.SeekTrailer(base.SeqNumMax)))
					require.Equal(t, -1, bytes.Compare(it.UserKey(), k))
				} else {
					require.True(t, it.SeekGE(k, base.SeekTrailer(base.SeqNumMax)))
					require.Equal(t, k, it.UserKey())
				}
				n++
				probes += it.probes
			}
		}
		return float64(probes) / float64(n)
	}
	for _, lt := range []bool{false, true} {
		with, without := probesPerSeek(24, lt), probesPerSeek(0, lt)
		t.Logf("SeekLT=%v: %.2f probes per seek with the stride, %.2f without", lt, with, without)
		require.Less(t, with, 7.0)
		require.Less(t, with, 0.7*without)
	}
}

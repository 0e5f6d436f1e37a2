package block

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// BenchmarkSeekGECold seeks random keys in random blocks of a set far
// larger than the CPU caches (1,000 blocks of 64 KiB), so that each restart
// probe is a likely cache miss, as in a get from a large block cache.
func BenchmarkSeekGECold(b *testing.B) {
	for _, n := range []uint64{0, 5000, 1000, 100} {
		b.Run(fmt.Sprintf("entries-per-ledger=%d", n), func(b *testing.B) {
			const numBlocks = 1000
			blocks := make([][]byte, numBlocks)
			keys := make([][][]byte, numBlocks)
			e := uint64(0)
			for bi := range blocks {
				bld := NewBuilder(24, true)
				bld.ShareValuePrefixes = true
				bld.CompactEntries = true
				for ; bld.EstimatedSize() < 64<<10; e++ {
					k := entryLocationKey(123, 1_000_000+e)
					if n > 0 {
						k = entryLocationKey(123+e/n, e%n)
					}
					if len(keys[bi]) < 64 || e%97 == 0 {
						keys[bi] = append(keys[bi], k)
					}
					bld.Add(k, base.MakeTrailer(0, base.KindSet), binary.BigEndian.AppendUint64(nil, 1<<32|(1028*e+4)))
				}
				blocks[bi] = append([]byte(nil), bld.Finish()...)
			}
			var it Iter
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bi := (i * 7919) % numBlocks
				ks := keys[bi]
				if err := it.Init(blocks[bi]); err != nil {
					b.Fatal(err)
				}
				if !it.SeekGE(ks[(i*31)%len(ks)], base.SeekTrailer(base.SeqNumMax)) {
					b.Fatal("not found")
				}
			}
		})
	}
}

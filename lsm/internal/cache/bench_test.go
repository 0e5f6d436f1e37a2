package cache

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkLookupHitParallel measures Lookup hits + Release from all
// GOMAXPROCS goroutines on a 64-shard cache, with a working set that fits in
// the CPU caches (1Ki blocks) and one that does not (64Ki blocks: about
// 10 MiB of entries and map slots, so a hit costs a few cache misses for
// the map probe and the LRU list neighbours).
func BenchmarkLookupHitParallel(b *testing.B) {
	for _, blocks := range []uint64{1 << 10, 1 << 16} {
		b.Run(fmt.Sprintf("blocks=%d", blocks), func(b *testing.B) {
			benchmarkLookupHitParallel(b, blocks)
		})
	}
}

func benchmarkLookupHitParallel(b *testing.B, blocks uint64) {
	c, err := New(Options{Capacity: 512 << 20})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 4096)
	for off := uint64(0); off < blocks; off++ {
		h, err := c.insertBytes(1, off*4096, KindData, PriorityLow, value)
		if err != nil {
			b.Fatal(err)
		}
		h.Release()
	}
	var seeds atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		x := seeds.Add(1) * 0x9e3779b97f4a7c15
		for pb.Next() {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			h, ok := c.Lookup(1, (x%blocks)*4096, KindData)
			if !ok {
				b.Fatal("miss")
			}
			h.Release()
		}
	})
}

// BenchmarkInsertEvict measures inserting distinct 4 KiB blocks into a full
// cache, so that every insert evicts one entry.
func BenchmarkInsertEvict(b *testing.B) {
	c, err := New(Options{Capacity: 32 << 20})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, err := c.insertBytes(1, uint64(i)*4096, KindData, PriorityLow, value)
		if err != nil {
			b.Fatal(err)
		}
		h.Release()
	}
	b.StopTimer()
	if b.N > 2*(32<<20)/4096 && c.Metrics().Kinds[KindData].Evictions == 0 {
		b.Fatal("no evictions")
	}
}

// BenchmarkGetOrLoadMiss measures the miss path of GetOrLoad with a load
// that returns at once: flight bookkeeping plus an insert that evicts.
func BenchmarkGetOrLoadMiss(b *testing.B) {
	c, err := New(Options{Capacity: 32 << 20})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 4096)
	load := func() ([]byte, error) { return value, nil }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, _, err := c.getOrLoadBytes(1, uint64(i)*4096, KindData, PriorityLow, load)
		if err != nil {
			b.Fatal(err)
		}
		h.Release()
	}
}

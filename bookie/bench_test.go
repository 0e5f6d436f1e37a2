package bookie

import (
	"math/rand"
	"testing"
)

// benchEntrySize is the payload of the benchmarks' entries.
const benchEntrySize = 1 << 10

// BenchmarkAddEntry adds 1 KiB entries round-robin over 100 ledgers, on
// the real file system, with a 64 MiB write cache and the periodic
// checkpoint off: a full cache triggers a checkpoint, and adds wait for
// room when the checkpoint falls behind. The timer covers the final
// checkpoint, so the rate is that of durable, indexed entries.
//
//	go test -run '^$' -bench AddEntry -benchtime 1s ./bookie/
func BenchmarkAddEntry(b *testing.B) {
	o := osOptions(b.TempDir(), 1)
	o.WriteCacheSize = 64 << 20
	o.LogSizeLimit = 0
	o.Index.Engine.WriteBufferSize = 16 << 20
	o.Index.Engine.TargetFileSizeBase = 16 << 20
	o.Index.Engine.BlockSize = 0
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	p := make([]byte, benchEntrySize)
	rand.New(rand.NewSource(1)).Read(p)
	const ledgers = 100
	b.SetBytes(benchEntrySize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.AddEntry(int64(i%ledgers), int64(i/ledgers), p); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Checkpoint(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	m := s.Metrics()[0]
	b.ReportMetric(float64(m.Flush.SuccessCount), "checkpoints")
	b.ReportMetric(float64(m.ThrottledWrite.SuccessCount)/float64(b.N), "throttled/op")
}

// BenchmarkReadEntry reads 1 KiB entries from a reopened storage: each
// read misses the caches and goes to the index and the entry log (the
// operating system's page cache is warm; the bookie's read cache is cold).
// "random" reads random entries with the read cache off; "sequential"
// reads ledgers in order, so read-ahead serves most reads.
//
//	go test -run '^$' -bench ReadEntry -benchtime 1s ./bookie/
func BenchmarkReadEntry(b *testing.B) {
	root := b.TempDir()
	const ledgers, entries = 20, 1000
	p := make([]byte, benchEntrySize)
	rand.New(rand.NewSource(1)).Read(p)
	options := func(readCache int64) *Options {
		o := osOptions(root, 1)
		o.WriteCacheSize = 64 << 20
		o.ReadCacheSize = readCache
		o.LogSizeLimit = 0
		o.Index.Engine.BlockSize = 0
		return o
	}
	s, err := Open(options(-1))
	if err != nil {
		b.Fatal(err)
	}
	for e := range int64(entries) {
		for l := range int64(ledgers) {
			if err := s.AddEntry(l, e, p); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("random", func(b *testing.B) {
		s, err := Open(options(-1))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		rng := rand.New(rand.NewSource(2))
		b.SetBytes(benchEntrySize)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := s.GetEntry(rng.Int63n(ledgers), rng.Int63n(entries)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sequential", func(b *testing.B) {
		s, err := Open(options(64 << 20))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		b.SetBytes(benchEntrySize)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			l, e := int64(i/entries)%ledgers, int64(i%entries)
			if _, err := s.GetEntry(l, e); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		m := s.Metrics()[0]
		b.ReportMetric(float64(m.ReadCacheHits)/float64(b.N), "cache-hits/op")
	})
}

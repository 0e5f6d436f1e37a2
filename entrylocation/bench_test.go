package entrylocation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	benchLedgers = 100
	benchEntries = 1000
)

// openBenchIndex opens a default index in a temporary directory, fills it
// with benchLedgers × benchEntries locations, compacts it into tables and
// reads every key once so that the blocks are cached.
func openBenchIndex(b *testing.B, stats bool) *Index {
	b.Helper()
	opts := DefaultOptions()
	opts.EnableStatistics = stats
	ix, err := Open(b.TempDir(), opts)
	require.NoError(b, err)
	b.Cleanup(func() { _ = ix.Close() })
	batch := ix.NewBatch()
	for l := int64(0); l < benchLedgers; l++ {
		for e := int64(0); e < benchEntries; e++ {
			require.NoError(b, batch.AddLocation(l, e, l<<32|e*100+1024))
		}
	}
	require.NoError(b, batch.Flush())
	require.NoError(b, ix.Compact(context.Background()))
	for l := int64(0); l < benchLedgers; l++ {
		for e := int64(0); e < benchEntries; e++ {
			_, err := ix.GetLocation(l, e)
			require.NoError(b, err)
		}
	}
	return ix
}

// benchKey spreads the i-th lookup over the index.
func benchKey(i int) (ledgerID, entryID int64) {
	h := uint64(i) * 0x9e3779b97f4a7c15
	return int64(h>>32) % benchLedgers, int64(h&0xffffffff) % benchEntries
}

func BenchmarkGetLocation(b *testing.B) {
	for _, stats := range []bool{false, true} {
		name := "stats=off"
		if stats {
			name = "stats=on"
		}
		b.Run(name, func(b *testing.B) {
			ix := openBenchIndex(b, stats)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, e := benchKey(i)
				if loc, err := ix.GetLocation(l, e); err != nil || loc == 0 {
					b.Fatal(loc, err)
				}
			}
		})
	}
}

func BenchmarkGetLocationParallel(b *testing.B) {
	ix := openBenchIndex(b, false)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l, e := benchKey(i)
			i++
			if loc, err := ix.GetLocation(l, e); err != nil || loc == 0 {
				b.Error(loc, err)
				return
			}
		}
	})
}

func BenchmarkGetLastEntryInLedger(b *testing.B) {
	ix := openBenchIndex(b, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if last, err := ix.GetLastEntryInLedger(int64(i % benchLedgers)); err != nil || last != benchEntries-1 {
			b.Fatal(last, err)
		}
	}
}

// BenchmarkBatchAddFlush measures a checkpoint's index write: batches of
// 10,000 sorted locations, each committed with one synced Flush, on the
// operating system's file system.
func BenchmarkBatchAddFlush(b *testing.B) {
	const perBatch = 10_000
	ix, err := Open(b.TempDir(), nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = ix.Close() })
	batch := ix.NewBatch()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for e := int64(0); e < perBatch; e++ {
			if err := batch.AddLocation(int64(i), e, e+1); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "locations/s")
}

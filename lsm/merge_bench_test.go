package lsm

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
)

// benchMax is a max operator over 8-byte big-endian values.
type benchMax struct{}

func (benchMax) Name() string { return "bench.max" }

func (benchMax) FullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	v := existing
	for _, o := range operands {
		if v == nil || binary.BigEndian.Uint64(o) > binary.BigEndian.Uint64(v) {
			v = o
		}
	}
	return v, nil
}

func (benchMax) PartialMerge(key, older, newer []byte) ([]byte, bool) {
	if binary.BigEndian.Uint64(newer) > binary.BigEndian.Uint64(older) {
		return newer, true
	}
	return older, true
}

// BenchmarkMergeReadSeq reproduces the seed's readseq over 100K keys with
// one merge operand each (in an L0 table, so that every read full-merges),
// with statistics off and on; ns/op is per key read.
//
//	go test -run '^$' -bench BenchmarkMerge -benchtime 2000000x ./lsm/
func BenchmarkMergeReadSeq(b *testing.B) {
	const keys = 100_000
	for _, stats := range []bool{false, true} {
		name := "statistics=off"
		if stats {
			name = "statistics=on"
		}
		b.Run(name, func(b *testing.B) {
			d, err := Open(b.TempDir(), &Options{MergeOperator: benchMax{}, EnableStatistics: stats, BlockCacheSize: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			var batch Batch
			var k, v [8]byte
			for i := uint64(0); i < keys; i++ {
				binary.BigEndian.PutUint64(k[:], i)
				binary.BigEndian.PutUint64(v[:], i*7)
				batch.Merge(k[:], v[:])
			}
			if err := d.Apply(&batch, Sync); err != nil {
				b.Fatal(err)
			}
			if err := d.Flush(); err != nil {
				b.Fatal(err)
			}
			it, err := d.NewIter(nil)
			if err != nil {
				b.Fatal(err)
			}
			defer it.Close()
			for ok := it.First(); ok; ok = it.Next() { // warm the cache
			}
			b.ReportAllocs()
			b.ResetTimer()
			it.First()
			for i := 0; i < b.N; i++ {
				if !it.Valid() {
					it.First()
				}
				if len(it.Value()) != 8 {
					b.Fatal("not merged")
				}
				it.Next()
			}
			b.StopTimer()
			if err := it.Error(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(d.Metrics().MergeTimeNanos)/float64(b.N), "merge-ns/op")
		})
	}
}

// BenchmarkMergeTimerCheck is the cost of the statistics check itself: one
// FullMerge called directly, through the untimed merger (the branch) and
// through the timed one (two clock reads).
//
//	go test -run '^$' -bench BenchmarkMerge -benchtime 2000000x ./lsm/
func BenchmarkMergeTimerCheck(b *testing.B) {
	var nanos atomic.Int64
	key := []byte("k")
	ops := [][]byte{{0, 0, 0, 0, 0, 0, 0, 1}}
	existing := []byte{0, 0, 0, 0, 0, 0, 0, 2}
	b.Run("direct", func(b *testing.B) {
		var op MergeOperator = benchMax{}
		for i := 0; i < b.N; i++ {
			_, _ = op.FullMerge(key, existing, ops)
		}
	})
	for _, timed := range []bool{false, true} {
		name := "untimed"
		if timed {
			name = "timed"
		}
		b.Run(name, func(b *testing.B) {
			m := merger{op: benchMax{}, timed: timed, nanos: &nanos}
			for i := 0; i < b.N; i++ {
				_, _ = m.fullMerge(key, existing, ops)
			}
		})
	}
}

package lsm

import (
	"context"
	"math/rand"
	"testing"
)

// benchDB loads ledgers × entries entry-location keys in checkpoint-like
// batches and compacts them.
func benchDB(b *testing.B, ledgers, entries uint64) *DB {
	d, err := Open(b.TempDir(), &Options{WriteBufferSize: 4 << 20, TargetFileSizeBase: 4 << 20})
	if err != nil {
		b.Fatal(err)
	}
	var batch Batch
	for e0 := uint64(0); e0 < entries; e0 += 1000 {
		batch.Reset()
		for l := uint64(0); l < ledgers; l++ {
			for e := e0; e < e0+1000 && e < entries; e++ {
				batch.Set(entryKey(l, e), entryKey(l, e)[4:12])
			}
		}
		if err := d.Apply(&batch, Sync); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(context.Background(), nil, nil); err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkGet(b *testing.B) {
	const ledgers, entries = 100, 10000
	d := benchDB(b, ledgers, entries)
	defer d.Close()
	rng := rand.New(rand.NewSource(1))
	dst := make([]byte, 0, 8)
	var err error
	for i := 0; i < 100000; i++ { // warm the cache
		if dst, err = d.GetAppend(dst[:0], entryKey(uint64(rng.Intn(ledgers)), uint64(rng.Intn(entries))), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst, err = d.GetAppend(dst[:0], entryKey(uint64(rng.Intn(ledgers)), uint64(rng.Intn(entries))), nil)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloor(b *testing.B) {
	const ledgers, entries = 100, 10000
	d := benchDB(b, ledgers, entries)
	defer d.Close()
	rng := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l := uint64(rng.Intn(ledgers))
		it, err := d.NewIter(&IterOptions{LowerBound: entryKey(l, 0), UpperBound: entryKey(l, 1<<63-1)})
		if err != nil {
			b.Fatal(err)
		}
		if !it.Last() {
			b.Fatal("no entry")
		}
		_ = it.Close()
	}
}

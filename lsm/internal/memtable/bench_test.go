package memtable

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// benchListEntries is how many entries each benchmark list receives before
// the insert benchmarks start over with a fresh list: about 7 MiB of arena
// for 16-byte keys and 8-byte values, the scale of a small memtable.
const benchListEntries = 1 << 17

// ledgerKey returns BE64(ledger) || BE64(entry), the entry-location key.
func ledgerKey(ledger, entry uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), ledger), entry)
}

// checkpointKeys returns n keys in the order a bookie writes them: each
// checkpoint adds the next perCheckpoint entries of each of `ledgers` ledgers,
// ledger by ledger, so keys ascend within a ledger's run and every run after
// the first checkpoint lands between existing keys.
func checkpointKeys(n, ledgers, perCheckpoint int) [][]byte {
	keys := make([][]byte, 0, n)
	for checkpoint := 0; len(keys) < n; checkpoint++ {
		for ledger := 0; ledger < ledgers && len(keys) < n; ledger++ {
			for e := 0; e < perCheckpoint && len(keys) < n; e++ {
				keys = append(keys, ledgerKey(uint64(ledger), uint64(checkpoint*perCheckpoint+e)))
			}
		}
	}
	return keys
}

func benchArenaSize(entries int) int { return entries*64 + 1<<20 }

func benchmarkAdd(b *testing.B, keys [][]byte, spliceReuse bool) {
	value := make([]byte, 8)
	var s *Skiplist
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(keys)
		if j == 0 {
			b.StopTimer()
			s = NewSkiplist(benchArenaSize(len(keys)))
			s.disableSpliceReuse = !spliceReuse
			b.StartTimer()
		}
		if err := s.Add(keys[j], base.MakeTrailer(base.SeqNum(i+1), base.KindSet), value); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdd inserts 16-byte entry-location keys in three orders, with and
// without reusing the previous insert's splice:
//   - ascending: one ledger after another, every key after the last one;
//   - checkpoints: 100 ledgers, 64 entries of each per checkpoint (runs of
//     64 ascending keys, each run landing inside the existing list);
//   - random: the same keys shuffled.
func BenchmarkAdd(b *testing.B) {
	ascending := checkpointKeys(benchListEntries, 1, benchListEntries)
	checkpoints := checkpointKeys(benchListEntries, 100, 64)
	random := append([][]byte(nil), checkpoints...)
	rand.New(rand.NewSource(1)).Shuffle(len(random), func(i, j int) { random[i], random[j] = random[j], random[i] })
	for _, order := range []struct {
		name string
		keys [][]byte
	}{{"ascending", ascending}, {"checkpoints", checkpoints}, {"random", random}} {
		for _, reuse := range []bool{true, false} {
			b.Run(fmt.Sprintf("order=%s/spliceReuse=%t", order.name, reuse), func(b *testing.B) {
				benchmarkAdd(b, order.keys, reuse)
			})
		}
	}
}

// benchMemtable returns a memtable filled with n checkpoint-ordered keys,
// and the keys in a random order for lookups.
func benchMemtable(b *testing.B, n int) (*Memtable, [][]byte) {
	keys := checkpointKeys(n, 100, 64)
	m := New(benchArenaSize(len(keys)))
	for i, k := range keys {
		if err := m.Add(base.SeqNum(i+1), base.KindSet, k, k[8:]); err != nil {
			b.Fatal(err)
		}
	}
	lookups := append([][]byte(nil), keys...)
	rand.New(rand.NewSource(2)).Shuffle(len(lookups), func(i, j int) { lookups[i], lookups[j] = lookups[j], lookups[i] })
	return m, lookups
}

// benchSizes are the list sizes of the read benchmarks: one whose arena
// (about 200 KiB) stays in cache and one (about 7 MiB) that does not.
var benchSizes = []int{1 << 12, benchListEntries}

// BenchmarkSeekGE seeks to existing keys in random order.
func BenchmarkSeekGE(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			m, lookups := benchMemtable(b, n)
			var it Iterator
			m.InitPointIter(&it)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !it.SeekGE(lookups[i%len(lookups)], base.SeekTrailer(base.SeqNumMax)) {
					b.Fatal("miss")
				}
			}
		})
	}
}

// BenchmarkGet runs Memtable.Get on existing keys in random order.
func BenchmarkGet(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			m, lookups := benchMemtable(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, found := m.Get(lookups[i%len(lookups)], base.SeqNumMax); !found {
					b.Fatal("miss")
				}
			}
		})
	}
}

// BenchmarkNext scans forward, wrapping around at the end.
func BenchmarkNext(b *testing.B) {
	m, _ := benchMemtable(b, benchListEntries)
	var it Iterator
	m.InitPointIter(&it)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !it.Next() {
			it.First()
		}
	}
}

// BenchmarkPrev steps backwards, which searches from the head each time.
func BenchmarkPrev(b *testing.B) {
	m, _ := benchMemtable(b, benchListEntries)
	var it Iterator
	m.InitPointIter(&it)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !it.Prev() {
			it.Last()
		}
	}
}

// BenchmarkParallelGet runs Memtable.Get from GOMAXPROCS goroutines at once;
// with -cpu 1,2 it shows how lookups scale without locks.
func BenchmarkParallelGet(b *testing.B) {
	m, lookups := benchMemtable(b, benchListEntries)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.Intn(len(lookups))
		for pb.Next() {
			if _, _, found := m.Get(lookups[i%len(lookups)], base.SeqNumMax); !found {
				panic("miss")
			}
			i++
		}
	})
}

// processCPU is the process's user and system CPU time in nanoseconds: on
// a shared machine, CPU per op varies less than wall time per op.
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkAddFresh fills memtables of 80 MiB (a 64 MiB write buffer's)
// with 2^20 ascending entry-location keys each, in a new arena every time
// or in the previous memtable's (Recycle); ns/op is per key, and cpu-ns/op
// the process's CPU per key.
func BenchmarkAddFresh(b *testing.B) {
	const perMemtable = 1 << 20
	keys := checkpointKeys(perMemtable, 1, perMemtable)
	for _, recycle := range []bool{false, true} {
		b.Run(fmt.Sprintf("recycle=%t", recycle), func(b *testing.B) {
			var m *Memtable
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				j := i % perMemtable
				if j == 0 {
					if recycle {
						m = Recycle(m, 80<<20)
					} else {
						m = New(80 << 20)
					}
				}
				if err := m.Add(base.SeqNum(j+1), base.KindSet, keys[j], keys[j][8:]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkAddBatch fills recycled memtables of 80 MiB with 2^20 sorted
// entry-location keys each, committed as batches of 100,000 (entrylocation
// commits a checkpoint so), one key at a time (Add) or one batch at a time
// (AddSorted); ns/op is per key.
func BenchmarkAddBatch(b *testing.B) {
	const perMemtable, perBatch = 1 << 20, 100_000
	keys := checkpointKeys(perMemtable, 1, perMemtable)
	ops := make([]op, len(keys))
	for i, k := range keys {
		ops[i] = op{base.KindSet, k, k[8:]}
	}
	for _, sorted := range []bool{false, true} {
		b.Run(fmt.Sprintf("sorted=%t", sorted), func(b *testing.B) {
			var m *Memtable
			cpu0 := processCPU()
			for i := 0; i < b.N; {
				j := i % perMemtable
				if j == 0 {
					m = Recycle(m, 80<<20)
				}
				n := min(perBatch, b.N-i, perMemtable-j)
				if sorted {
					if added, err := m.AddSorted(base.SeqNum(j+1), &opList{ops: ops[j : j+n]}); err != nil || !added {
						b.Fatal(added, err)
					}
				} else {
					for k := j; k < j+n; k++ {
						if err := m.Add(base.SeqNum(k+1), base.KindSet, keys[k], keys[k][8:]); err != nil {
							b.Fatal(err)
						}
					}
				}
				i += n
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

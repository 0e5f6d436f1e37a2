package rangedel

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// entryKey is an entry-location key: BE64(ledger) ‖ BE64(entry).
func entryKey(ledger, entry uint64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), ledger)
	return binary.BigEndian.AppendUint64(k, entry)
}

// ledgerTombstones deletes every other ledger of 2*n, one tombstone
// [(L,0), (L,MaxInt64)) per ledger as the entry-location index writes them.
func ledgerTombstones(n int) []Tombstone {
	ts := make([]Tombstone, n)
	for i := range ts {
		ledger := uint64(2 * i)
		ts[i] = Tombstone{Start: entryKey(ledger, 0), End: entryKey(ledger, math.MaxInt64), Seq: base.SeqNum(i + 1)}
	}
	return ts
}

// BenchmarkCovers looks up random entry keys, half in deleted ledgers, in a
// set of 1,000 fragments.
func BenchmarkCovers(b *testing.B) {
	s := BuildSet(ledgerTombstones(1000))
	if s.Len() != 1000 {
		b.Fatalf("%d fragments, want 1000", s.Len())
	}
	rng := rand.New(rand.NewSource(1))
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = entryKey(uint64(rng.Intn(2000)), uint64(rng.Int63()))
	}
	covered := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Covers(keys[i%len(keys)], 0, base.SeqNumMax) {
			covered++
		}
	}
	if covered == 0 && b.N > len(keys) {
		b.Fatal("no key was covered")
	}
}

// BenchmarkFragmentTombstones fragments 1,000 per-ledger tombstones, as a
// flush of a memtable holding a batch of ledger deletions would.
func BenchmarkFragmentTombstones(b *testing.B) {
	ts := ledgerTombstones(1000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(FragmentTombstones(ts)) != 1000 {
			b.Fatal("wrong fragment count")
		}
	}
}

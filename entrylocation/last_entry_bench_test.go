package entrylocation

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// A measured alternative to GetLastEntryInLedger's floor lookup
// (docs/design.md, "Merge operator"): a per-ledger summary key
// holding the ledger's greatest entry id, kept by a max merge operator
// with one blind Merge per ledger per checkpoint batch (or per entry), and
// read with one Get. The product does not use it: these benchmarks are
// what decided that.
//
//	go test -run '^$' -bench 'BenchmarkLastEntry|BenchmarkCheckpointSummary' -benchmem -count 6 ./entrylocation/

// maxEntryOperator keeps the greatest 8-byte big-endian entry id.
type maxEntryOperator struct{}

func (maxEntryOperator) Name() string { return "bench.max-entry" }

func (maxEntryOperator) FullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	v := existing
	for _, o := range operands {
		if v == nil || binary.BigEndian.Uint64(o) > binary.BigEndian.Uint64(v) {
			v = o
		}
	}
	return v, nil
}

func (maxEntryOperator) PartialMerge(key, older, newer []byte) ([]byte, bool) {
	if binary.BigEndian.Uint64(newer) > binary.BigEndian.Uint64(older) {
		return newer, true
	}
	return older, true
}

// summaryKey is the summary's key: 0xff then the ledger id, after every
// location key (a location key starts with a non-negative ledger id).
func summaryKey(ledgerID int64) [9]byte {
	var k [9]byte
	k[0] = 0xff
	binary.BigEndian.PutUint64(k[1:], uint64(ledgerID))
	return k
}

// checkpointBatch is what one checkpoint writes for ledgers
// [0, ledgers), entries [from, from+perLedger) each: the locations, and
// with summary one max operand per ledger (perEntry: one per entry, as
// if addEntry wrote it).
func checkpointBatch(b *lsm.Batch, ledgers, from, perLedger int64, summary, perEntry bool) {
	for l := int64(0); l < ledgers; l++ {
		k := summaryKey(l)
		for e := from; e < from+perLedger; e++ {
			setLocation(b, l, e, l<<32|e*100+1024)
			if summary && perEntry {
				id := EncodeLocation(e)
				b.Merge(k[:], id[:])
			}
		}
		if summary && !perEntry {
			id := EncodeLocation(from + perLedger - 1)
			b.Merge(k[:], id[:])
		}
	}
}

// openSummaryIndex opens an index on an in-memory file system (the WAL
// sync costs nothing, so the CPU of each variant shows) with the max
// operator set.
func openSummaryIndex(b *testing.B) *Index {
	b.Helper()
	opts := DefaultOptions()
	opts.Engine.FS = lsm.NewMemFS()
	opts.Engine.MergeOperator = maxEntryOperator{}
	ix, err := Open("/bench", opts)
	require.NoError(b, err)
	b.Cleanup(func() { _ = ix.Close() })
	return ix
}

// BenchmarkCheckpointSummary is the write cost of keeping the summary: one
// checkpoint batch of 10 ledgers × 100 entries per op, without a summary,
// with one operand per ledger per batch, and with one per entry.
func BenchmarkCheckpointSummary(b *testing.B) {
	const ledgers, perLedger = 10, 100
	for _, v := range []struct {
		name              string
		summary, perEntry bool
	}{{"none", false, false}, {"per-batch", true, false}, {"per-entry", true, true}} {
		b.Run(v.name, func(b *testing.B) {
			ix := openSummaryIndex(b)
			var batch lsm.Batch
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				batch.Reset()
				checkpointBatch(&batch, ledgers, int64(i)*perLedger, perLedger, v.summary, v.perEntry)
				if err := ix.commit(&batch, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLastEntry reads a ledger's last entry with the floor lookup
// (GetLastEntryInLedger) and from the summary (one Get), over 100 ledgers
// × 1000 entries with every block cached: "compacted" has everything in
// tables (the summary full-merged into a Set by the compaction); "recent"
// adds one more checkpoint batch per ledger in the memtable, its summary
// as an operand over the table's value, which is the state of a ledger
// being written between compactions.
func BenchmarkLastEntry(b *testing.B) {
	const ledgers, perLedger = 100, 1000
	for _, state := range []string{"compacted", "recent"} {
		ix := openSummaryIndex(b)
		var batch lsm.Batch
		checkpointBatch(&batch, ledgers, 0, perLedger, true, false)
		require.NoError(b, ix.commit(&batch, "bench"))
		require.NoError(b, ix.Compact(context.Background()))
		last := int64(perLedger - 1)
		if state == "recent" {
			batch.Reset()
			checkpointBatch(&batch, ledgers, perLedger, 10, true, false)
			require.NoError(b, ix.commit(&batch, "bench"))
			last = perLedger + 9
		}
		b.Run("floor/"+state, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if e, err := ix.GetLastEntryInLedger(int64(i % ledgers)); err != nil || e != last {
					b.Fatal(e, err)
				}
			}
		})
		b.Run("max-merge/"+state, func(b *testing.B) {
			var buf [8]byte
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := summaryKey(int64(i % ledgers))
				v, err := ix.db.GetAppend(buf[:0], k[:], nil)
				if err != nil || int64(binary.BigEndian.Uint64(v)) != last {
					b.Fatal(v, err)
				}
			}
		})
	}
}

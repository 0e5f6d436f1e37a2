package bookie

import (
	"bytes"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// A measured alternative to the ledgers index's field updates
// (docs/design.md, "Merge operator"): fence, explicit LAC and
// master key as blind Merge operands on the ledger's record instead of the
// whole record rewritten. The product does not use it: these benchmarks
// are what decided that.
//
//	go test -run '^$' -bench 'BenchmarkLedgerFence|BenchmarkLedgerExplicitLAC|BenchmarkLedgerIndexLoad' -benchmem -count 6 ./bookie/

// ledgerFieldOperator applies field operands to a ledger record: 'F'
// fences, 'L' then bytes sets the explicit LAC, 'K' then bytes the master
// key. A key with no older record is a new, existing ledger.
type ledgerFieldOperator struct{}

func (ledgerFieldOperator) Name() string { return "bench.ledger-fields" }

func (ledgerFieldOperator) FullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	info := LedgerInfo{Exists: true}
	if existing != nil {
		var err error
		if info, err = ondisk.DecodeLedgerInfo(existing); err != nil {
			return nil, err
		}
	}
	for _, o := range operands {
		if len(o) == 0 {
			return nil, errors.New("empty ledger field operand")
		}
		switch o[0] {
		case 'F':
			info.Fenced = true
		case 'L':
			info.ExplicitLAC = append([]byte{}, o[1:]...)
		case 'K':
			info.MasterKey = append([]byte{}, o[1:]...)
		default:
			return nil, errors.Newf("unknown ledger field operand %q", o[0])
		}
	}
	return ondisk.EncodeLedgerInfo(&info), nil
}

func (ledgerFieldOperator) PartialMerge(key, older, newer []byte) ([]byte, bool) {
	return nil, false
}

// openBenchLedgerIndex opens a ledgers index with the product's engine
// options on an in-memory file system (the WAL sync costs nothing, so the
// CPU of each variant shows), with ledgers [0, n) created and flushed.
func openBenchLedgerIndex(b *testing.B, n int) *ledgerIndex {
	b.Helper()
	opts := ondisk.LedgersEngineOptions(nil, nil)
	opts.FS = lsm.NewMemFS()
	opts.MergeOperator = ledgerFieldOperator{}
	li, err := openLedgerIndex("/ledgers", &opts)
	require.NoError(b, err)
	b.Cleanup(func() { _ = li.close() })
	key := bytes.Repeat([]byte{7}, 20)
	for id := int64(0); id < int64(n); id++ {
		require.NoError(b, li.setMasterKey(id, key))
	}
	require.NoError(b, li.flush())
	// A fresh dirty set, as after a restart: a Go map keeps the buckets of
	// the 10K dirty ledgers above, and every later flush would range over
	// them.
	li.dirty = map[int64]struct{}{}
	return li
}

// benchFieldUpdate runs one field update per op on ledger i, each made
// durable by one synced write (a checkpoint holding that one change, the
// worst case of the current path):
//   - "current": the product: the in-memory record changes, the next flush
//     rewrites the whole record (setFenced / setExplicitLAC + flush);
//   - "rmw": an index without the in-memory map would Get, decode, change,
//     encode and Set the record;
//   - "merge": a blind Merge of the field's operand (it still needs the
//     in-memory record: setFenced answers whether the ledger was fenced
//     already, setMasterKey refuses another key).
func benchFieldUpdate(b *testing.B, current func(li *ledgerIndex, id int64) error, operand []byte, change func(*LedgerInfo)) {
	const n = 10000
	b.Run("current", func(b *testing.B) {
		li := openBenchLedgerIndex(b, n)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%n == 0 && i > 0 {
				b.StopTimer()
				for _, info := range li.ledgers {
					info.Fenced = false
				}
				b.StartTimer()
			}
			if err := current(li, int64(i%n)); err != nil {
				b.Fatal(err)
			}
			if err := li.flush(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rmw", func(b *testing.B) {
		li := openBenchLedgerIndex(b, n)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			key := ondisk.LedgerKey(int64(i % n))
			v, err := li.db.Get(key)
			if err != nil {
				b.Fatal(err)
			}
			info, err := ondisk.DecodeLedgerInfo(v)
			if err != nil {
				b.Fatal(err)
			}
			change(&info)
			var batch lsm.Batch
			batch.Set(key, ondisk.EncodeLedgerInfo(&info))
			if err := li.db.Apply(&batch, lsm.Sync); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("merge", func(b *testing.B) {
		li := openBenchLedgerIndex(b, n)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var batch lsm.Batch
			batch.Merge(ondisk.LedgerKey(int64(i%n)), operand)
			if err := li.db.Apply(&batch, lsm.Sync); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLedgerFence(b *testing.B) {
	benchFieldUpdate(b, func(li *ledgerIndex, id int64) error {
		_, err := li.setFenced(id)
		return err
	}, []byte("F"), func(info *LedgerInfo) { info.Fenced = true })
}

func BenchmarkLedgerExplicitLAC(b *testing.B) {
	lac := bytes.Repeat([]byte{9}, 64)
	benchFieldUpdate(b, func(li *ledgerIndex, id int64) error {
		return li.setExplicitLAC(id, lac)
	}, append([]byte("L"), lac...), func(info *LedgerInfo) { info.ExplicitLAC = lac })
}

// BenchmarkLedgerIndexLoad is the read side: opening (loading) a ledgers
// index of 10K ledgers whose fence and explicit LAC were written as whole
// records or as operands over the creation's record, not compacted
// (operands full-merge on every load until a compaction folds them).
func BenchmarkLedgerIndexLoad(b *testing.B) {
	const n = 10000
	lac := bytes.Repeat([]byte{9}, 64)
	for _, variant := range []string{"records", "operands"} {
		b.Run(variant, func(b *testing.B) {
			li := openBenchLedgerIndex(b, n)
			require.NoError(b, li.db.Flush()) // the records in a table of their own, below the changes
			var batch lsm.Batch
			for id := int64(0); id < n; id++ {
				if variant == "records" {
					info := li.ledgers[id].Clone()
					info.Fenced, info.ExplicitLAC = true, lac
					batch.Set(ondisk.LedgerKey(id), ondisk.EncodeLedgerInfo(&info))
				} else {
					batch.Merge(ondisk.LedgerKey(id), []byte("F"))
					batch.Merge(ondisk.LedgerKey(id), append([]byte("L"), lac...))
				}
			}
			require.NoError(b, li.db.Apply(&batch, lsm.Sync))
			require.NoError(b, li.db.Flush())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fresh := &ledgerIndex{db: li.db, path: li.path, ledgers: map[int64]*LedgerInfo{}, dirty: map[int64]struct{}{}, existsOnDisk: map[int64]bool{}}
				if err := fresh.load(); err != nil {
					b.Fatal(err)
				}
				if got := fresh.ledgers[n-1]; !got.Fenced || len(got.ExplicitLAC) != len(lac) {
					b.Fatalf("ledger %d: %+v", n-1, got)
				}
			}
		})
	}
}

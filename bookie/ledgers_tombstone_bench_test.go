package bookie

import (
	"fmt"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// BenchmarkLedgerIndexPurgedScan measures the one place the product meets
// a run of point tombstones (docs/design.md, "Point-tombstone runs become
// range tombstones"): the purge of deleted ledgers
// deletes their records with one point Delete each, and the ledgers index
// reads its DB with a full scan only when it loads, at open. 100K ledgers
// deleted and purged below 1K live ones, records and tombstones kept in L0
// tables (no compaction: the worst case); conversion off (0) or at 64
// tombstones:
//
//   - "listing": the scans of the open DB after the first one (what a
//     repeated listing would cost; the product has none, it lists from
//     memory);
//
//   - "reopen": close and open (load) per op, as restarts do: the
//     converted tombstone is in the memtable and not in the WAL, so it is
//     gone at the next open.
//
//     go test -run '^$' -bench BenchmarkLedgerIndexPurgedScan -benchmem -benchtime 20x -count 6 ./bookie/
func BenchmarkLedgerIndexPurgedScan(b *testing.B) {
	const deleted, live = 100_000, 1000
	for _, minRun := range []int{0, 64} {
		for _, mode := range []string{"listing", "reopen"} {
			b.Run(fmt.Sprintf("%s/conversion=%d", mode, minRun), func(b *testing.B) {
				opts := ondisk.LedgersEngineOptions(nil, nil)
				opts.FS = lsm.NewMemFS()
				opts.MinTombstonesForRangeConversion = minRun
				// Keep the tables in L0: with the default trigger (4) the
				// compaction that follows drops the tombstones at the
				// bottom level within seconds of the purge, and there is
				// no run left to meet.
				opts.Level0FileNumCompactionTrigger = 100
				opts.Level0SlowdownWritesTrigger = 200
				opts.Level0StopWritesTrigger = 300
				li, err := openLedgerIndex("/ledgers", &opts)
				require.NoError(b, err)
				defer func() { _ = li.close() }()
				for id := int64(0); id < deleted+live; id++ {
					li.ensure(id)
				}
				require.NoError(b, li.flush())
				require.NoError(b, li.db.Flush())
				ids := make([]int64, 0, deleted)
				for id := int64(0); id < deleted; id++ {
					if _, err := li.delete(id); err != nil {
						b.Fatal(err)
					}
					ids = append(ids, id)
				}
				require.NoError(b, li.purged(ids, 0))
				require.NoError(b, li.db.Flush())
				if mode == "listing" {
					require.NoError(b, li.load()) // the first scan, which converts
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if mode == "reopen" {
						require.NoError(b, li.close())
						if li, err = openLedgerIndex("/ledgers", &opts); err != nil {
							b.Fatal(err)
						}
					} else {
						li.ledgers, li.existsOnDisk = map[int64]*LedgerInfo{}, map[int64]bool{}
						if err := li.load(); err != nil {
							b.Fatal(err)
						}
					}
					if len(li.ledgers) != live {
						b.Fatalf("loaded %d ledgers, want %d", len(li.ledgers), live)
					}
				}
				b.StopTimer()
				m := li.db.Metrics()
				b.ReportMetric(float64(m.ReadPathRangeTombstonesInserted), "inserted")
			})
		}
	}
}

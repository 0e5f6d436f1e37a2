package journal

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// slowSyncFS makes every fsync of a journal file take d and counts them,
// so that adds pile up behind an fsync as they do on a disk.
func slowSyncFS(inner vfs.FS, d time.Duration, syncs *atomicCounter) vfs.FS {
	return vfs.NewErrorFS(inner, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpSync && filepath.Ext(op.Path) == ".txn" {
			syncs.add()
			time.Sleep(d)
		}
		return nil
	}))
}

// addRecord is one add of a test workload.
type addRecord struct {
	ledger, entry int64
	payload       string
	mark          LogMark
}

// runWriters runs writers goroutines, writer g adding n entries to ledger
// g with random payloads, each waiting for its add; it returns every add,
// in each writer's order.
func runWriters(t testing.TB, s *Set, writers, n int, seed int64) [][]addRecord {
	out := make([][]addRecord, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewSource(seed + int64(g)))
			for e := range n {
				p := make([]byte, rng.Intn(300))
				rng.Read(p)
				c := s.Add(int64(g), int64(e), p)
				if err := c.Wait(); err != nil {
					t.Errorf("writer %d add %d: %v", g, e, err)
					return
				}
				out[g] = append(out[g], addRecord{int64(g), int64(e), string(p), c.Mark()})
			}
		})
	}
	wg.Wait()
	return out
}

// TestGroupCommitConcurrent: many goroutines add at once; every add
// completes after an fsync that covers it, far fewer fsyncs than adds are
// issued, each ledger's records are in its add order, and a reopen replays
// exactly what was added. Run under -race in CI.
func TestGroupCommitConcurrent(t *testing.T) {
	const writers, adds = 64, 60
	for _, tc := range []struct {
		name string
		set  func(*Options)
	}{
		{"max-group-wait", func(o *Options) { o.FlushWhenQueueEmpty = false }},
		{"flush-when-queue-empty", func(o *Options) {}},
		{"three-journals-rolling", func(o *Options) {
			o.JournalDirectories = []string{"j0", "j1", "j2"}
			o.MaxFileSize = 8 << 10
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			var syncs atomicCounter
			opts := testOptions(slowSyncFS(mem, time.Millisecond, &syncs))
			tc.set(&opts)
			s, _ := openCollect(t, opts)
			base := syncs.get()
			seed := time.Now().UnixNano()
			t.Logf("seed %d", seed)
			out := runWriters(t, s, writers, adds, seed)
			n := syncs.get() - base
			t.Logf("%d adds, %d fsyncs", writers*adds, n)
			require.Less(t, n, int64(writers*adds/2), "adds share fsyncs")
			for g, recs := range out {
				require.Len(t, recs, adds, "writer %d", g)
				for i := 1; i < len(recs); i++ {
					require.True(t, recs[i-1].mark.Less(recs[i].mark), "writer %d: add %d's record after add %d's", g, i, i-1)
				}
			}
			require.NoError(t, s.Close())

			opts.FS = mem.CrashClone(vfs.CrashOptions{})
			s, got := openCollect(t, opts)
			defer s.Close()
			byLedger := map[int64][]replayed{}
			for _, r := range got {
				byLedger[r.Ledger] = append(byLedger[r.Ledger], r)
			}
			for g, recs := range out {
				require.Len(t, byLedger[int64(g)], len(recs))
				for i, r := range byLedger[int64(g)] {
					require.Equal(t, fmt.Sprint(recs[i].entry, recs[i].payload), fmt.Sprint(r.Entry, r.Payload))
				}
			}
		})
	}
}

// TestAdaptiveGroupWrites: with journalAdaptiveGroupWrites (the default) a
// batch is written as soon as it holds as many adds as the one before, so
// writers that each wait for their add do not wait out the group wait
// again and again (a lone writer's add is written at once after the
// first); without it every batch waits the group wait, as upstream's.
func TestAdaptiveGroupWrites(t *testing.T) {
	for _, tc := range []struct {
		writers, adds int
		adaptive      bool
	}{{8, 10, true}, {1, 10, true}, {8, 3, false}} {
		t.Run(fmt.Sprintf("%d-writers-adaptive-%v", tc.writers, tc.adaptive), func(t *testing.T) {
			opts := testOptions(vfs.NewMem())
			opts.FlushWhenQueueEmpty = false
			opts.MaxGroupWait = 300 * time.Millisecond
			opts.NoAdaptiveGroupWrites = !tc.adaptive
			s, _ := openCollect(t, opts)
			defer s.Close()
			runWriters(t, s, tc.writers, tc.adds, 1)
			m := s.Metrics()[0]
			t.Logf("%d batches: %d after the group wait, %d adaptive", m.Batches, m.FlushMaxWait, m.FlushAdaptive)
			require.Equal(t, int64(tc.writers*tc.adds), m.Adds)
			if tc.adaptive {
				// Only the first batch, with nothing before it, waits
				// for sure; the writers resubmit together after each.
				require.GreaterOrEqual(t, m.FlushAdaptive, int64(tc.adds-2))
			} else {
				require.Zero(t, m.FlushAdaptive)
				require.Equal(t, m.Batches, m.FlushMaxWait)
			}
		})
	}
}

package journaled

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConcurrentAddsCheckpointsDeletions runs writers (synchronous and
// asynchronous adds), a full write cache's own checkpoints, periodic ones,
// single-directory checkpoints and deletions at once (run it with -race),
// then a power loss: every acknowledged entry of a ledger not deleted
// reads back, and the deleted ledgers stay deleted.
func TestConcurrentAddsCheckpointsDeletions(t *testing.T) {
	env := newTestEnv(3, 2)
	env.tweak = func(o *Options) {
		o.Storage.WriteCacheSize = 3 * 128 << 10
		o.Storage.FlushInterval = 3 * time.Millisecond
		o.Journal.FlushWhenQueueEmpty = false
		o.Journal.MaxGroupWait = time.Millisecond
		o.Journal.MaxFileSize = 32 << 10
	}
	s := env.open(t)
	const writers, adds = 8, 150
	acked := make([]map[[2]int64]string, writers)
	var wg sync.WaitGroup
	for g := range writers {
		acked[g] = map[[2]int64]string{}
		wg.Go(func() {
			var pending []Completion
			var keys [][2]int64
			var payloads []string
			for e := range int64(adds) {
				l := int64(g*100) + e%5
				p := fmt.Sprintf("%d/%d %s", l, e, make([]byte, e%200))
				if g%2 == 0 {
					require.NoError(t, s.AddEntry(l, e, []byte(p)))
					acked[g][[2]int64{l, e}] = p
					continue
				}
				pending = append(pending, s.AddEntryAsync(l, e, []byte(p)))
				keys, payloads = append(keys, [2]int64{l, e}), append(payloads, p)
				if len(pending) == 16 || e == adds-1 {
					for i, c := range pending {
						require.NoError(t, c.Wait())
						acked[g][keys[i]] = payloads[i]
					}
					pending, keys, payloads = pending[:0], keys[:0], payloads[:0]
				}
			}
		})
	}
	deleted := map[int64]bool{}
	wg.Go(func() {
		for i := range 20 {
			l := int64(10_000 + i)
			require.NoError(t, s.AddEntry(l, 0, []byte("doomed")))
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
			deleted[l] = true
			require.NoError(t, s.Dirs()[i%3].Checkpoint())
		}
	})
	wg.Wait()
	env.crash(t, s, 0)
	s = env.open(t)
	for g := range writers {
		for k, p := range acked[g] {
			requireEntry(t, s, k[0], k[1], []byte(p))
		}
	}
	for l := range deleted {
		requireNoLedger(t, s, l)
	}
	require.NoError(t, s.Close())
}

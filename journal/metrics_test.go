package journal

import (
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/internal/opstats"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestMetrics: every add and ForceLedger request is counted and timed
// once, each batch's adds and bytes add up to what was written, fsyncs are
// timed and grouped, the queues drain, the reasons a batch was written add
// up to the batches, the marks are reported, and a refused add counts as
// a failure.
func TestMetrics(t *testing.T) {
	for _, flushWhenEmpty := range []bool{true, false} {
		opts := testOptions(vfs.NewMem())
		opts.FlushWhenQueueEmpty = flushWhenEmpty
		opts.MaxGroupWait = time.Millisecond
		s, _ := openCollect(t, opts)
		const writers, adds = 8, 50
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				for e := range int64(adds) {
					require.NoError(t, s.Add(int64(g), e, make([]byte, 100)).Wait())
				}
			})
		}
		wg.Wait()
		require.NoError(t, s.ForceLedger(0).Wait())
		mark := s.CurrentMark()
		require.NoError(t, s.SetCheckpointed(mark))
		// Latencies are recorded after the waiters are woken.
		deadline := time.Now().Add(5 * time.Second)
		for s.Metrics()[0].AddEntry.SuccessCount < writers*adds || s.Metrics()[0].ForceLedger.SuccessCount < 1 {
			require.True(t, time.Now().Before(deadline), "latencies not recorded")
			time.Sleep(time.Millisecond)
		}
		m := s.Metrics()[0]
		require.Equal(t, int64(writers*adds), m.AddEntry.SuccessCount)
		require.Equal(t, int64(writers*adds), m.AddEntry.SuccessLatency.Count)
		require.Zero(t, m.AddEntry.FailureCount)
		require.Equal(t, int64(1), m.ForceLedger.SuccessCount)
		require.Equal(t, m.Batches, m.BatchEntries.SuccessCount)
		require.Equal(t, int64(writers*adds+1), int64(m.BatchEntries.SuccessLatency.Sum/opstats.ValueUnit))
		require.Equal(t, m.WriteBytes, int64(m.BatchBytes.SuccessLatency.Sum/opstats.ValueUnit))
		require.Equal(t, m.Syncs, m.Sync.SuccessCount)
		require.Positive(t, m.Sync.SuccessLatency.Sum)
		require.Equal(t, m.Batches, m.FlushMaxWait+m.FlushMaxOutstanding+m.FlushEmptyQueue+m.FlushAdaptive)
		if flushWhenEmpty {
			require.Equal(t, m.Batches, m.FlushEmptyQueue)
		} else {
			require.Positive(t, m.FlushMaxWait+m.FlushAdaptive)
		}
		require.Zero(t, m.QueueSize)
		require.Zero(t, m.ForceWriteQueueSize)
		require.Equal(t, mark[0], m.CurrentMark)
		require.Equal(t, mark[0], m.LastMark)
		require.Equal(t, []LogMark{mark[0]}, s.LastLogMarks())
		require.Equal(t, int64(1), m.Creation.SuccessCount)
		require.False(t, m.Failed)
		require.NoError(t, s.Close())
		require.Error(t, s.Add(1, 1, nil).Wait())
		require.Equal(t, int64(1), s.Metrics()[0].AddEntry.FailureCount)
	}
}

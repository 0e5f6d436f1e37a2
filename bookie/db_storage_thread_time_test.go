package bookie

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDBStorageThreadTime: the time the checkpoint worker spends in
// checkpoints a full write cache asked for is counted (upstream's
// db-storage-thread-time); a checkpoint asked for otherwise is not.
func TestDBStorageThreadTime(t *testing.T) {
	env := newTestEnv()
	env.addTweak(func(o *Options) { o.WriteCacheSize = 2 * (64 << 10) })
	s := env.open(t)
	defer func() { require.NoError(t, s.Close()) }()
	d := s.Dirs()[0]
	require.Zero(t, d.Metrics().DBStorageThreadTime)
	require.NoError(t, s.AddEntry(1, 0, []byte("x")))
	require.NoError(t, s.Checkpoint())
	require.Zero(t, d.Metrics().DBStorageThreadTime, "an explicit checkpoint is not the worker's")

	payload := make([]byte, 4<<10)
	for e := int64(1); e <= 64; e++ { // 256 KiB through a 64 KiB half
		require.NoError(t, s.AddEntry(1, e, payload))
	}
	deadline := time.Now().Add(5 * time.Second)
	for d.Metrics().DBStorageThreadTime == 0 {
		require.True(t, time.Now().Before(deadline), "no checkpoint of a full write cache was timed")
		time.Sleep(time.Millisecond)
	}
	require.Positive(t, d.Metrics().ThrottledWrite.SuccessCount, "adds waited for the worker")
}

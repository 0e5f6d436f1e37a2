package bookie

import (
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestGCStatistics checks the statistics of upstream's
// GarbageCollectorStats that a cycle updates: the active (live) and total
// bytes of the rotated logs, the usage buckets and the compact ratio of
// the last compaction, and a timed success of every step.
func TestGCStatistics(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	defer func() { require.NoError(t, s.Close()) }()
	d := s.Dirs()[0]
	writeInterleaved(t, s, 40, 30, 0)
	for l := int64(1); l <= 40; l++ {
		if l%4 != 0 {
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Checkpoint())

	// A minor compaction (threshold 0.2) finds every log at about 25%
	// and compacts none.
	res := runGC(t, s, GCRequest{Force: true, SkipMajor: true})
	require.Zero(t, res.CompactedLogs)
	m := d.GCMetrics()
	require.Positive(t, m.ActiveEntryLogs)
	total, _ := logBytes(t, env.mem, env.dirs)
	cur, err := env.mem.Stat(d.entryLog.LogPath(d.entryLog.CurrentLogID()))
	require.NoError(t, err)
	require.Equal(t, total-cur.Size(), m.EntryLogBytes, "the rotated logs' size")
	require.Greater(t, m.ActiveEntryLogBytes, m.EntryLogBytes/5, "about a quarter is live")
	require.Less(t, m.ActiveEntryLogBytes, m.EntryLogBytes/3, "about a quarter is live")
	var inBuckets int64
	for _, n := range m.EntryLogUsageBuckets {
		inBuckets += n
	}
	require.Equal(t, m.ActiveEntryLogs, inBuckets, "every log is in a usage bucket")
	require.Equal(t, inBuckets, m.EntryLogUsageBuckets[2]+m.EntryLogUsageBuckets[3], "every log's usage is in [20%%, 40%%): %v", m.EntryLogUsageBuckets)
	require.Positive(t, m.EntryLogUsageBuckets[2], "most are below 30%%: %v", m.EntryLogUsageBuckets)
	require.Zero(t, m.EntryLogCompactRatio)
	for name, st := range map[string]int64{
		"THREAD_RUNTIME": m.ThreadRuntime.SuccessCount, "GC_LEDGER_RUNTIME": m.GCLedgerRuntime.SuccessCount,
		"EXTRACT_META_RUNTIME": m.ExtractMetaRuntime.SuccessCount, "COMPACT_RUNTIME": m.CompactRuntime.SuccessCount,
		"THREAD_RUNTIME latencies": m.ThreadRuntime.SuccessLatency.Count, "COMPACT_RUNTIME latencies": m.CompactRuntime.SuccessLatency.Count,
	} {
		require.EqualValues(t, 1, st, name)
	}
	require.Positive(t, m.ThreadRuntime.SuccessLatency.Sum)
	require.Zero(t, m.ThreadRuntime.FailureCount+m.ReclaimFailedToDelete+m.Failures)

	// A major one compacts them all.
	logs := m.ActiveEntryLogs
	res = runGC(t, s, GCRequest{Force: true})
	require.Positive(t, res.CompactedLogs)
	m = d.GCMetrics()
	require.InDelta(t, float64(res.CompactedLogs)/float64(logs), m.EntryLogCompactRatio, 1e-9)
	require.EqualValues(t, 2, m.CompactRuntime.SuccessCount)
	require.LessOrEqual(t, m.ActiveEntryLogBytes, m.EntryLogBytes)
}

// TestGCStatisticsFailedDelete: a dead log whose removal fails counts in
// RECLAIM_FAILED_TO_DELETE, and the cycle and its step count as failed.
func TestGCStatisticsFailedDelete(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	defer func() { require.NoError(t, s.Close()) }()
	for l := int64(1); l <= 30; l++ {
		for e := int64(0); e < 20; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
		require.NoError(t, s.Checkpoint())
	}
	for l := int64(1); l <= 20; l++ {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
	}
	require.NoError(t, s.Checkpoint())
	injected := errors.New("injected remove failure")
	env.setFault(func(op vfs.Op) error {
		if op.Kind == vfs.OpRemove && strings.HasSuffix(op.Path, ".log") {
			return injected
		}
		return nil
	})
	d := s.Dirs()[0]
	_, err := d.RunGC(GCRequest{SkipMajor: true, SkipMinor: true})
	env.setFault(nil)
	require.ErrorIs(t, err, injected)
	m := d.GCMetrics()
	require.EqualValues(t, 1, m.ReclaimFailedToDelete)
	require.EqualValues(t, 1, m.ThreadRuntime.FailureCount)
	require.EqualValues(t, 1, m.ExtractMetaRuntime.FailureCount)
	require.EqualValues(t, 1, m.GCLedgerRuntime.SuccessCount)
	require.Zero(t, m.CompactRuntime.SuccessCount+m.CompactRuntime.FailureCount, "the cycle stopped before the compaction step")
	require.EqualValues(t, 1, m.Failures)
}

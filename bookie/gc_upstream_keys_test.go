package bookie

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// partlyDeadLogs writes 40 ledgers interleaved over many logs and deletes
// three in four: every log is about 25% live.
func partlyDeadLogs(t *testing.T, s *Storage) {
	t.Helper()
	writeInterleaved(t, s, 40, 30, 0)
	for l := int64(1); l <= 40; l++ {
		if l%4 != 0 {
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Checkpoint())
}

// TestGCForceAllowCompaction: with both intervals disabled a forced cycle
// compacts nothing, unless ForceAllowCompaction (forceAllowCompaction),
// as upstream's isForceMajorCompactionAllow: then it runs the kind whose
// threshold is in (0, 1).
func TestGCForceAllowCompaction(t *testing.T) {
	for _, allow := range []bool{false, true} {
		env := newGCEnv()
		tweak := env.tweak
		env.tweak = func(o *Options) {
			tweak(o)
			o.GC.MinorCompactionInterval, o.GC.MajorCompactionInterval = -1, -1
			o.GC.ForceAllowCompaction = allow
		}
		s := env.open(t)
		partlyDeadLogs(t, s)
		res := runGC(t, s, GCRequest{Force: true})
		if allow {
			require.Positive(t, res.CompactedLogs)
			require.Equal(t, int64(1), s.Dirs()[0].GCStatus().MajorCompactionCounter)
		} else {
			require.Zero(t, res.CompactedLogs)
		}
		// A periodic cycle never does.
		res = runGC(t, s, GCRequest{})
		require.Zero(t, res.CompactedLogs)
		require.NoError(t, s.Close())
	}
}

// TestGCUseTargetEntryLogSizeForGc: logs far smaller than logSizeLimit
// count their live bytes over logSizeLimit (useTargetEntryLogSizeForGc),
// so a minor compaction takes logs that are 25% live but a few percent of
// the target size.
func TestGCUseTargetEntryLogSizeForGc(t *testing.T) {
	compacted := map[bool]int{}
	for _, target := range []bool{false, true} {
		env := newGCEnv()
		tweak := env.tweak
		env.tweak = func(o *Options) {
			tweak(o)
			o.GC.UseTargetEntryLogSizeForGc = target
		}
		s := env.open(t)
		partlyDeadLogs(t, s)
		// Logs of 16 KiB: make the target 1 MiB by reopening with it.
		require.NoError(t, s.Close())
		env.tweak = func(o *Options) {
			tweak(o)
			o.GC.UseTargetEntryLogSizeForGc = target
			o.LogSizeLimit = 1 << 20
		}
		s = env.open(t)
		res := runGC(t, s, GCRequest{Force: true, SkipMajor: true})
		compacted[target] = res.CompactedLogs
		require.NoError(t, s.Close())
	}
	// About 25% live is above the minor threshold (0.2), save a log or so
	// less live; about 25% of 16 KiB is far below 0.2 of 1 MiB.
	t.Logf("logs compacted by a minor compaction: %v", compacted)
	require.Greater(t, compacted[true], compacted[false]+5)
}

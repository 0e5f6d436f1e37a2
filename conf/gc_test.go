package conf

import (
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/stretchr/testify/require"
)

// TestGCKeys checks the garbage collector's defaults and upstream's rules.
func TestGCKeys(t *testing.T) {
	c, err := Load(LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, bookie.GCOptions{
		MinorCompactionThreshold: 0.2, MinorCompactionInterval: time.Hour, MinorCompactionMaxTime: -time.Millisecond,
		MajorCompactionThreshold: 0.8, MajorCompactionInterval: 24 * time.Hour, MajorCompactionMaxTime: -time.Millisecond,
		CompactionRateByEntries: 1000, CompactionRateByBytes: 1000000,
	}, c.GC)
	require.Equal(t, [2]float64{0.95, 0.90}, [2]float64{c.DiskUsageThreshold, c.DiskUsageWarnThreshold})
	for _, o := range []map[string]string{
		{"minorCompactionThreshold": "0", "majorCompactionThreshold": "-1"},
		{"minorCompactionThreshold": "1", "majorCompactionInterval": "0"},
		{"minorCompactionInterval": "600", "gcWaitTime": "600000"},
		{"isThrottleByBytes": "true", "compactionRateByBytes": "-1"},
	} {
		_, err := Load(LoadOptions{Overrides: o})
		require.NoError(t, err, "%v", o)
	}
	// 0 or less disables in the file; bookie.GCOptions spells it -1 (its
	// zero is the default).
	c, err = Load(LoadOptions{Overrides: map[string]string{"minorCompactionThreshold": "0", "majorCompactionInterval": "-5", "compactionRateByEntries": "0"}})
	require.NoError(t, err)
	require.Equal(t, -1.0, c.GC.MinorCompactionThreshold)
	require.Equal(t, time.Duration(-1), c.GC.MajorCompactionInterval)
	require.Equal(t, -1, c.GC.CompactionRateByEntries)
	require.Equal(t, 0.8, c.GC.MajorCompactionThreshold)
	for _, tc := range []struct {
		o    map[string]string
		want string
	}{
		{map[string]string{"minorCompactionThreshold": "1.5"}, "Invalid minor compaction threshold"},
		{map[string]string{"majorCompactionThreshold": "1.01"}, "Invalid major compaction threshold"},
		{map[string]string{"minorCompactionInterval": "599"}, "Too short minor compaction interval"},
		{map[string]string{"majorCompactionInterval": "60"}, "Too short major compaction interval"},
		{map[string]string{"minorCompactionThreshold": "0.8"}, "Invalid minor/major compaction settings"},
		{map[string]string{"minorCompactionInterval": "86400"}, "Invalid minor/major compaction settings"},
		{map[string]string{"minorCompactionThreshold": "x"}, `minorCompactionThreshold: "x" is not a number`},
		{map[string]string{"diskUsageThreshold": "1"}, "are not valid"},
		{map[string]string{"diskUsageWarnThreshold": "0.96"}, "are not valid"},
	} {
		_, err := Load(LoadOptions{Overrides: tc.o})
		require.Error(t, err, "%v", tc.o)
		require.Contains(t, err.Error(), tc.want)
	}
}

// TestCompactionRateFallback: compactionRateByEntries, when empty, takes
// upstream's deprecated compactionRate; set, it wins.
func TestCompactionRateFallback(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want int
	}{
		{nil, 1000},
		{map[string]string{"compactionRate": "50"}, 50},
		{map[string]string{"compactionRate": "50", "compactionRateByEntries": "70"}, 70},
		{map[string]string{"compactionRate": "0"}, -1},
	} {
		c, err := Load(LoadOptions{Overrides: tc.set})
		require.NoError(t, err)
		require.Equal(t, tc.want, c.GC.CompactionRateByEntries, "%v", tc.set)
	}
	c, err := Load(LoadOptions{Overrides: map[string]string{"forceAllowCompaction": "true", "useTargetEntryLogSizeForGc": "yes"}})
	require.NoError(t, err)
	require.True(t, c.GC.ForceAllowCompaction)
	require.True(t, c.GC.UseTargetEntryLogSizeForGc)
}

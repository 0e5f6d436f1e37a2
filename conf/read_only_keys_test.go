package conf

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadOnlyKeys: the read-only mode's keys decode, the low-water mark
// and minUsableSizeForEntryLogCreation default from other keys, and
// upstream's rules between the thresholds are enforced.
func TestReadOnlyKeys(t *testing.T) {
	c, err := Load(LoadOptions{Path: writeFile(t, "bk_server.conf",
		"readOnlyModeEnabled=false\ndiskUsageThreshold=0.8\ndiskUsageWarnThreshold=0.7\ndiskCheckInterval=500\nlogSizeLimit=1000000\n")})
	require.NoError(t, err)
	require.False(t, c.ReadOnlyModeEnabled)
	require.Equal(t, 0.8, c.DiskUsageThreshold)
	require.Equal(t, 0.7, c.DiskUsageWarnThreshold)
	require.Equal(t, 0.8, c.DiskUsageLwmThreshold, "the low-water mark defaults to the threshold")
	require.Equal(t, 500*time.Millisecond, c.DiskCheckInterval)
	require.Equal(t, int64(1200000), c.MinUsableSizeForEntryLogCreation)

	for _, tc := range []struct{ file, msg string }{
		{"diskUsageThreshold=1\n", "diskUsageThreshold/diskUsageWarnThreshold: 1 and 0.9 are not valid"},
		{"diskUsageThreshold=0.8\n", "diskUsageThreshold/diskUsageWarnThreshold: 0.8 and 0.9 are not valid"},
		{"diskUsageLwmThreshold=0.99\n", "diskUsageLwmThreshold: 0.99 is not valid: it must be > 0 and at most diskUsageThreshold (0.95)"},
		{"diskUsageLwmThreshold=high\n", `diskUsageLwmThreshold: "high" is not a number`},
		{"diskCheckInterval=0\n", "diskCheckInterval: 0 ms must be positive"},
		{"minUsableSizeForEntryLogCreation=-1\n", "minUsableSizeForEntryLogCreation: \"-1\" is out of range"},
	} {
		_, err := Load(LoadOptions{Path: writeFile(t, "bk_server.conf", tc.file)})
		require.Error(t, err, tc.file)
		require.Contains(t, err.Error(), tc.msg, tc.file)
	}
}

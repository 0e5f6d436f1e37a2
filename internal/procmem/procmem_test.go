package procmem

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemory: on Linux the resident set is positive and at most its peak,
// and the Go runtime's memory is positive everywhere.
func TestMemory(t *testing.T) {
	require.Positive(t, GoRuntimeBytes())
	if _, err := os.Stat("/proc/self/statm"); err != nil || runtime.GOOS != "linux" {
		require.Zero(t, ResidentBytes())
		return
	}
	rss := ResidentBytes()
	require.Positive(t, rss)
	require.GreaterOrEqual(t, PeakResidentBytes(), rss/2, "the peak (read later, in kB) is at least about the resident set")
}

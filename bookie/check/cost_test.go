//go:build unix

package check

import (
	"flag"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/stretchr/testify/require"
)

var (
	costGiB     = flag.Float64("check-cost-gib", 0, "TestCheckCost: GiB of entry logs to write and check (0: skip)")
	costPayload = flag.Int("check-cost-payload", 1024, "TestCheckCost: bytes per entry")
	costDir     = flag.String("check-cost-dir", "", "TestCheckCost: the ledger directory (kept, and reused if it holds logs); default a temporary one")
)

// TestCheckCost measures what a check costs per GiB of entry logs: it
// writes -check-cost-gib GiB of entries of -check-cost-payload bytes over
// 100 ledgers, then checks the directory three times (the first warms the
// page cache) and logs each run's wall and CPU time per GiB. Run it under
// the benchmark lock (docs/operations.md quotes it):
//
//	flock /work/bench.lock go test ./bookie/check -run TestCheckCost -v -check-cost-gib 1 -check-cost-payload 1024
func TestCheckCost(t *testing.T) {
	if *costGiB <= 0 {
		t.Skip("-check-cost-gib is 0")
	}
	dir := *costDir
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "ledgers")
	}
	if _, err := os.Stat(filepath.Join(dir, "current", "locations")); err != nil {
		s, err := bookie.Open(&bookie.Options{LedgerDirs: []string{dir}, FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 256 << 20})
		require.NoError(t, err)
		p := make([]byte, *costPayload)
		for i := range p {
			p[i] = byte(i * 7)
		}
		const ledgers = 100
		n := int64(*costGiB*(1<<30)) / int64(len(p)+24)
		for i := int64(0); i < n; i++ {
			p[0], p[1] = byte(i), byte(i>>8)
			require.NoError(t, s.AddEntry(i%ledgers, i/ledgers, p))
		}
		require.NoError(t, s.Close())
	}
	for run := 0; run < 3; run++ {
		before := cpuTime(t)
		start := time.Now()
		res, err := Directory(Options{LedgerDir: dir})
		require.NoError(t, err)
		wall, cpu := time.Since(start), cpuTime(t)-before
		require.Zero(t, res.Problems(), "%v", res.Findings)
		gib := float64(res.LogBytes) / (1 << 30)
		t.Logf("run %d: %s: %.2f s wall, %.2f s CPU per GiB", run, res.Summary(), wall.Seconds()/gib, cpu.Seconds()/gib)
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

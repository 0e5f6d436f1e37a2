package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/benchmark"
	"github.com/stretchr/testify/require"
)

// readerChildEnv makes the test binary this command: the disk-bound mode's
// reader processes run it again (benchmark.Config.ReaderCommand is
// os.Executable(), the test binary, with the flags run was given).
const readerChildEnv = "BENCH_TEST_READER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(readerChildEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestDiskBoundBothEngines runs the disk-bound mode on both arms through
// the command: each engine's read phases run in a reader process of its
// own with the store kept out of the page cache, and come back with the disk's figures.
func TestDiskBoundBothEngines(t *testing.T) {
	dir := t.TempDir()
	if err := benchmark.DiskBoundAvailable(dir, false); err != nil {
		t.Skipf("the disk-bound mode cannot run here: %v", err)
	}
	t.Setenv(readerChildEnv, "1")
	var stdout, stderr bytes.Buffer
	code := run([]string{"--dir", dir, "--ledgers", "20", "--entries", "2000", "--flush-entries", "500", "--block-size", "4096",
		"--target-file-size", "256KiB", "--write-buffer", "1MiB", "--cache", "1MiB", "--threads", "2", "--warmup", "20ms",
		"--duration", "100ms", "--phases", "load,get,floor", "--idle-compaction-delay", "20ms", "--disk-bound",
		"--disk-probe-time", "50ms", "--json"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	rows := rowsByEngine(t, &stdout)
	for _, engine := range []string{"bookie-index", "pebble"} {
		for _, phase := range []string{"get", "floor"} {
			require.Len(t, rows[engine][phase], 1, "%s %s", engine, phase)
			row := rows[engine][phase][0]
			require.Equal(t, true, row["disk_bound"], "%s %s", engine, phase)
			require.Equal(t, float64(1), row["found_fraction"], "%s %s", engine, phase)
			x := row["extra"].(map[string]interface{})
			for _, k := range []string{"disk_reads_per_sec", "fraction_of_disk_reads", "reader_disk_read_bytes", "page_cache_drops_per_sec"} {
				require.Greater(t, x[k], float64(0), "%s %s: %s", engine, phase, k)
			}
		}
	}
	require.False(t, strings.Contains(stdout.String(), `"disk_bound":false`))
}

package bookkeeper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/benchmark"
	"github.com/stretchr/testify/require"
)

// TestIndexBenchArm runs the benchmark's BookKeeper arm at a tiny scale,
// in its three option modes on both rocksdbjni versions, through the
// runner the bench commands use, and checks its rows: they parse as the
// bench's own, every get and floor finds its key, no miss does, each row
// names the rocksdbjni the JVM really loaded and the options it ran with,
// and the layout is the one the tables have (partitioned index
// partitions unless bookie-conf mode turns them off).
func TestIndexBenchArm(t *testing.T) {
	Build(t)
	cfg := &benchmark.Config{
		Dir: scratchDir(t), Ledgers: 20, Entries: 300, FlushEntries: 100, Layout: "partitioned",
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 1 << 20,
		CacheSizes: []int64{256 << 10, 8 << 20}, Threads: 2,
		Warmup: 100 * time.Millisecond, Duration: 200 * time.Millisecond,
		Phases: []string{"load", "get", "floor", "miss", "delete"}, DeleteFraction: 0.5, JSON: true,
	}
	var arms []benchmark.Arm
	for _, v := range []string{BookKeeperRocksDB, OtherRocksDB} {
		for _, mode := range []string{ModeBookieConf, ModeBookieConfFull, ModeFile} {
			a, err := NewIndexBenchArm(cfg, mode, v)
			require.NoError(t, err)
			a.JVMFlags = []string{"-Xmx256m", "-XX:MaxDirectMemorySize=256m"}
			arms = append(arms, a)
		}
	}
	var out bytes.Buffer
	start := time.Now()
	require.NoError(t, benchmark.RunArms(cfg, arms, &out, nil))
	t.Logf("%d arms: %s", len(arms), time.Since(start).Round(time.Millisecond))

	type key struct{ version, options, phase string }
	rows := map[key][]map[string]any{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var row map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		require.Equal(t, "bookkeeper", row["engine"], sc.Text())
		var typed benchmark.OpRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &typed), "the bench's own row type reads it")
		k := key{row["engine_version"].(string), row["options"].(string), row["phase"].(string)}
		rows[k] = append(rows[k], row)
	}
	require.Len(t, rows, len(arms)*4, "load, get, floor, miss of each arm (delete is skipped): %v", rows)
	for _, v := range []string{BookKeeperRocksDB, OtherRocksDB} {
		version := "bookkeeper-4.18.2 rocksdbjni-" + v
		for opts, layout := range map[string]string{
			"bookie-conf":      "partitioned", // 4.18.2's dbStorage_rocksDB_partitionedIndexAndFiltersEnabled=true
			"bookie-conf-full": "full",
			"file":             "partitioned",
		} {
			load := rows[key{version, opts, "load"}]
			require.Len(t, load, 1, "%s %s", version, opts)
			require.Equal(t, float64(cfg.Keys()), load[0]["keys"])
			require.Equal(t, layout, load[0]["layout"])
			require.Greater(t, load[0]["table_bytes"], float64(0))
			require.Greater(t, load[0]["bytes_by_tier"].(map[string]any)["filter"], float64(0))
			for _, phase := range []string{"get", "floor", "miss"} {
				got := rows[key{version, opts, phase}]
				require.Len(t, got, len(cfg.CacheSizes), "a row per cache size: %s %s %s", version, opts, phase)
				for i, r := range got {
					want := 1.0
					if phase == "miss" {
						want = 0
					}
					require.Equal(t, want, r["found_fraction"], "%s %s %s", version, opts, phase)
					require.Equal(t, float64(cfg.CacheSizes[i]), r["cache_bytes"])
					require.Equal(t, layout, r["layout"])
					require.Greater(t, r["ops"], float64(0))
					require.Greater(t, r["cpu_us_per_op"], float64(0))
					require.Greater(t, r["cache_hits_per_op"], float64(0), "the perf context counts")
				}
			}
		}
	}
}

// TestIndexBenchArmDiskBound runs the arm in the bench's disk-bound mode
// (without a memory cgroup): the load in its JVM, then each cache size's
// read phases in a reader JVM it names, with the store's files kept out of
// the page cache; every get must find its key and the rows must carry the
// disk's figures and the bytes the reader read from the disk.
func TestIndexBenchArmDiskBound(t *testing.T) {
	Build(t)
	dir := t.TempDir()
	if err := benchmark.DiskBoundAvailable(dir, false); err != nil {
		t.Skip(err)
	}
	cfg := &benchmark.Config{
		Dir: dir, Ledgers: 20, Entries: 300, FlushEntries: 100, Layout: "partitioned",
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 1 << 20,
		CacheSizes: []int64{256 << 10}, Threads: 2, Warmup: 100 * time.Millisecond, Duration: 200 * time.Millisecond,
		Phases: []string{"load", "get", "floor"}, DeleteFraction: 0.5, JSON: true, DiskBound: true, DiskProbeTime: 100 * time.Millisecond,
	}
	a, err := NewIndexBenchArm(cfg, ModeBookieConf, BookKeeperRocksDB)
	require.NoError(t, err)
	a.JVMFlags = []string{"-Xmx256m", "-XX:MaxDirectMemorySize=256m"}
	var out bytes.Buffer
	require.NoError(t, benchmark.RunArms(cfg, []benchmark.Arm{a}, &out, nil))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String()) // load, get, floor
	for _, l := range lines[1:] {
		var row benchmark.OpRow
		require.NoError(t, json.Unmarshal([]byte(l), &row))
		require.True(t, row.DiskBound, l)
		require.Equal(t, "bookkeeper", row.Engine)
		require.Equal(t, float64(1), row.FoundFraction, l)
		require.Contains(t, row.Extra, "disk_reads_per_sec", l)
		require.Contains(t, row.Extra, "disk_read_bytes_per_op", l)
	}
}

package benchmark

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "4096": 4096, "1.5MiB": 3 << 19, "2MB": 2e6} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "x", "-1MiB", "MiB"} {
		_, err := ParseSize(bad)
		require.Error(t, err, bad)
	}
	require.Equal(t, "64MiB", FormatSize(64<<20))
	require.Equal(t, "1GiB", FormatSize(1<<30))
}

func TestFlagsAndValidation(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	c.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"--cache", "64MiB,1GiB", "--common-prefix", "off", "--phases", "load,get"}))
	require.Equal(t, []int64{64 << 20, 1 << 30}, c.CacheSizes)
	require.False(t, c.CommonPrefix)
	require.NoError(t, c.Validate())
	require.Equal(t, int64(64<<20), c.EffectiveTargetFileSize(), "50M keys: 64 MiB tables")
	c.Entries = 5000
	require.Equal(t, int64(6710886), c.EffectiveTargetFileSize(), "5M keys: proportionally smaller tables")
	c.Phases = []string{"nope"}
	require.ErrorContains(t, c.Validate(), "unknown phase")
	require.Error(t, fs.Parse([]string{"--common-prefix", "maybe"}))
}

// TestRunAllPhases runs every phase at a tiny scale and checks the JSON
// rows: the counters must agree with what the engine does.
func TestRunAllPhases(t *testing.T) {
	cfg := Config{
		Dir: t.TempDir(), Ledgers: 20, Entries: 600, FlushEntries: 100, Layout: "partitioned", CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 256 << 10,
		CacheSizes: []int64{256 << 10, 16 << 20}, Threads: 2, IdleCompactionDelay: 50 * time.Millisecond, Warmup: 50 * time.Millisecond, Duration: 150 * time.Millisecond,
		Phases: []string{"load", "get", "floor", "miss", "mixed", "delete"}, DeleteFraction: 0.5, JSON: true,
	}
	var out bytes.Buffer
	require.NoError(t, Run(&cfg, []Engine{NewBookieEngine(&cfg)}, &out, nil))
	rows := map[string][]map[string]interface{}{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var row map[string]interface{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		rows[row["phase"].(string)] = append(rows[row["phase"].(string)], row)
	}
	load := rows["load"][0]
	require.Equal(t, float64(12000), load["keys"])
	require.Greater(t, load["table_bytes"], float64(0))
	require.Greater(t, load["bytes_by_tier"].(map[string]interface{})["filter"], float64(0))
	require.Equal(t, float64(0), load["tables_per_level"].([]interface{})[0], "the idle compaction emptied L0")
	require.Greater(t, load["idle_seconds"], float64(0))
	require.Len(t, rows["get"], 2, "a row per cache size")
	for _, g := range rows["get"] {
		require.Equal(t, float64(1), g["found_fraction"])
		require.Greater(t, g["ops"], float64(0))
		require.Equal(t, "bookie-index", g["engine"])
	}
	small, big := rows["get"][0], rows["get"][1]
	require.Greater(t, small["data_reads_per_op"], big["data_reads_per_op"], "a smaller cache reads more blocks")
	require.Equal(t, float64(1), rows["floor"][0]["found_fraction"])
	require.Equal(t, float64(0), rows["miss"][0]["found_fraction"])
	require.Greater(t, rows["mixed"][0]["extra"].(map[string]interface{})["write_keys_per_sec"], float64(0))
	del := rows["delete"][0]["extra"].(map[string]interface{})
	require.Equal(t, float64(0), del["floor_deleted_found"])
	require.Greater(t, del["reclaimed_fraction"], 0.2, "deleting half of the ledgers gives space back")
	t.Logf("delete: %v", del)

	// Human output names the phases; --cpuprofile writes a profile per
	// measured read phase and of each part of the load.
	cfg.JSON = false
	cfg.Phases = []string{"load", "get", "floor"}
	cfg.Dir = t.TempDir()
	cfg.CacheSizes = cfg.CacheSizes[:1]
	cfg.CPUProfile = filepath.Join(t.TempDir(), "prof")
	out.Reset()
	require.NoError(t, Run(&cfg, []Engine{NewBookieEngine(&cfg)}, &out, nil))
	require.True(t, strings.Contains(out.String(), "load (bookie-index") && strings.Contains(out.String(), "ops/s"), out.String())
	for _, phase := range []string{"get", "floor"} {
		fi, err := os.Stat(cfg.CPUProfile + "-bookie-index-" + phase + "-256KiB.pprof")
		require.NoError(t, err)
		require.Greater(t, fi.Size(), int64(0))
	}
	for _, part := range []string{"write", "settle", "idle", "allocs"} {
		fi, err := os.Stat(cfg.CPUProfile + "-bookie-index-load-" + part + ".pprof")
		require.NoError(t, err)
		require.Greater(t, fi.Size(), int64(0))
	}
	require.Contains(t, out.String(), "CPU ")
}

// TestStoragePhases runs add-entry and read-entry at a tiny scale: every
// entry read back must be found, and the rows must count real work.
func TestStoragePhases(t *testing.T) {
	cfg := Config{
		Dir: t.TempDir(), Ledgers: 8, Entries: 100, FlushEntries: 100, Layout: "partitioned", CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 256 << 10,
		CacheSizes: []int64{1 << 20}, Threads: 2, IdleCompactionDelay: 50 * time.Millisecond, Warmup: 20 * time.Millisecond, Duration: 150 * time.Millisecond,
		Phases: []string{"load", "add-entry", "read-entry"}, DeleteFraction: 0.5, JSON: true, DiskProbeBytes: 2 << 20,
	}
	var out bytes.Buffer
	require.NoError(t, Run(&cfg, []Engine{NewBookieEngine(&cfg)}, &out, nil))
	rows := map[string]map[string]interface{}{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var row map[string]interface{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		rows[row["phase"].(string)] = row
	}
	add, read := rows["add-entry"], rows["read-entry"]
	require.NotNil(t, add, out.String())
	require.NotNil(t, read, out.String())
	require.Greater(t, add["ops"], float64(0))
	require.Greater(t, add["extra"].(map[string]interface{})["mb_per_sec"], float64(0))
	require.Greater(t, read["ops"], float64(0))
	require.Equal(t, float64(1), read["found_fraction"])
	// The disk measured in the same run, and the storage's fraction of it.
	addX, readX := add["extra"].(map[string]interface{}), read["extra"].(map[string]interface{})
	for _, k := range []string{"disk_write_mb_per_sec", "disk_fsyncs_per_sec", "fraction_of_disk_write"} {
		require.Greater(t, addX[k], float64(0), k)
	}
	for _, k := range []string{"mb_per_sec", "disk_read_mb_per_sec", "fraction_of_disk_read"} {
		require.Greater(t, readX[k], float64(0), k)
	}
}

// TestStoragePhasesJournal runs add-entry's journal arms at a tiny scale:
// a row per arm and writer count, each with its latencies, the journal
// arms with their fsyncs; read-entry reads the last arm's entries back
// through its journal's storage.
func TestStoragePhasesJournal(t *testing.T) {
	cfg := Config{
		Dir: t.TempDir(), Ledgers: 8, Entries: 100, FlushEntries: 100, Layout: "partitioned", CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 256 << 10,
		CacheSizes: []int64{1 << 20}, Threads: 2, IdleCompactionDelay: 50 * time.Millisecond, Warmup: 20 * time.Millisecond, Duration: 100 * time.Millisecond,
		Phases: []string{"load", "add-entry", "read-entry"}, DeleteFraction: 0.5, JSON: true, DiskProbeBytes: 1 << 20,
		Journal: []string{"off", "nosync", "sync"}, Writers: []int{1, 4},
	}
	require.NoError(t, cfg.Validate())
	var out bytes.Buffer
	require.NoError(t, Run(&cfg, []Engine{NewBookieEngine(&cfg)}, &out, nil))
	var adds []map[string]interface{}
	var read map[string]interface{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var row map[string]interface{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		switch row["phase"] {
		case "add-entry":
			adds = append(adds, row)
		case "read-entry":
			read = row
		}
	}
	require.Len(t, adds, 6, out.String())
	for i, row := range adds {
		x := row["extra"].(map[string]interface{})
		require.Equal(t, float64(i/2), x["journal"], "arm of row %d", i)
		require.Equal(t, []float64{1, 4}[i%2], x["writers"])
		require.Equal(t, x["writers"], row["threads"])
		require.Greater(t, row["ops"], float64(0))
		require.Greater(t, x["p99_ms"], float64(0))
		require.GreaterOrEqual(t, x["p99_ms"], x["p50_ms"])
		require.Greater(t, x["disk_fsyncs_per_sec"], float64(0))
		if i >= 2 {
			require.Equal(t, float64(2), x["group_wait_ms"])
		}
		if i >= 4 { // sync: every add waited for an fsync
			require.Greater(t, x["journal_syncs"], float64(0))
			require.Greater(t, x["p50_ms"], float64(0.001))
		}
	}
	require.NotNil(t, read)
	require.Equal(t, float64(1), read["found_fraction"])

	cfg.Journal = []string{"maybe"}
	require.ErrorContains(t, cfg.Validate(), `--journal: unknown arm "maybe"`)
}

// TestGCPhase runs the gc phase at a tiny scale: the forced cycle must
// give bytes back and every live entry read during it must be found.
func TestGCPhase(t *testing.T) {
	cfg := Config{
		Dir: t.TempDir(), Ledgers: 40, Entries: 100, FlushEntries: 100, Layout: "partitioned", CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 256 << 10,
		CacheSizes: []int64{1 << 20}, Threads: 2, IdleCompactionDelay: 50 * time.Millisecond, Warmup: 20 * time.Millisecond, Duration: 100 * time.Millisecond,
		Phases: []string{"load", "gc"}, DeleteFraction: 0.75, JSON: true,
		// Logs of 1 MiB: a 100 ms run on a loaded machine wrote less than
		// one 16 MiB log, left nothing rotated and reclaimed nothing.
		GCLogSize: 1 << 20,
	}
	var out bytes.Buffer
	require.NoError(t, Run(&cfg, []Engine{NewBookieEngine(&cfg)}, &out, nil))
	var gc map[string]interface{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var row map[string]interface{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		if row["phase"] == "gc" {
			gc = row
		}
	}
	require.NotNil(t, gc, out.String())
	extra := gc["extra"].(map[string]interface{})
	t.Logf("%v", extra)
	require.Less(t, extra["log_bytes_after"], extra["log_bytes_before"])
	// The phase writes for a duration, so how many logs end partly live
	// (compacted) or dead (removed) depends on the machine's speed: under
	// load every log was sometimes dead. Either way space must come back.
	require.Positive(t, extra["compacted_logs"].(float64)+extra["removed_logs"].(float64))
	require.Equal(t, float64(1), gc["found_fraction"])
}

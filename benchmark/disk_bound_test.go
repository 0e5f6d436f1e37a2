package benchmark

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readerChildEnv makes the test binary the bench command: the disk-bound
// mode's reader processes re-run it (Config.ReaderCommand).
const readerChildEnv = "BENCHMARK_TEST_READER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(readerChildEnv) == "1" {
		os.Exit(runAsBenchCommand(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runAsBenchCommand is what `bookie-index bench` does with its flags.
func runAsBenchCommand(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var cfg Config
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := Run(&cfg, []Engine{NewBookieEngine(&cfg)}, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// directIOWorks says whether dir's file system takes O_DIRECT reads
// (tmpfs does not).
func directIOWorks(t *testing.T, dir string) bool { return directIOAvailable(dir) == nil }

// cgroupsWork says whether this process may create memory cgroups.
func cgroupsWork() error {
	cg, err := newMemoryCgroup()
	if err != nil {
		return err
	}
	return cg.remove()
}

func diskBoundConfig(t *testing.T) *Config {
	dir := t.TempDir()
	if !directIOWorks(t, dir) {
		t.Skipf("the file system of %s refuses O_DIRECT (tmpfs?): the disk probe cannot run", dir)
	}
	return &Config{
		Dir: dir, Keep: true, Ledgers: 40, Entries: 2000, FlushEntries: 500, Layout: "partitioned", CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 256 << 10, WriteBuffer: 1 << 20,
		CacheSizes: []int64{256 << 10, 1 << 20}, Threads: 2, IdleCompactionDelay: 50 * time.Millisecond,
		Warmup: 50 * time.Millisecond, Duration: 200 * time.Millisecond,
		Phases: []string{"load", "get", "floor", "miss"}, DeleteFraction: 0.5, JSON: true,
		DiskBound: true, DiskProbeTime: 100 * time.Millisecond,
		// The bench command's flags for the settings above that readers use.
		ReaderCommand: []string{os.Args[0], "--ledgers", "40", "--entries", "2000", "--flush-entries", "500", "--block-size", "4096",
			"--target-file-size", "256KiB", "--write-buffer", "1MiB", "--threads", "2", "--warmup", "50ms", "--duration", "200ms"},
	}
}

// TestDiskBound runs the disk-bound mode end to end at a tiny scale: the
// reader processes (this test binary, as the bench command) must run
// every read phase, find every key, and come back with the disk's figures,
// bytes read from the disk and the page cache residency of the store; the
// store, though far smaller than memory, was kept out of the page cache,
// so the gets that missed the block cache read the disk. With a memory
// cgroup (--disk-bound-memory; Linux, as root) the reader's memory stays
// under its limit.
func TestDiskBound(t *testing.T) {
	t.Setenv(readerChildEnv, "1")
	cfg := diskBoundConfig(t)
	var out bytes.Buffer
	require.NoError(t, Run(cfg, []Engine{NewBookieEngine(cfg)}, &out, nil))
	rows := diskBoundRowsOf(t, &out)
	require.Len(t, rows["load"], 1)
	for _, phase := range []string{"get", "floor", "miss"} {
		require.Len(t, rows[phase], 2, "%s: a row per cache size", phase)
		for i, row := range rows[phase] {
			require.Equal(t, true, row["disk_bound"], phase)
			require.Equal(t, float64(cfg.CacheSizes[i]), row["cache_bytes"], phase)
			require.Greater(t, row["ops"], float64(0), phase)
			x := row["extra"].(map[string]interface{})
			for _, k := range []string{"disk_reads_per_sec", "disk_read_mb_per_sec", "fraction_of_disk_reads", "store_bytes",
				"reader_disk_read_bytes", "page_cache_drops_per_sec", "disk_reads_per_sec_before", "disk_reads_per_sec_after",
				"disk_read_cpu_us_per_read"} {
				require.Greater(t, x[k], float64(0), "%s: %s", phase, k)
			}
			require.Equal(t, float64(4096), x["disk_read_size"])
			require.InDelta(t, (x["disk_reads_per_sec_before"].(float64)+x["disk_reads_per_sec_after"].(float64))/2, x["disk_reads_per_sec"], 1e-6,
				"the disk's rate is the mean of the probes before and after the reader")
			require.InDelta(t, row["ops_per_sec"].(float64)/x["disk_reads_per_sec"].(float64), x["fraction_of_disk_reads"], 1e-9)
			require.Contains(t, x, "disk_read_bytes_per_op", phase)
			// Kept out: a tiny store can be read whole between two drops on
			// a busy machine, but not at every sample.
			require.Less(t, x["page_cache_mean_bytes"], x["store_bytes"], "%s: kept out", phase)
			require.NotContains(t, x, "cgroup_peak_bytes", "no cgroup unless asked")
		}
	}
	for _, g := range rows["get"] {
		require.Equal(t, float64(1), g["found_fraction"])
	}
	require.Equal(t, float64(0), rows["miss"][0]["found_fraction"])
	// The small cache's gets read blocks from the files, and those reads
	// went to the disk: the keeper held the store out of the page cache.
	small := rows["get"][0]
	require.Greater(t, small["data_reads_per_op"], float64(0))
	require.Greater(t, small["extra"].(map[string]interface{})["disk_read_bytes_per_op"], float64(0), "the gets read the disk")

	// The human output marks the rows.
	cfg.JSON, cfg.UseExisting = false, true
	cfg.Phases, cfg.CacheSizes = []string{"get"}, cfg.CacheSizes[:1]
	out.Reset()
	require.NoError(t, Run(cfg, []Engine{NewBookieEngine(cfg)}, &out, nil))
	require.Contains(t, out.String(), "disk-bound: each cache size's read phases in a process of their own, the store's files dropped")
	require.Contains(t, out.String(), "get (bookie-index, partitioned, 2 threads, disk-bound)")
	require.Contains(t, out.String(), "fraction_of_disk_reads=")

	// In a memory cgroup.
	if err := cgroupsWork(); err != nil {
		t.Logf("no memory cgroup here: %v", err)
		return
	}
	cfg.JSON, cfg.DiskBoundMemory = true, 96<<20
	out.Reset()
	require.NoError(t, Run(cfg, []Engine{NewBookieEngine(cfg)}, &out, nil))
	x := diskBoundRowsOf(t, &out)["get"][0]["extra"].(map[string]interface{})
	require.Equal(t, float64(cfg.CacheSizes[0]+96<<20), x["memory_limit_bytes"])
	require.Greater(t, x["cgroup_peak_bytes"], float64(0))
	require.LessOrEqual(t, x["cgroup_peak_bytes"], x["memory_limit_bytes"])
}

func diskBoundRowsOf(t *testing.T, out *bytes.Buffer) map[string][]map[string]interface{} {
	rows := map[string][]map[string]interface{}{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var row map[string]interface{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		rows[row["phase"].(string)] = append(rows[row["phase"].(string)], row)
	}
	return rows
}

// externalReader is an arm whose disk-bound reader is a process it names
// (DiskBoundReader), as a reference arm in another runtime would be; here
// that process is this test binary run as the bench command.
type externalReader struct {
	*BookieEngine
	calls int
}

func (e *externalReader) ReaderCommand(dir string, cacheBytes int64, phases []string) (*exec.Cmd, error) {
	e.calls++
	return exec.Command(os.Args[0], "--dir", filepath.Dir(dir), "--use-existing", "--disk-bound-reader", "bookie-index",
		"--ledgers", "40", "--entries", "2000", "--write-buffer", "1MiB", "--threads", "1", "--warmup", "10ms", "--duration", "100ms",
		"--cache", FormatSize(cacheBytes), "--phases", strings.Join(phases, ","), "--json"), nil
}

// TestDiskBoundExternalReader: an engine that names its own reader
// process runs it instead of the bench command, under the same checks.
func TestDiskBoundExternalReader(t *testing.T) {
	t.Setenv(readerChildEnv, "1")
	cfg := diskBoundConfig(t)
	cfg.ReaderCommand = nil // not used: the engine names its reader
	cfg.Phases, cfg.CacheSizes = []string{"load", "get", "floor"}, cfg.CacheSizes[:1]
	e := &externalReader{BookieEngine: NewBookieEngine(cfg)}
	var out bytes.Buffer
	require.NoError(t, Run(cfg, []Engine{e}, &out, nil))
	require.Equal(t, 1, e.calls)
	require.Equal(t, 3, strings.Count(out.String(), "\n"), out.String()) // load, get, floor
	require.Contains(t, out.String(), `"disk_bound":true`)
	require.Contains(t, out.String(), `"threads":1`, "the rows are the external reader's")
}

// TestDiskBoundValidation: the mode runs only the phases it can, and
// a reader process refuses an engine it does not know.
func TestDiskBoundValidation(t *testing.T) {
	cfg := Config{Ledgers: 1, Entries: 1, FlushEntries: 1, Layout: "partitioned", Compression: "lz4", Threads: 1,
		CacheSizes: []int64{1 << 20}, DeleteFraction: 0.5, BlockSize: 4096, DiskBound: true,
		DiskProbeTime: time.Second}
	cfg.Phases = []string{"load", "mixed"}
	require.ErrorContains(t, cfg.Validate(), "not mixed")
	cfg.Phases = []string{"load"}
	require.ErrorContains(t, cfg.Validate(), "needs a read phase")
	cfg.Phases = []string{"get"}
	require.NoError(t, cfg.Validate())
	cfg.DiskBoundMemory = -1
	require.ErrorContains(t, cfg.Validate(), "--disk-bound-memory")
	cfg.DiskBoundMemory, cfg.DiskBoundDropEvery = 0, -time.Second
	require.ErrorContains(t, cfg.Validate(), "--disk-bound-drop-every")

	cfg = *diskBoundConfig(t)
	cfg.DiskBound, cfg.ReaderEngine, cfg.Phases = false, "pebble", []string{"get"}
	require.ErrorContains(t, Run(&cfg, []Engine{NewBookieEngine(&cfg)}, &bytes.Buffer{}, nil), `--disk-bound-reader "pebble": no such engine`)
}

// TestPageCacheDropAndResidency: a file read through the page cache is
// resident; dropped, it is not, and an O_DIRECT probe of it brings
// nothing back.
func TestPageCacheDropAndResidency(t *testing.T) {
	dir := t.TempDir()
	if !directIOWorks(t, dir) {
		t.Skipf("the file system of %s refuses O_DIRECT (tmpfs?)", dir)
	}
	p := filepath.Join(dir, "f")
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	require.NoError(t, os.WriteFile(p, data, 0o644))
	_, err := os.ReadFile(p)
	require.NoError(t, err)
	files, err := storeFiles(dir)
	require.NoError(t, err)
	require.Equal(t, []storeFile{{path: p, size: 1 << 20}}, files)
	n, err := residentBytesOf(files)
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), n, "written and read: all resident")
	require.NoError(t, dropFromPageCache(files))
	n, err = residentBytesOf(files)
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "dropped")

	rr, err := probeRandomReads(files, 5000, 2, 50*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 8192, rr.ReadSize, "rounded up to the O_DIRECT alignment")
	require.Greater(t, rr.ReadsPerSec, float64(0))
	require.InDelta(t, rr.ReadsPerSec*8192/1e6, rr.MBPerSec, 1e-6)
	n, err = residentBytesOf(files)
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "O_DIRECT reads leave nothing in the page cache")

	_, err = probeRandomReads(files, 2<<20, 1, time.Millisecond)
	require.ErrorContains(t, err, "no file of at least")
}

// TestCgroupBoundsPageCache: a process started in a memory cgroup (as the
// disk-bound readers are) that reads a file three times its limit leaves
// at most the limit of it in the page cache.
func TestCgroupBoundsPageCache(t *testing.T) {
	if err := cgroupsWork(); err != nil {
		t.Skipf("no memory cgroup here: %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "big")
	const limit = 16 << 20
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 3*limit/8), 0o644))
	files, err := storeFiles(dir)
	require.NoError(t, err)
	require.NoError(t, dropFromPageCache(files))
	cg, err := newMemoryCgroup()
	require.NoError(t, err)
	defer func() { require.NoError(t, cg.remove()) }()
	require.NoError(t, cg.setLimit(limit))
	cmd := exec.Command("cat", p)
	inCgroup(cmd, cg)
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Run())
	require.Equal(t, 3*limit, out.Len(), "cat read the whole file")
	resident, err := residentBytesOf(files)
	require.NoError(t, err)
	t.Logf("resident %d of %d bytes, cgroup peak %d", resident, 3*limit, cg.peakBytes())
	require.LessOrEqual(t, resident, int64(limit))
	require.Greater(t, cg.peakBytes(), int64(0))
	require.LessOrEqual(t, cg.peakBytes(), int64(limit))
	require.Equal(t, int64(0), cg.oomKills())
}

// TestPageCacheKeeper: a file read through the page cache while the keeper
// runs leaves it within a few intervals, and so does a file created after
// the keeper started.
func TestPageCacheKeeper(t *testing.T) {
	dir := t.TempDir()
	if !directIOWorks(t, dir) {
		t.Skipf("the file system of %s refuses O_DIRECT (tmpfs?)", dir)
	}
	write := func(name string) []storeFile {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte{9}, 4<<20), 0o644))
		_, err := os.ReadFile(p)
		require.NoError(t, err)
		return []storeFile{{path: p, size: 4 << 20}}
	}
	first := write("a")
	k := startPageCacheKeeper(dir, defaultDropEvery)
	gone := func(files []storeFile) func() bool {
		return func() bool {
			n, err := residentBytesOf(files)
			require.NoError(t, err)
			return n == 0
		}
	}
	require.Eventually(t, gone(first), 5*time.Second, defaultDropEvery)
	_, err := os.ReadFile(first[0].path) // read again: back in the page cache, then dropped
	require.NoError(t, err)
	require.Eventually(t, gone(first), 5*time.Second, defaultDropEvery)
	second := write("b") // found when the keeper lists the directory again
	require.Eventually(t, gone(second), 5*time.Second, defaultDropEvery)
	drops, err := k.finish()
	require.NoError(t, err)
	require.Greater(t, drops, int64(2))
}

package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// fakeProcessArm is a ProcessArm whose process is sh printing script's
// output; it records what the runner asked for.
type fakeProcessArm struct {
	script string
	dir    string
	phases []string
	caches []int64
}

func (f *fakeProcessArm) Name() string    { return "other" }
func (f *fakeProcessArm) DirName() string { return "other-arm" }

func (f *fakeProcessArm) Command(dir string, phases []string, cacheSizes []int64) (*exec.Cmd, error) {
	f.dir, f.phases, f.caches = dir, phases, cacheSizes
	return exec.Command("sh", "-c", f.script), nil
}

func processConfig(t *testing.T) *Config {
	return &Config{
		Dir: t.TempDir(), Ledgers: 10, Entries: 100, FlushEntries: 10, Layout: "partitioned", BlockSize: 4096, BloomBits: 10,
		Compression: "lz4", CacheSizes: []int64{1 << 20, 8 << 20}, Threads: 2, Warmup: time.Millisecond, Duration: time.Millisecond,
		Phases: []string{"load", "get", "floor", "mixed", "delete"}, DeleteFraction: 0.5, JSON: true,
	}
}

// echoRows is a script printing rows, then what it writes to stderr.
func echoRows(rows []string, stderr string) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "printf '%%s\\n' '%s'\n", r)
	}
	fmt.Fprintf(&b, "printf '%%s\\n' '%s' >&2\n", stderr)
	return b.String()
}

func TestProcessArmRows(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cfg := processConfig(t)
	load := `{"engine":"other","phase":"load","load_via":"write","layout":"full","keys":1000,"table_bytes":5000,"a_field_it_does_not_know":1.5,"engine_version":"v1","options":"o"}`
	get := `{"engine":"other","phase":"get","layout":"full","cache_bytes":1048576,"threads":2,"ops":10,"ops_per_sec":5,"found_fraction":1,"cpu_us_per_op":2,"engine_version":"v1","options":"o"}`
	arm := &fakeProcessArm{script: echoRows([]string{load, "", get}, "progress line")}
	var out, progress bytes.Buffer
	require.NoError(t, RunArms(cfg, []Arm{arm}, &out, &progress))
	require.Equal(t, []string{"load", "get", "floor"}, arm.phases, "the phases it runs, in order; mixed and delete are skipped")
	require.Equal(t, cfg.CacheSizes, arm.caches)
	require.True(t, strings.HasSuffix(arm.dir, "/other-arm"), arm.dir)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var lr LoadRow
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &lr))
	require.Equal(t, LoadRow{Engine: "other", Phase: "load", LoadVia: "write", Layout: "full", Keys: 1000, TableBytes: 5000, EngineVersion: "v1", Options: "o"}, lr,
		"re-emitted as the bench's own row (fields it does not know are dropped)")
	var or OpRow
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &or))
	require.Equal(t, "get", or.Phase)
	require.Equal(t, float64(1), or.FoundFraction)
	require.Empty(t, progress.String(), "no progress with --json")

	// The human tables name the arm's version and options.
	cfg.JSON = false
	out.Reset()
	require.NoError(t, RunArms(cfg, []Arm{arm}, &out, &progress))
	require.Contains(t, out.String(), "get (other [v1 o], full, 2 threads)")
	require.Contains(t, progress.String(), "other-arm: mixed, delete skipped")
	require.Contains(t, progress.String(), "other-arm: progress line")

	// --use-existing: no load.
	cfg.UseExisting = true
	arm.script = echoRows([]string{get}, "")
	require.NoError(t, RunArms(cfg, []Arm{arm}, &out, nil))
	require.Equal(t, []string{"get", "floor"}, arm.phases)
}

func TestProcessArmFailures(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for name, c := range map[string]struct {
		script string
		want   string
		is     error
	}{
		"not all found": {
			script: echoRows([]string{`{"engine":"other","phase":"get","cache_bytes":1048576,"ops":10,"found_fraction":0.5}`}, ""),
			want:   "found fraction 0.500000 at cache 1MiB", is: ErrNotAllFound,
		},
		"exit status":  {script: "echo 'a reason' >&2; exit 3", want: "exit status 3; its stderr ends:\na reason"},
		"other engine": {script: echoRows([]string{`{"engine":"pebble","phase":"get"}`}, ""), want: `a row of engine "pebble" from the arm of "other"`},
		"not JSON":     {script: "echo hello", want: `a row that is not JSON: "hello"`},
		"phase":        {script: echoRows([]string{`{"engine":"other","phase":"mixed"}`}, ""), want: `a row of phase "mixed"`},
	} {
		t.Run(name, func(t *testing.T) {
			err := RunArms(processConfig(t), []Arm{&fakeProcessArm{script: c.script}}, &bytes.Buffer{}, nil)
			require.ErrorContains(t, err, c.want)
			if c.is != nil {
				require.True(t, errors.Is(err, c.is), "%v", err)
			}
		})
	}
	cfg := processConfig(t)
	cfg.LoadVia = LoadViaIngest
	require.ErrorContains(t, RunArms(cfg, []Arm{&fakeProcessArm{}}, &bytes.Buffer{}, nil), "engine other cannot ingest tables")
}

// fakeDiskBoundArm is a process arm that is a DiskBoundReader: its load
// process writes a store file, its readers print a row per phase.
type fakeDiskBoundArm struct {
	fakeProcessArm
	readers []int64 // the cache size of each reader started
}

func (f *fakeDiskBoundArm) Command(dir string, phases []string, cacheSizes []int64) (*exec.Cmd, error) {
	f.dir, f.phases, f.caches = dir, phases, cacheSizes
	return exec.Command("sh", "-c", `mkdir -p "$0" && head -c 1048576 /dev/zero > "$0/000001.sst" && `+
		`printf '%s\n' '{"engine":"other","phase":"load","keys":1000}'`, dir), nil
}

func (f *fakeDiskBoundArm) ReaderCommand(dir string, cacheBytes int64, phases []string) (*exec.Cmd, error) {
	f.readers = append(f.readers, cacheBytes)
	script := ""
	for _, ph := range phases {
		script += fmt.Sprintf(`printf '%%s\n' '{"engine":"other","phase":"%s","cache_bytes":%d,"ops":10,"ops_per_sec":5,"found_fraction":1}';`, ph, cacheBytes)
	}
	return exec.Command("sh", "-c", script), nil
}

// TestProcessArmDiskBound: in the disk-bound mode a process arm loads in
// its own process, then each cache size's read phases run in the reader
// it names, under the mode's drops and checks (here without a cgroup).
func TestProcessArmDiskBound(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cfg := diskBoundConfig(t)
	cfg.ReaderCommand = nil
	cfg.Phases = []string{"load", "get", "floor"}
	arm := &fakeDiskBoundArm{}
	var out bytes.Buffer
	require.NoError(t, RunArms(cfg, []Arm{arm}, &out, nil))
	require.Equal(t, []string{"load"}, arm.phases, "the process runs the load only")
	require.Equal(t, cfg.CacheSizes, arm.readers, "a reader per cache size")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1+2*len(cfg.CacheSizes), out.String())
	for _, l := range lines[1:] {
		var row OpRow
		require.NoError(t, json.Unmarshal([]byte(l), &row))
		require.True(t, row.DiskBound, l)
		require.Contains(t, row.Extra, "disk_reads_per_sec", l)
	}
	// An arm that names no reader cannot run the mode.
	err := RunArms(cfg, []Arm{&fakeProcessArm{script: "true"}}, &bytes.Buffer{}, nil)
	require.ErrorContains(t, err, "names no reader process")
}

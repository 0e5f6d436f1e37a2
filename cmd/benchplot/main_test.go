package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/scale.svg")

// goldenArgs are the inputs of testdata/scale.svg: a file with load rows
// of both engines (as bench/ writes it) and one without, given its key
// count.
var goldenArgs = []string{"testdata/5m.jsonl", "50M=testdata/50m-existing.jsonl"}

// diskBoundArgs add disk-bound rows (bench --disk-bound, without a load
// row): testdata/scale-disk-bound.svg, with a row of charts per phase.
var diskBoundArgs = append(append([]string{}, goldenArgs...), "50M=testdata/50m-disk-bound.jsonl")

func plot(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func TestGolden(t *testing.T) {
	testGolden(t, "testdata/scale.svg", goldenArgs)
	testGolden(t, "testdata/scale-disk-bound.svg", diskBoundArgs)
}

func testGolden(t *testing.T, golden string, args []string) {
	out := filepath.Join(t.TempDir(), "scale.svg")
	if _, stderr, code := plot(t, append([]string{"-o", out}, args...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (rerun with -update and review the diff)", golden)
	}
	// Stdout without -o is the same bytes.
	if stdout, _, _ := plot(t, args...); stdout != string(got) {
		t.Error("stdout differs from -o FILE")
	}
}

func TestOutputIsXML(t *testing.T) {
	stdout, stderr, code := plot(t, goldenArgs...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := xml.NewDecoder(strings.NewReader(stdout))
	var root string
	elems := map[string]int{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			elems[se.Name.Local]++
		}
	}
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
	// 4 charts; every series with two or more points is a polyline.
	if elems["polyline"] == 0 || elems["circle"] == 0 || elems["text"] < 4 {
		t.Errorf("elements %v", elems)
	}
}

// TestDiskBoundCharts: disk-bound rows get a row of charts per phase of
// their own, after the cached ones (which are always drawn), and only for
// the phases they have.
func TestDiskBoundCharts(t *testing.T) {
	stdout, stderr, code := plot(t, diskBoundArgs...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	titles := []string{">get: ops/s vs cache size<", ">floor: ops/s vs cache size<",
		">get (disk-bound): ops/s vs cache size<", ">floor (disk-bound): ops/s vs key count<"}
	last := -1
	for _, title := range titles {
		i := strings.Index(stdout, title)
		if i < 0 || i < last {
			t.Fatalf("chart %q missing or out of order", title)
		}
		last = i
	}
	samples, err := readArg("50M=testdata/50m-disk-bound.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var gets []sample
	for _, s := range samples {
		if s.phase == "get"+diskBoundSuffix {
			gets = append(gets, s)
		}
	}
	var b bytes.Buffer
	if err := render(&b, medians(gets)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ">get (disk-bound): ops/s vs cache size<") || strings.Contains(b.String(), "floor (disk-bound)") {
		t.Error("disk-bound gets alone: a row of charts for them, none for disk-bound floors")
	}
}

// TestDeterministic renders the same samples in shuffled order: the
// output must not depend on the order rows came in (the medians sort, the
// series are sorted).
func TestDeterministic(t *testing.T) {
	var samples []sample
	for _, a := range diskBoundArgs {
		s, err := readArg(a)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, s...)
	}
	var want bytes.Buffer
	if err := render(&want, medians(samples)); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		rng.Shuffle(len(samples), func(i, j int) { samples[i], samples[j] = samples[j], samples[i] })
		var got bytes.Buffer
		if err := render(&got, medians(samples)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatal("output depends on the order of the rows")
		}
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	load := `{"engine":"pebble","phase":"load","layout":"partitioned","keys":5000000}` + "\n"
	get := `{"engine":"pebble","phase":"get","layout":"partitioned","cache_bytes":67108864,"ops_per_sec":1000}` + "\n"
	bad := write("bad.jsonl", load+get+"\n{\"engine\": oops}\n")
	empty := write("empty.jsonl", "")
	loadOnly := write("load.jsonl", load+`{"engine":"pebble","phase":"miss","layout":"partitioned","cache_bytes":67108864,"ops_per_sec":1}`+"\n")
	noLoad := write("noload.jsonl", get)
	notRow := write("notrow.jsonl", "{}\n")
	noOps := write("noops.jsonl", load+`{"engine":"pebble","phase":"get","layout":"partitioned","cache_bytes":67108864}`+"\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{bad}, 1, bad + ":4: not a bench JSON row"},
		{[]string{empty}, 1, "no get or floor rows"},
		{[]string{loadOnly}, 1, "no get or floor rows"},
		{[]string{noLoad}, 1, noLoad + ":1: get row of pebble with no key count"},
		{[]string{"5M=" + noLoad, "50M=" + loadOnly}, 1, loadOnly + ":1: load row has 5000000 keys, the argument says 50000000"},
		{[]string{notRow}, 1, notRow + ":1: not a bench JSON row: no engine or phase"},
		{[]string{noOps}, 1, noOps + ":2: get row without ops_per_sec"},
		{[]string{filepath.Join(dir, "missing.jsonl")}, 1, "missing.jsonl"},
		{nil, 2, "no input files"},
		{[]string{"-x", noLoad}, 2, "flag provided but not defined"},
	} {
		_, stderr, code := plot(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if stdout, _, code := plot(t, "-h"); code != 0 || !strings.Contains(stdout, "usage: benchplot") {
		t.Errorf("-h: exit %d, stdout %q", code, stdout)
	}
	// The key count from the argument makes the file without a load row plot.
	if _, stderr, code := plot(t, "5M="+noLoad); code != 0 {
		t.Errorf("5M=%s: exit %d: %s", noLoad, code, stderr)
	}
}

func TestMedians(t *testing.T) {
	k := key{"e", "", "l", "get", 5, 64}
	mk := func(ops ...float64) []sample {
		var s []sample
		for _, o := range ops {
			s = append(s, sample{key: k, ops: o, rows: 1})
		}
		return s
	}
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 10}, 3.5}} {
		got := medians(mk(tc.in...))
		if len(got) != 1 || got[0].ops != tc.want || got[0].rows != len(tc.in) {
			t.Errorf("medians(%v) = %+v, want %v over %d rows", tc.in, got, tc.want, len(tc.in))
		}
	}
}

// TestVariants: rows of one engine with other versions or options (the
// BookKeeper arm's rocksdbjni and option modes) are series of their own,
// named by their variant; an engine with one variant keeps its plain name.
func TestVariants(t *testing.T) {
	rows := ""
	for _, r := range []struct{ engine, version, options string }{
		{"bookie-index", "", ""},
		{"bookkeeper", "bookkeeper-4.18.2 rocksdbjni-9.9.3", "bookie-conf"},
		{"bookkeeper", "bookkeeper-4.18.2 rocksdbjni-10.10.1", "bookie-conf"},
		{"bookkeeper", "bookkeeper-4.18.2 rocksdbjni-9.9.3", "file"},
	} {
		v := ""
		if r.version != "" {
			v = `,"engine_version":"` + r.version + `","options":"` + r.options + `"`
		}
		rows += `{"engine":"` + r.engine + `","phase":"load","layout":"partitioned","keys":5000000` + v + "}\n"
		for i, ops := range []int{100, 200} {
			rows += `{"engine":"` + r.engine + `","phase":"get","layout":"partitioned","cache_bytes":` + []string{"67108864", "1073741824"}[i] +
				`,"ops_per_sec":` + strconv.Itoa(ops) + v + "}\n"
		}
	}
	samples, err := readRows("rows", strings.NewReader(rows), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(medians(samples)); got != 8 {
		t.Fatalf("%d points, want 8: the three bookkeeper variants must not merge", got)
	}
	var b bytes.Buffer
	if err := render(&b, medians(samples)); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	// Each variant is named by the words that not all of them share.
	for _, want := range []string{">bookie-index, 5M keys<", ">bookkeeper (rocksdbjni-9.9.3 bookie-conf), 5M keys<",
		">bookkeeper (rocksdbjni-10.10.1 bookie-conf), 5M keys<", ">bookkeeper (rocksdbjni-9.9.3 file), 5M keys<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no legend %q", want)
		}
	}
	// Two variants of one version: the mode alone.
	two := strings.Split(rows, "\n")
	samples, err = readRows("rows", strings.NewReader(strings.Join(append(two[:6], two[9:]...), "\n")), 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := render(&b, medians(samples)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">bookkeeper (bookie-conf), 5M keys<", ">bookkeeper (file), 5M keys<"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no legend %q", want)
		}
	}
	// One variant: the plain name.
	one := strings.Join(strings.Split(rows, "\n")[:6], "\n")
	samples, err = readRows("rows", strings.NewReader(one), 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := render(&b, medians(samples)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ">bookkeeper, 5M keys<") {
		t.Error("one variant of bookkeeper: its legend is not the plain name")
	}
}

func TestParseCount(t *testing.T) {
	for s, want := range map[string]int64{"5M": 5e6, "500M": 5e8, "1.5G": 15e8, "5000000": 5e6, "20K": 2e4, "5m": 5e6} {
		if got, err := parseCount(s); err != nil || got != want {
			t.Errorf("parseCount(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "M", "x", "0", "-5M", "5T", "NaN", "1e30G"} {
		if _, err := parseCount(s); err == nil {
			t.Errorf("parseCount(%q) succeeded", s)
		}
	}
}

// TestYTicks checks the y axis over random maxima: from 0, evenly spaced,
// covering the maximum without more than one step of headroom, 2 to 11
// ticks, and labels that tell every tick apart.
func TestYTicks(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		ymax := math.Pow(10, 2+rng.Float64()*6)
		ticks, unit, _, decimals := yTicks(ymax)
		n := len(ticks)
		step := ticks[1] - ticks[0]
		if ticks[0] != 0 || n < 2 || n > 11 || ticks[n-1] < ymax || ticks[n-1]-step >= ymax {
			t.Fatalf("yTicks(%g) = %v", ymax, ticks)
		}
		seen := map[string]bool{}
		for _, tk := range ticks {
			l := formatFixed(tk/unit, decimals)
			if seen[l] {
				t.Fatalf("yTicks(%g): label %q twice in %v", ymax, l, ticks)
			}
			seen[l] = true
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64 MiB", 256 << 20: "256 MiB", 1 << 30: "1 GiB", 1536 << 20: "1.5 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{5e6: "5M", 5e7: "50M", 5e8: "500M", 1e9: "1G", 2500: "2.5K"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCommittedScalePlot redraws docs/scale.svg from the rows in
// docs/bench, with the command docs/benchmarks.md gives: the committed
// figure must be exactly what the program makes of the committed rows.
func TestCommittedScalePlot(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"../../docs/bench/5m-round1.jsonl", "5M=../../docs/bench/5m-round2.jsonl",
		"../../docs/bench/50m-partitioned.jsonl", "../../docs/bench/500m.jsonl"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("benchplot exited %d: %s", code, stderr.String())
	}
	want, err := os.ReadFile("../../docs/scale.svg")
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != string(want) {
		t.Fatal("docs/scale.svg is not what benchplot draws from docs/bench; rerun the command in docs/benchmarks.md")
	}
}

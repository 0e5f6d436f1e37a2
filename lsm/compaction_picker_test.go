package lsm

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/stretchr/testify/require"
)

// updateGolden is the -update flag that rewrites golden testdata files. A
// package the tests import may define it already (one flag serves all).
var updateGolden = func() func() bool {
	f := flag.Lookup("update")
	if f == nil {
		flag.Bool("update", false, "rewrite the expected output of golden testdata files")
		f = flag.Lookup("update")
	}
	return func() bool { return f.Value.String() == "true" }
}()

// goldenCase is one case of a data-driven testdata file, in Pebble's
// format: a command line with key=value arguments, an input, a "----" line
// and the expected output, ended by an empty line.
type goldenCase struct {
	pos, cmd         string
	args             map[string]string
	input, expected  string
	outStart, outEnd int
}

// runGolden runs every case of path through fn and compares the outputs,
// or rewrites them with -update.
func runGolden(t *testing.T, path string, fn func(t *testing.T, c *goldenCase) string) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var cases []*goldenCase
	for i := 0; i < len(lines); {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			i++
			continue
		}
		fields := strings.Fields(l)
		c := &goldenCase{pos: fmt.Sprintf("%s:%d", path, i+1), cmd: fields[0], args: map[string]string{}}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.args[k] = v
		}
		var input []string
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			input = append(input, lines[i])
		}
		require.Less(t, i, len(lines), "%s: no ---- line", c.pos)
		c.input = strings.Join(input, "\n")
		i++
		c.outStart = i
		for i < len(lines) && lines[i] != "" {
			i++
		}
		c.outEnd = i
		c.expected = strings.Join(lines[c.outStart:c.outEnd], "\n")
		cases = append(cases, c)
	}
	outputs := make([]string, len(cases))
	for i, c := range cases {
		got := strings.TrimRight(fn(t, c), "\n")
		require.NotContains(t, got, "\n\n", "%s: output with an empty line", c.pos)
		outputs[i] = got
		if !updateGolden() && got != c.expected {
			t.Errorf("%s: %s: output differs (-update rewrites it; review the diff)\n--- expected\n%s\n--- got\n%s",
				c.pos, c.cmd, c.expected, got)
		}
	}
	if !updateGolden() {
		return
	}
	var b strings.Builder
	next := 0
	for i, c := range cases {
		for _, l := range lines[next:c.outStart] {
			b.WriteString(l + "\n")
		}
		if outputs[i] != "" {
			b.WriteString(outputs[i] + "\n")
		}
		next = c.outEnd
	}
	for _, l := range lines[next:] {
		b.WriteString(l + "\n")
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

// pickerFixture is a DB reduced to what the compaction picker reads: its
// options, a version, snapshots and the range-deletion coverage estimates.
type pickerFixture struct {
	d *DB
	v *manifest.Version
}

// parseSize reads 100, 64K or 2M.
func parseSize(t *testing.T, s string) uint64 {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, "size %q", s)
	return uint64(n * float64(mult))
}

// define builds a fixture. Arguments set options (l0-trigger, slowdown,
// stop, max-compaction-bytes, base-bytes, num-levels, static) and state
// (snapshots=N; l<level>-pointer=KEY, a compact pointer; coverage-stale).
// Input lines are "L<n>" and tables under it:
//
//	<filenum>: <smallest>-<largest> [size=S] [seqs=A-B] [rangedels=N] [coverage=F] [compacting]
//
// A largest key ending in ")" is an exclusive range-tombstone bound.
func (f *pickerFixture) define(t *testing.T, c *goldenCase) string {
	o := &Options{MaxBytesForLevelBase: 1 << 20, TargetFileSizeBase: 64 << 10, MaxCompactionBytes: 1 << 20}
	for k, v := range c.args {
		n, _ := strconv.Atoi(v)
		switch k {
		case "l0-trigger":
			o.Level0FileNumCompactionTrigger = n
		case "slowdown":
			o.Level0SlowdownWritesTrigger = n
		case "stop":
			o.Level0StopWritesTrigger = n
		case "max-compaction-bytes":
			o.MaxCompactionBytes = int64(parseSize(t, v))
		case "base-bytes":
			o.MaxBytesForLevelBase = int64(parseSize(t, v))
		case "num-levels":
			o.NumLevels = n
		case "static":
			o.StaticLevelBytes = true
		}
	}
	o.EnsureDefaults()
	require.NoError(t, o.Validate(), c.pos)
	d := &DB{opts: o}
	d.mu.snapshots = map[*Snapshot]struct{}{}
	if n, err := strconv.Atoi(c.args["snapshots"]); err == nil {
		for range n {
			d.mu.snapshots[&Snapshot{}] = struct{}{}
		}
	}
	edit := &manifest.VersionEdit{}
	fractions := map[uint64]float64{}
	var compacting []uint64
	level := -1
	for _, line := range strings.Split(c.input, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "L") && !strings.Contains(line, ":") {
			var err error
			level, err = strconv.Atoi(line[1:])
			require.NoError(t, err, "%s: %q", c.pos, line)
			continue
		}
		fields := strings.Fields(line)
		num, err := strconv.ParseUint(strings.TrimSuffix(fields[0], ":"), 10, 64)
		require.NoError(t, err, "%s: %q", c.pos, line)
		lo, hi, ok := strings.Cut(fields[1], "-")
		require.True(t, ok, "%s: %q", c.pos, line)
		m := &manifest.TableMeta{FileNum: num, Size: 64 << 10, Entries: 100, SmallestSeqNum: base.SeqNum(num), LargestSeqNum: base.SeqNum(num)}
		for _, fl := range fields[2:] {
			k, v, _ := strings.Cut(fl, "=")
			switch k {
			case "size":
				m.Size = parseSize(t, v)
			case "seqs":
				a, b, _ := strings.Cut(v, "-")
				x, _ := strconv.Atoi(a)
				y, _ := strconv.Atoi(b)
				m.SmallestSeqNum, m.LargestSeqNum = base.SeqNum(x), base.SeqNum(y)
			case "rangedels":
				n, _ := strconv.Atoi(v)
				m.RangeDeletions = uint64(n)
			case "coverage":
				fr, err := strconv.ParseFloat(v, 64)
				require.NoError(t, err)
				fractions[num] = fr
			case "compacting":
				compacting = append(compacting, num)
			default:
				t.Fatalf("%s: unknown table field %q", c.pos, fl)
			}
		}
		m.Smallest = base.MakeInternalKey([]byte(lo), m.LargestSeqNum, base.KindSet)
		if excl, ok := strings.CutSuffix(hi, ")"); ok {
			m.Largest = base.InternalKey{UserKey: []byte(excl), Trailer: manifest.RangeDeleteSentinel}
		} else {
			m.Largest = base.MakeInternalKey([]byte(hi), m.SmallestSeqNum, base.KindSet)
		}
		edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: level, Meta: m})
	}
	for level := range manifest.NumLevels {
		if p, ok := c.args[fmt.Sprintf("l%d-pointer", level)]; ok {
			edit.CompactPointers = append(edit.CompactPointers, manifest.CompactPointer{Level: level, Key: base.InternalKey{UserKey: []byte(p)}})
		}
	}
	v, err := manifest.NewVersion().Apply(edit)
	require.NoError(t, err, c.pos)
	for _, num := range compacting {
		for level := range manifest.NumLevels {
			for _, m := range v.Tables(level) {
				if m.FileNum == num {
					m.SetCompacting(true)
				}
			}
		}
	}
	d.mu.coverage.fractions = fractions
	d.mu.coverage.gen = tombstoneGen(v)
	if _, ok := c.args["coverage-stale"]; ok {
		// A scan is under way for the current tombstones: no estimate yet.
		d.mu.coverage.gen++
		d.mu.coverage.scanning = true
	}
	f.d, f.v = d, v
	targets, baseLevel := d.levelTargets(v)
	scores := d.levelScores(v)
	var b strings.Builder
	fmt.Fprintf(&b, "base level: L%d\n", baseLevel)
	for level := 0; level < o.NumLevels-1; level++ {
		if v.NumTables(level) == 0 && level != 0 {
			continue
		}
		target := "inf"
		if targets[level] < 1e300 {
			target = fmt.Sprint(uint64(targets[level]))
		}
		fmt.Fprintf(&b, "L%d: %d tables, %d bytes, target %s, score %.2f\n", level, v.NumTables(level), v.LevelBytes(level), target, scores[level])
	}
	return b.String()
}

// pick picks a compaction (marking its inputs compacting, so that the next
// pick sees them busy) and describes it.
func (f *pickerFixture) pick(t *testing.T, c *goldenCase) string {
	require.NotNil(t, f.d, "%s: pick before define", c.pos)
	c2 := f.d.pickCompactionLocked(f.v)
	if c2 == nil {
		return "none"
	}
	return describeCompaction(c2)
}

func describeCompaction(c *compaction) string {
	var b strings.Builder
	fmt.Fprintf(&b, "L%d -> L%d: %s", c.startLevel, c.outputLevel, c.reason)
	if c.inPlace {
		b.WriteString(", in place")
	}
	if c.sliced {
		lo, hi := "-inf", "+inf"
		if c.sliceLo != nil {
			lo = string(c.sliceLo)
		}
		if c.sliceHi != nil {
			hi = string(c.sliceHi)
		}
		fmt.Fprintf(&b, ", slice [%s, %s)", lo, hi)
	}
	b.WriteString("\n")
	for i, level := range []int{c.startLevel, c.outputLevel} {
		if len(c.inputs[i]) == 0 {
			continue
		}
		var names []string
		var size uint64
		for _, t := range c.inputs[i] {
			names = append(names, fmt.Sprintf("%06d", t.FileNum))
			size += t.Size
		}
		fmt.Fprintf(&b, "  L%d: %s (%d bytes)\n", level, strings.Join(names, " "), size)
	}
	return b.String()
}

// TestCompactionPickerGolden runs testdata/compaction_picker: levels of
// tables in, the compactions picked one after another out.
func TestCompactionPickerGolden(t *testing.T) {
	var f pickerFixture
	runGolden(t, "testdata/compaction_picker", func(t *testing.T, c *goldenCase) string {
		switch c.cmd {
		case "define":
			return f.define(t, c)
		case "pick":
			return f.pick(t, c)
		default:
			t.Fatalf("%s: unknown command %q", c.pos, c.cmd)
			return ""
		}
	})
}

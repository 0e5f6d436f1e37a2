package lsm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/stretchr/testify/require"
)

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
func (f *pickerFixture) define(t *testing.T, c *golden.Case) string {
	o := &Options{MaxBytesForLevelBase: 1 << 20, TargetFileSizeBase: 64 << 10, MaxCompactionBytes: 1 << 20}
	for _, a := range c.Args {
		var v string
		if len(a.Values) == 1 {
			v = a.Values[0]
		}
		n, _ := strconv.Atoi(v)
		switch a.Key {
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
	require.NoError(t, o.Validate(), c.Pos)
	d := &DB{opts: o}
	d.mu.snapshots = map[*Snapshot]struct{}{}
	if c.Has("snapshots") {
		for range c.Int(t, "snapshots", 0) {
			d.mu.snapshots[&Snapshot{}] = struct{}{}
		}
	}
	edit := &manifest.VersionEdit{}
	fractions := map[uint64]float64{}
	var compacting []uint64
	level := -1
	for _, line := range strings.Split(c.Input, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "L") && !strings.Contains(line, ":") {
			var err error
			level, err = strconv.Atoi(line[1:])
			require.NoError(t, err, "%s: %q", c.Pos, line)
			continue
		}
		fields := strings.Fields(line)
		num, err := strconv.ParseUint(strings.TrimSuffix(fields[0], ":"), 10, 64)
		require.NoError(t, err, "%s: %q", c.Pos, line)
		lo, hi, ok := strings.Cut(fields[1], "-")
		require.True(t, ok, "%s: %q", c.Pos, line)
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
				t.Fatalf("%s: unknown table field %q", c.Pos, fl)
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
		if key := fmt.Sprintf("l%d-pointer", level); c.Has(key) {
			p := c.String(t, key, "")
			edit.CompactPointers = append(edit.CompactPointers, manifest.CompactPointer{Level: level, Key: base.InternalKey{UserKey: []byte(p)}})
		}
	}
	v, err := manifest.NewVersion().Apply(edit)
	require.NoError(t, err, c.Pos)
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
	if c.Has("coverage-stale") {
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
func (f *pickerFixture) pick(t *testing.T, c *golden.Case) string {
	require.NotNil(t, f.d, "%s: pick before define", c.Pos)
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
	golden.Run(t, "testdata/compaction_picker", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "define":
			return f.define(t, c)
		case "pick":
			return f.pick(t, c)
		default:
			t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
			return ""
		}
	})
}

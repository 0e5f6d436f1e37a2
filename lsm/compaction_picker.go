package lsm

import (
	"bytes"
	"math"
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
)

// compaction is a chosen unit of work: input tables of two adjacent
// levels (or one, for a move), merged into outputLevel.
type compaction struct {
	startLevel, outputLevel int
	inputs                  [2][]*manifest.TableMeta // startLevel's, outputLevel's
	// bounds of the inputs (user keys), endInclusive unless the largest
	// bound is an exclusive range-tombstone sentinel.
	smallest, largest []byte
	largestExclusive  bool
	manual            bool
	// inPlace rewrites one table into its own level, applying the range
	// tombstones of the levels above (see compaction_deletion.go).
	inPlace bool
	// sliced marks an L0 compaction that moves only the user keys in
	// [sliceLo, sliceHi) (nil: unbounded) to the base level; the rest of
	// its L0 inputs is rewritten as one L0 table (see pickL0ToBaseLocked).
	sliced           bool
	sliceLo, sliceHi []byte
	reason           string
}

// intraL0 reports whether c merges L0 tables into one L0 table.
func (c *compaction) intraL0() bool { return c.startLevel == 0 && c.outputLevel == 0 }

// inSlice reports whether user key k goes to the output level: always,
// unless the compaction is sliced and k is outside its slice.
func (c *compaction) inSlice(k []byte) bool {
	if !c.sliced {
		return true
	}
	return (c.sliceLo == nil || bytes.Compare(k, c.sliceLo) >= 0) && (c.sliceHi == nil || bytes.Compare(k, c.sliceHi) < 0)
}

func (c *compaction) allInputs() []*manifest.TableMeta {
	return append(append([]*manifest.TableMeta(nil), c.inputs[0]...), c.inputs[1]...)
}

// levelTargets returns the target size of each level and the base level
// (where L0 compacts to). With dynamic level bytes (the default) the
// largest level's size sets the targets above it, each
// MaxBytesForLevelMultiplier times smaller, and the base level is the
// highest one whose target is still above MaxBytesForLevelBase; data skips
// the empty levels above it, so most of it sits in the last level
// (RocksDB's level_compaction_dynamic_level_bytes).
//
// The base level is never below the first non-empty level: L0 must not
// compact underneath data in the levels above, or an older version of a
// key would end up above a newer one. (The base moves down as data grows
// and could move up when a purge shrinks the last level.)
func (d *DB) levelTargets(v *manifest.Version) (targets [manifest.NumLevels]float64, base int) {
	o := d.opts
	last := o.NumLevels - 1
	mult := o.MaxBytesForLevelMultiplier
	for i := range targets {
		targets[i] = math.Inf(1)
	}
	if o.StaticLevelBytes {
		t := float64(o.MaxBytesForLevelBase)
		for level := 1; level <= last; level++ {
			targets[level] = t
			t *= mult
		}
		return targets, 1
	}
	var maxBytes uint64
	first := 0
	for level := 1; level <= last; level++ {
		b := v.LevelBytes(level)
		maxBytes = max(maxBytes, b)
		if first == 0 && v.NumTables(level) > 0 {
			first = level
		}
	}
	base = last
	for size := float64(maxBytes); base > 1 && size > float64(o.MaxBytesForLevelBase); size /= mult {
		base--
	}
	if first > 0 && first < base {
		base = first
	}
	t := float64(maxBytes)
	for level := last - 1; level >= base; level-- {
		t /= mult
		targets[level] = max(t, float64(o.MaxBytesForLevelBase)/mult)
	}
	return targets, base
}

// levelScores returns each level's compaction score.
func (d *DB) levelScores(v *manifest.Version) [manifest.NumLevels]float64 {
	var scores [manifest.NumLevels]float64
	targets, _ := d.levelTargets(v)
	scores[0] = float64(v.NumTables(0)) / float64(d.opts.Level0FileNumCompactionTrigger)
	for level := 1; level < d.opts.NumLevels-1; level++ {
		var bytes uint64
		for _, t := range v.Tables(level) {
			if !t.IsCompacting() {
				bytes += t.Size
			}
		}
		scores[level] = float64(bytes) / targets[level]
	}
	return scores
}

// pickCompactionLocked chooses the most urgent compaction, or nil. It
// marks the chosen inputs as compacting. d.mu must be held.
func (d *DB) pickCompactionLocked(v *manifest.Version) *compaction {
	scores := d.levelScores(v)
	_, baseLevel := d.levelTargets(v)
	if c := d.pickDeletionCompactionLocked(v); c != nil {
		return c
	}
	// Levels by descending score; a level whose tables are busy gives way
	// to the next one.
	order := make([]int, 0, d.opts.NumLevels-1)
	for level := 0; level < d.opts.NumLevels-1; level++ {
		if scores[level] >= 1 {
			order = append(order, level)
		}
	}
	sort.Slice(order, func(i, j int) bool { return scores[order[i]] > scores[order[j]] })
	for _, level := range order {
		if c := d.pickLevelLocked(v, level, baseLevel); c != nil {
			return c
		}
	}
	return d.pickIdleCompactionLocked(v, baseLevel)
}

// pickLevelLocked picks a compaction out of level, or nil if its tables
// are busy.
func (d *DB) pickLevelLocked(v *manifest.Version, level, baseLevel int) *compaction {
	if level == 0 {
		return d.pickL0Locked(v, baseLevel)
	}
	// One table of the level, round-robin after the compact pointer.
	tables := v.Tables(level)
	ptr := v.CompactPointer(level)
	start := 0
	if ptr.UserKey != nil {
		for start < len(tables) && bytes.Compare(tables[start].Smallest.UserKey, ptr.UserKey) <= 0 {
			start++
		}
	}
	for i := range tables {
		t := tables[(start+i)%len(tables)]
		if t.IsCompacting() {
			continue
		}
		c := &compaction{startLevel: level, outputLevel: level + 1, reason: "level size"}
		c.inputs[0] = []*manifest.TableMeta{t}
		if c := d.finishPick(v, c); c != nil {
			return c
		}
	}
	return nil
}

func anyCompacting(ts []*manifest.TableMeta) bool {
	for _, t := range ts {
		if t.IsCompacting() {
			return true
		}
	}
	return false
}

// finishPick adds the output level's overlapping tables and marks the
// inputs compacting; nil if any of them is already being compacted.
func (d *DB) finishPick(v *manifest.Version, c *compaction) *compaction {
	c.setBounds()
	c.inputs[1] = v.Overlaps(c.outputLevel, c.smallest, c.largest, !c.largestExclusive)
	if anyCompacting(c.inputs[1]) || anyCompacting(c.inputs[0]) {
		return nil
	}
	c.setBounds()
	for _, t := range c.allInputs() {
		t.SetCompacting(true)
	}
	return c
}

// setBounds computes the user-key bounds of the inputs.
func (c *compaction) setBounds() {
	first := true
	for _, t := range c.allInputs() {
		if first || bytes.Compare(t.Smallest.UserKey, c.smallest) < 0 {
			c.smallest = t.Smallest.UserKey
		}
		excl := t.Largest.Trailer == manifest.RangeDeleteSentinel
		if cmp := bytes.Compare(t.Largest.UserKey, c.largest); first || cmp > 0 || cmp == 0 && !excl {
			c.largest, c.largestExclusive = t.Largest.UserKey, excl
		}
		first = false
	}
}

package lsm

import (
	"bytes"
	"math"

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
	reason  string
}

func (c *compaction) allInputs() []*manifest.TableMeta {
	return append(append([]*manifest.TableMeta(nil), c.inputs[0]...), c.inputs[1]...)
}

// levelTargets returns the target size of each level and the base level
// (where L0 compacts to). With dynamic level bytes (the default) the last
// level's size sets the targets above it, each MaxBytesForLevelMultiplier
// times smaller, and the base level is the highest one whose target is at
// least MaxBytesForLevelBase/multiplier; data skips the empty levels above
// it, so most data sits in the last level (RocksDB's
// level_compaction_dynamic_level_bytes).
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
	for level := 1; level <= last; level++ {
		maxBytes = max(maxBytes, v.LevelBytes(level))
	}
	base = last
	if maxBytes == 0 {
		return targets, base
	}
	size := float64(maxBytes)
	targets[last] = size
	for base > 1 && size > float64(o.MaxBytesForLevelBase) {
		size /= mult
		base--
		targets[base] = size
	}
	for level := base + 1; level < last; level++ {
		targets[level] = targets[level-1] * mult
	}
	targets[base] = max(targets[base], float64(o.MaxBytesForLevelBase)/mult)
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
	best, bestScore := -1, 1.0
	for level := 0; level < d.opts.NumLevels-1; level++ {
		if scores[level] >= bestScore {
			best, bestScore = level, scores[level]
		}
	}
	if best < 0 {
		return nil
	}
	if best == 0 {
		l0 := v.Tables(0)
		if anyCompacting(l0) {
			return nil
		}
		c := &compaction{startLevel: 0, outputLevel: baseLevel, reason: "L0 tables"}
		c.inputs[0] = append([]*manifest.TableMeta(nil), l0...)
		return d.finishPick(v, c)
	}
	// One table of the level, round-robin after the compact pointer.
	tables := v.Tables(best)
	ptr := v.CompactPointer(best)
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
		c := &compaction{startLevel: best, outputLevel: best + 1, reason: "level size"}
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

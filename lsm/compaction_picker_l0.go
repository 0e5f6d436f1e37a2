package lsm

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
)

// L0 compactions do bounded work, so that each one can finish, and be
// recorded, before a crash-looping process is killed again:
//
//   - An L0→base compaction takes the OLDEST L0 tables, a contiguous run in
//     sequence-number order, and the base-level tables they overlap, while
//     the total stays within MaxCompactionBytes (at least one L0 table).
//     Every L0 table left behind is newer than every one taken, so newer
//     data never ends up below older data, whatever the key ranges.
//   - When even the oldest table's overlap is too large (L0 tables of a
//     bookie span every active ledger, so their overlap is the whole base
//     level), the compaction is sliced: it takes the oldest L0 tables (up to
//     half the bound) and a run of base-level tables (the rest), moves the
//     L0 data of that key slice down, and rewrites the L0 data outside the
//     slice as one L0 table with the same sequence numbers (still the oldest
//     in L0). The next slice starts where this one ended (the L0 compact
//     pointer, kept in the manifest), so successive steps sweep the key
//     space. Each step is one manifest edit: a crash loses at most the step
//     it interrupted.
//   - An intra-L0 compaction merges a contiguous run of L0 tables into one
//     L0 table when the base level is busy (RocksDB's and Pebble's
//     intra-L0), and first of all when L0 has reached the slowdown trigger:
//     it costs only L0 bytes and brings the table count down fastest.
//
// L0 tables hold disjoint sequence-number ranges (flushes, ingests and
// these outputs each take a contiguous range), and L0 is ordered by them
// (manifest.Version), so every L0 output takes its inputs' place.

// minIntraL0Count is the fewest tables an intra-L0 compaction merges (as
// Pebble's): fewer would rewrite much to remove little.
const minIntraL0Count = 4

// pickL0Locked picks a compaction out of L0, or nil if none can run now.
func (d *DB) pickL0Locked(v *manifest.Version, baseLevel int) *compaction {
	l0 := v.Tables(0) // newest first
	if len(l0) >= d.opts.Level0SlowdownWritesTrigger {
		if c := d.pickIntraL0Locked(l0); c != nil {
			return c
		}
	}
	// The oldest tables no compaction holds, oldest first. If the oldest
	// table is held (an L0 compaction runs), nothing can go to the base
	// level before it finishes.
	var oldest []*manifest.TableMeta
	for i := len(l0) - 1; i >= 0 && !l0[i].IsCompacting(); i-- {
		oldest = append(oldest, l0[i])
	}
	if len(oldest) > 0 {
		if c := d.pickL0ToBaseLocked(v, oldest, baseLevel); c != nil {
			return c
		}
	}
	return d.pickIntraL0Locked(l0)
}

// pickL0ToBaseLocked picks an L0→base compaction of a prefix of oldest
// (idle L0 tables, oldest first), sliced if the prefix's overlap does not
// fit in MaxCompactionBytes; nil if the base tables it needs are busy.
func (d *DB) pickL0ToBaseLocked(v *manifest.Version, oldest []*manifest.TableMeta, baseLevel int) *compaction {
	limit := uint64(d.opts.MaxCompactionBytes)
	c := &compaction{startLevel: 0, outputLevel: baseLevel, reason: "L0 tables"}
	var l0Bytes, cost uint64
	for _, t := range oldest {
		trial := &compaction{}
		trial.inputs[0] = append(c.inputs[0][:len(c.inputs[0]):len(c.inputs[0])], t)
		trial.setBounds()
		trialCost := l0Bytes + t.Size + tablesSize(v.Overlaps(baseLevel, trial.smallest, trial.largest, !trial.largestExclusive))
		if len(c.inputs[0]) > 0 && trialCost > limit {
			break
		}
		c.inputs[0], l0Bytes, cost = trial.inputs[0], l0Bytes+t.Size, trialCost
	}
	if cost > limit {
		if s := d.pickL0SliceLocked(v, oldest, baseLevel); s != nil {
			return s
		}
	}
	return d.finishPick(v, c)
}

// pickL0SliceLocked picks a sliced L0→base compaction: the oldest L0
// tables up to half of MaxCompactionBytes (at least one), and the
// base-level tables they overlap from the L0 compact pointer on, up to the
// rest of the bound (at least one). nil if there is nothing to slice or the
// first base table is busy.
func (d *DB) pickL0SliceLocked(v *manifest.Version, oldest []*manifest.TableMeta, baseLevel int) *compaction {
	limit := uint64(d.opts.MaxCompactionBytes)
	c := &compaction{startLevel: 0, outputLevel: baseLevel, sliced: true, reason: "L0 tables (slice)"}
	var l0Bytes uint64
	for _, t := range oldest {
		if len(c.inputs[0]) > 0 && l0Bytes+t.Size > limit/2 {
			break
		}
		c.inputs[0] = append(c.inputs[0], t)
		l0Bytes += t.Size
	}
	c.setBounds()
	overlap := v.Overlaps(baseLevel, c.smallest, c.largest, !c.largestExclusive)
	if len(overlap) < 2 {
		return nil
	}
	// The slice starts at the first overlapping table not wholly before the
	// pointer; past the last one, the sweep starts over.
	ptr := v.CompactPointer(0).UserKey
	s := 0
	if len(ptr) > 0 {
		for s < len(overlap) && tableBeforeKey(overlap[s], ptr) {
			s++
		}
		if s == len(overlap) {
			s, ptr = 0, nil
		}
	}
	if len(ptr) > 0 {
		c.sliceLo = ptr
		if bytes.Compare(overlap[s].Smallest.UserKey, ptr) < 0 {
			c.sliceLo = overlap[s].Smallest.UserKey // a table moved across the pointer
		}
	}
	e := s
	var baseBytes uint64
	for e < len(overlap) && !overlap[e].IsCompacting() && (e == s || l0Bytes+baseBytes+overlap[e].Size <= limit) {
		baseBytes += overlap[e].Size
		e++
	}
	if e == s {
		return nil
	}
	// The slice ends where the next base-level table starts, so that no
	// output overlaps a table left in the level.
	level := v.Tables(baseLevel)
	for i, t := range level {
		if t == overlap[e-1] && i+1 < len(level) {
			c.sliceHi = level[i+1].Smallest.UserKey
		}
	}
	c.inputs[1] = append([]*manifest.TableMeta(nil), overlap[s:e]...)
	if e == len(overlap) {
		// The L0 inputs have no data at or past the next table: wrap.
		c.sliceHi = nil
	}
	c.setBounds()
	for _, t := range c.allInputs() {
		t.SetCompacting(true)
	}
	return c
}

// pickIntraL0Locked picks an intra-L0 compaction of the oldest run of at
// least minIntraL0Count idle, contiguous L0 tables (l0 newest first) that
// fits in MaxCompactionBytes, or nil.
func (d *DB) pickIntraL0Locked(l0 []*manifest.TableMeta) *compaction {
	limit := uint64(d.opts.MaxCompactionBytes)
	for i := len(l0) - 1; i >= 0; {
		if l0[i].IsCompacting() {
			i--
			continue
		}
		var run []*manifest.TableMeta
		var size uint64
		for i >= 0 && !l0[i].IsCompacting() && (len(run) == 0 || size+l0[i].Size <= limit) {
			run = append(run, l0[i])
			size += l0[i].Size
			i--
		}
		if len(run) >= minIntraL0Count {
			c := &compaction{startLevel: 0, outputLevel: 0, reason: "intra-L0"}
			c.inputs[0] = run
			c.setBounds()
			for _, t := range run {
				t.SetCompacting(true)
			}
			return c
		}
		// A table that did not fit starts the next run.
	}
	return nil
}

// tableBeforeKey reports whether every key of t is below user key k.
func tableBeforeKey(t *manifest.TableMeta, k []byte) bool {
	c := bytes.Compare(t.Largest.UserKey, k)
	return c < 0 || c == 0 && t.Largest.Trailer == manifest.RangeDeleteSentinel
}

func tablesSize(ts []*manifest.TableMeta) uint64 {
	var n uint64
	for _, t := range ts {
		n += t.Size
	}
	return n
}

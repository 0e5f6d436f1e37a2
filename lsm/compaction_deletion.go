package lsm

import (
	"bytes"
	"hash/fnv"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
)

// Deleted ledgers' space comes back without a manual compaction:
//
// A purge writes one range tombstone per ledger. The tombstones hide the
// ledgers' entries at once, but the entries' bytes stay in tables below
// until a compaction reads them. Waiting for ordinary compactions could
// take forever (the bottom level is only rewritten when the level above
// overflows), and compacting everything after each purge pins a CPU
// (BookKeeper #2686/#3144). Instead, after the tombstones change, a
// background scan estimates for each table below them how much of its
// data they cover (from the table's index: data blocks whose whole key
// range lies in one tombstone newer than the table). A table at least
// RangeDeletionCompactionRatio covered is rewritten in place, alone,
// dropping what the tombstones delete; the tombstones stay where they are
// for the tables they still cover. Cost: one table's rewrite per mostly
// deleted table, never a full compaction.

// coverageState remembers the scan's results. Guarded by d.mu.
type coverageState struct {
	gen       uint64             // fingerprint of the tombstone-bearing tables scanned against
	fractions map[uint64]float64 // table → covered fraction, for gen
	scanning  bool
}

// tombstoneGen fingerprints the set of tables holding range tombstones.
func tombstoneGen(v *manifest.Version) uint64 {
	h := fnv.New64a()
	var buf [9]byte
	for level := range manifest.NumLevels {
		for _, t := range v.Tables(level) {
			if t.RangeDeletions > 0 {
				buf[0] = byte(level)
				for i := 0; i < 8; i++ {
					buf[1+i] = byte(t.FileNum >> (8 * i))
				}
				h.Write(buf[:])
			}
		}
	}
	return h.Sum64()
}

// tombstonesAbove returns the tombstones of the tables above level.
func (d *DB) tombstonesAbove(v *manifest.Version, level int) (*rangedel.Set, error) {
	var ts []rangedel.Tombstone
	for l := 0; l < level; l++ {
		for _, t := range v.Tables(l) {
			if t.RangeDeletions == 0 {
				continue
			}
			h, err := d.tableCache.get(t.FileNum)
			if err != nil {
				return nil, err
			}
			for _, f := range h.tombstones.Fragments() {
				for _, s := range f.Seqs {
					ts = append(ts, rangedel.Tombstone{Start: f.Start, End: f.End, Seq: s})
				}
			}
			d.tableCache.release(h)
		}
	}
	if len(ts) == 0 {
		return nil, nil
	}
	return rangedel.BuildSet(ts), nil
}

// scanCoverage computes the covered fraction of every table below a
// tombstone that it overlaps. It does I/O (index partitions) and runs
// without d.mu.
func (d *DB) scanCoverage(v *manifest.Version) map[uint64]float64 {
	fractions := map[uint64]float64{}
	for level := 1; level < manifest.NumLevels; level++ {
		set, err := d.tombstonesAbove(v, level)
		if err != nil || set == nil {
			continue
		}
		frags := set.Fragments()
		for _, t := range v.Tables(level) {
			if !overlapsAny(frags, t) {
				continue
			}
			h, err := d.tableCache.get(t.FileNum)
			if err != nil {
				continue
			}
			var it rangedel.Iter
			it.Init(set)
			deleted := func(k []byte) bool {
				f := it.SeekGE(k)
				return f != nil && f.Contains(k) && f.Seqs[0] > t.LargestSeqNum
			}
			// A block counts as covered when both ends are deleted, maybe
			// by different tombstones: one ledger's tombstone ends before
			// the next ledger's starts (the gap holds only negative entry
			// ids), and blocks often span two ledgers. It is an estimate
			// for choosing tables; the rewrite decides key by key.
			covered, total, err := h.reader.CoveredBytes(func(lo, hi []byte) bool {
				return deleted(lo) && deleted(hi)
			})
			d.tableCache.release(h)
			if err != nil || total == 0 {
				continue
			}
			fractions[t.FileNum] = float64(covered) / float64(total)
		}
	}
	return fractions
}

func overlapsAny(frags []rangedel.Fragment, t *manifest.TableMeta) bool {
	for _, f := range frags {
		if bytes.Compare(f.Start, t.Largest.UserKey) <= 0 && bytes.Compare(t.Smallest.UserKey, f.End) < 0 {
			return true
		}
	}
	return false
}

// maybeScanCoverageLocked starts a coverage scan when the tombstones
// changed since the last one. d.mu must be held.
func (d *DB) maybeScanCoverageLocked(v *manifest.Version) {
	gen := tombstoneGen(v)
	if d.mu.coverage.scanning || gen == d.mu.coverage.gen || d.mu.closed {
		return
	}
	d.mu.coverage.scanning = true
	v.Ref()
	d.bgWG.Add(1)
	go func() {
		defer d.bgWG.Done()
		fractions := d.scanCoverage(v)
		v.Unref()
		d.mu.Lock()
		d.mu.coverage.scanning = false
		d.mu.coverage.gen = gen
		d.mu.coverage.fractions = fractions
		d.maybeScheduleCompactionLocked()
		d.mu.cond.Broadcast()
		d.mu.Unlock()
	}()
}

// pickDeletionCompactionLocked returns an in-place rewrite of the most
// covered table at or above the ratio, or nil. d.mu must be held.
func (d *DB) pickDeletionCompactionLocked(v *manifest.Version) *compaction {
	if len(d.mu.snapshots) > 0 {
		// A rewrite must keep what the snapshots see, and the table would
		// come out just as covered: picked again, forever. Wait for them.
		return nil
	}
	if d.mu.coverage.gen != tombstoneGen(v) {
		d.maybeScanCoverageLocked(v)
		return nil
	}
	// A table of the last level holding tombstones: they delete only
	// entries of that table, which an in-place rewrite drops with them.
	last := d.opts.NumLevels - 1
	for _, t := range v.Tables(last) {
		if t.RangeDeletions > 0 && !t.IsCompacting() {
			t.SetCompacting(true)
			c := &compaction{startLevel: last, outputLevel: last, reason: "range deletions at the last level", inPlace: true}
			c.inputs[0] = []*manifest.TableMeta{t}
			c.setBounds()
			return c
		}
	}
	var best *manifest.TableMeta
	bestLevel, bestFrac := 0, d.opts.RangeDeletionCompactionRatio
	for level := 1; level < manifest.NumLevels; level++ {
		for _, t := range v.Tables(level) {
			if f, ok := d.mu.coverage.fractions[t.FileNum]; ok && f >= bestFrac && !t.IsCompacting() {
				best, bestLevel, bestFrac = t, level, f
			}
		}
	}
	if best == nil {
		return nil
	}
	delete(d.mu.coverage.fractions, best.FileNum)
	best.SetCompacting(true)
	c := &compaction{startLevel: bestLevel, outputLevel: bestLevel, reason: "range deletions", inPlace: true}
	c.inputs[0] = []*manifest.TableMeta{best}
	c.setBounds()
	return c
}

// externalTombstones returns, for an in-place rewrite, the tombstones of
// the levels above in version v that may delete the table's entries.
func (d *DB) externalTombstones(c *compaction, v *manifest.Version) ([]rangedel.Tombstone, error) {
	set, err := d.tombstonesAbove(v, c.startLevel)
	if err != nil || set == nil {
		return nil, err
	}
	var ts []rangedel.Tombstone
	var it rangedel.Iter
	it.Init(set)
	for f := it.SeekGE(c.smallest); f != nil && bytes.Compare(f.Start, c.largest) <= 0; f = it.Next() {
		for _, s := range f.Seqs {
			ts = append(ts, rangedel.Tombstone{Start: f.Start, End: f.End, Seq: s})
		}
	}
	return ts, nil
}

package lsm

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
)

// subcompactionRanges splits a compaction into key ranges to merge in
// parallel (RocksDB's subcompactions), or returns nil to run it whole. It
// splits an ordinary compaction into a level (not L0, not sliced, not an
// in-place rewrite) whose input is at least two TargetFileSizeBase and
// holds at least two tables of that level, into up to MaxSubcompactions
// ranges whose boundaries are the smallest keys of those tables, chosen
// so that each range holds about as many of their bytes: the tables of a
// level do not overlap and are cut between user keys, so a boundary splits
// no key's versions, and the data coming from above (a bookie's L0 tables
// span every active ledger) spreads as the level's does.
func (d *DB) subcompactionRanges(c *compaction) []keyRange {
	n := d.opts.MaxSubcompactions
	below := c.inputs[1]
	if n <= 1 || c.sliced || c.inPlace || c.outputLevel == 0 || c.startLevel == c.outputLevel || len(below) < 2 {
		return nil
	}
	var total, belowBytes uint64
	for _, t := range c.allInputs() {
		total += t.Size
	}
	for _, t := range below {
		belowBytes += t.Size
	}
	if total < 2*uint64(d.opts.TargetFileSizeBase) || belowBytes == 0 {
		return nil
	}
	n = min(n, len(below))
	// Boundary k goes at the start of the table where the bytes before it
	// first reach k/n of the level's.
	var bounds [][]byte
	var before uint64
	k := 1
	for i, t := range below {
		if i > 0 && before*uint64(n) >= uint64(k)*belowBytes {
			bounds = append(bounds, t.Smallest.UserKey)
			if k++; k == n {
				break
			}
		}
		before += t.Size
	}
	if len(bounds) == 0 {
		return nil
	}
	ranges := make([]keyRange, 0, len(bounds)+1)
	var lo []byte
	for _, b := range bounds {
		ranges = append(ranges, keyRange{lo: lo, hi: b})
		lo = b
	}
	return append(ranges, keyRange{lo: lo})
}

// splitIntoEmptyLevel splits a compaction of L0 tables into an empty level
// of at least two TargetFileSizeBase, which subcompactionRanges cannot (no
// table below to take boundaries from), into up to MaxSubcompactions ranges
// that cut the largest input's data into parts of about equal bytes
// (sstable.Reader.SplitKeys, from its index). This is a load's first
// compaction, where every L0 table spans every ledger written, so any one
// of them spreads as the others do. A range bound is a user key: it splits
// no key's versions. A manual compaction is not split: it writes the empty
// level in one stream, cut at the target size only, which leaves the
// tables an ingest of the same entries builds (benchmark's
// TestIngestedReadsLikeCompacted). It returns nil to run the compaction
// whole (also if the index cannot be read: the merge will meet the same
// error).
func (d *DB) splitIntoEmptyLevel(c *compaction, job *compactionJob) []keyRange {
	n := d.opts.MaxSubcompactions
	if n <= 1 || c.manual || c.sliced || c.inPlace || c.startLevel != 0 || c.outputLevel == 0 || len(c.inputs[1]) > 0 {
		return nil
	}
	var total uint64
	largest := -1
	for i, t := range job.tables {
		total += t.Size
		if largest < 0 || t.Size > job.tables[largest].Size {
			largest = i
		}
	}
	if largest < 0 || total < 2*uint64(d.opts.TargetFileSizeBase) {
		return nil
	}
	bounds, err := job.handles[largest].reader.SplitKeys(n)
	if err != nil || len(bounds) == 0 {
		return nil
	}
	ranges := make([]keyRange, 0, len(bounds)+1)
	var lo []byte
	for _, b := range bounds {
		ranges = append(ranges, keyRange{lo: lo, hi: b})
		lo = b
	}
	return append(ranges, keyRange{lo: lo})
}

// overlapsRange reports whether table t may hold user keys in r.
func overlapsRange(t *manifest.TableMeta, r keyRange) bool {
	return (r.hi == nil || bytes.Compare(t.Smallest.UserKey, r.hi) < 0) &&
		(r.lo == nil || bytes.Compare(t.Largest.UserKey, r.lo) >= 0)
}

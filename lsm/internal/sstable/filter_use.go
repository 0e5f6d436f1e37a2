package sstable

import "sync/atomic"

// filterUse decides, for one table, whether a point lookup whose filter
// block is not in memory (neither pinned nor cached) should read it from
// the file, or go straight to the data block.
//
// A filter only pays when the key is absent: then it saves reading a data
// block. When the key is present the data block is read anyway, and reading
// the filter block first is pure cost. BookKeeper's gets are almost all of
// entries that exist, so at a cache too small for the filters, reading an
// uncached filter partition before every data block made the partitioned
// layout slower than the full one (whose filter is pinned beyond the
// cache's capacity): 1.0 filter reads per get at a 2 MiB cache on 5M keys.
// RocksDB's answer is a static switch (optimize_filters_for_hits: no
// filters in the last level); this one adapts to what lookups of this table
// find.
//
// The score is a cost balance in units of one filter block read, updated by
// each lookup whose filter block was not in memory, by what the filter
// saved (or would have saved) it:
//   - filterSavedRead (+16): the key was absent and its data block not
//     cached, so the filter spares a data block read: a 64 KiB data block
//     (the default size) costs about 16 reads of a 4 KiB filter partition;
//   - filterSavedSearch (+1): the key was absent but its data block cached,
//     so the filter spares only a block search (~0.5 µs against a 60 ns
//     probe); counted because a partition read once is usually pinned
//     (pinFilterPartition) and then costs nothing more;
//   - filterSavedNothing (−1): the key was present (or the filter answered
//     "maybe"): the data block is read anyway.
//
// A lookup uses a filter (reading it if it is not in memory) only while
// the score is positive, so with uncached data, filters are used while more
// than about 1 lookup in 17 finds its key absent, and with cached data,
// while more than half do. While the score is zero no lookup touches a
// filter or writes the score, so the hit path of a table whose keys are
// found writes no shared memory; filter partitions pinned while it was
// positive are unpinned then. Lookups that use a filter in memory are
// scored one in inMemorySampleMask+1 times, so that the score falls when
// absent keys stop without a contended CAS per lookup.
type filterUse struct {
	score atomic.Int32
}

// What a filter saved a lookup, in filter block reads.
const (
	filterSavedRead    = 16
	filterSavedSearch  = 1
	filterSavedNothing = -1
	// filterScoreMax bounds how long a burst of absent keys keeps filters
	// in use once lookups find their keys again: 1024 scored lookups.
	filterScoreMax = 1024
	// inMemorySampleMask: one lookup in 8 that uses a filter in memory is
	// scored.
	inMemorySampleMask = 7
)

// worthReading reports whether an uncached filter block should be read.
func (u *filterUse) worthReading() bool { return u.score.Load() > 0 }

// record adds the outcome of a lookup whose filter block was not in memory
// (filterSavedRead, filterSavedSearch or filterSavedNothing).
func (u *filterUse) record(saved int32) {
	for {
		old := u.score.Load()
		next := min(max(old+saved, 0), filterScoreMax)
		if next == old || u.score.CompareAndSwap(old, next) {
			return
		}
	}
}

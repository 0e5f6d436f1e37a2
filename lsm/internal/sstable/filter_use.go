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
// The score is a cost balance in units of one filter block read: +savedWeight
// for a lookup where the filter saved (or would have saved) a data block read
// from the file — the key was absent and its data block not cached — and −1
// for one where it did not. A lookup reads an uncached filter while the
// score is positive, so filters are read when more than about 1 in
// savedWeight+1 lookups would be saved by them: a data block (64 KiB by
// default) costs about 16 filter partitions (4 KiB) to read. Lookups whose
// filter block is in memory always use it and leave the score alone, so the
// hit path never writes shared memory.
type filterUse struct {
	score atomic.Int32
}

const (
	filterSavedWeight = 16
	// filterScoreMax bounds how long a burst of absent keys keeps filters
	// in use once lookups find their keys again: 1024 lookups.
	filterScoreMax = 1024
)

// worthReading reports whether an uncached filter block should be read.
func (u *filterUse) worthReading() bool { return u.score.Load() > 0 }

// record adds the outcome of a lookup whose filter block was not in memory:
// saved is true when the filter ruled the key out, or when the lookup
// skipped the filter and then read a data block from the file that did not
// hold the key.
func (u *filterUse) record(saved bool) {
	for {
		old := u.score.Load()
		next := old - 1
		if saved {
			next = min(old+filterSavedWeight, filterScoreMax)
		}
		next = max(next, 0)
		if next == old || u.score.CompareAndSwap(old, next) {
			return
		}
	}
}

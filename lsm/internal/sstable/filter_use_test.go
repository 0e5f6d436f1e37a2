package sstable

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/stretchr/testify/require"
)

func TestFilterUseScore(t *testing.T) {
	var u filterUse
	require.False(t, u.worthReading(), "a new table reads no uncached filter")
	u.record(false)
	require.Zero(t, u.score.Load(), "the score does not go below zero")
	u.record(true)
	require.True(t, u.worthReading())
	for range filterSavedWeight - 1 {
		u.record(false)
	}
	require.True(t, u.worthReading())
	u.record(false)
	require.False(t, u.worthReading(), "one saved read pays for %d wasted filter reads", filterSavedWeight)
	for range 1000 {
		u.record(true)
	}
	require.Equal(t, int32(filterScoreMax), u.score.Load())
	for range filterScoreMax - 1 {
		u.record(false)
	}
	require.True(t, u.worthReading())
	u.record(false)
	require.False(t, u.worthReading(), "a burst of absent keys is forgotten after filterScoreMax found ones")
}

// TestColdFiltersFollowLookups checks the policy of filter_use.go on both
// layouts with a cache too small to pin the filters: lookups that find
// their keys do not read uncached filter blocks; absent keys make the table
// read them, after which the filter rules absent keys out without data
// reads; found keys turn reading off again; AlwaysLoadFilters reads them
// regardless.
func TestColdFiltersFollowLookups(t *testing.T) {
	for _, layout := range []Layout{LayoutPartitioned, LayoutFull} {
		t.Run(layout.String(), func(t *testing.T) {
			fs, dir := tempFS(t)
			path := filepath.Join(dir, "t.sst")
			const ledgers, entries = 20, 5000
			// Even entry ids only: the odd ones are absent keys spread over
			// every data block, as a lookup of a missing entry would be.
			kvs := entryLocationKVs(ledgers, entries)
			for i := range kvs {
				kvs[i].key.UserKey = entryKey(uint64(i/entries), uint64(2*(i%entries)))
			}
			writeTable(t, fs, path, WriterOptions{Layout: layout, BlockSize: 4096, Compression: CompressionNone}, kvs, nil)
			rng := rand.New(rand.NewSource(3))
			get := func(r *Reader, present bool, stats *Stats) {
				l, e := rng.Intn(ledgers), 2*rng.Intn(entries)
				if !present {
					e++
				}
				lk := MakeLookup(entryKey(uint64(l), uint64(e)), base.SeqNumMax)
				_, _, found, err := r.Get(nil, &lk, stats)
				require.NoError(t, err)
				require.Equal(t, present, found, "ledger %d entry %d", l, e)
			}
			newReader := func(always bool) *Reader {
				// 64 KiB in one shard: the 125 KB of filters are neither
				// pinned at open nor all cached.
				c, err := cache.New(cache.Options{Capacity: 64 << 10, NumShardBits: 0})
				require.NoError(t, err)
				r := openTableWith(t, fs, path, ReaderOptions{Cache: c, AlwaysLoadFilters: always})
				t.Cleanup(func() { _ = r.Close() })
				return r
			}

			r := newReader(false)
			var found Stats
			for range 2000 {
				get(r, true, &found)
			}
			require.Zero(t, found.FilterReads, "found keys: no filter reads")
			require.Zero(t, found.FilterChecks)
			require.EqualValues(t, 2000, found.FilterSkips)

			var absent Stats
			for range 2000 {
				get(r, false, &absent)
			}
			require.NotZero(t, absent.FilterReads, "absent keys: filters are read")
			require.Greater(t, absent.FilterNegatives, int64(1900), "and rule the keys out")
			require.Less(t, absent.DataReads, int64(100), "without data reads: %+v", absent)

			var again Stats
			for range 3000 {
				get(r, true, &again)
			}
			require.LessOrEqual(t, again.FilterReads, int64(filterScoreMax), "found keys again: filter reads stop once the absent keys are forgotten: %+v", again)
			if layout == LayoutPartitioned {
				require.NotZero(t, again.FilterSkips, "%+v", again)
			} else {
				require.Zero(t, again.FilterReads, "the full filter, once read, stays in memory and is used: %+v", again)
			}

			var always Stats
			ra := newReader(true)
			for range 2000 {
				get(ra, true, &always)
			}
			require.Zero(t, always.FilterSkips)
			require.EqualValues(t, 2000, always.FilterChecks, fmt.Sprintf("%+v", always))
			require.NotZero(t, always.FilterReads)
		})
	}
}

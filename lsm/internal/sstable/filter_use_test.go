package sstable

import (
	"bytes"
	"fmt"
	"math/rand"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/stretchr/testify/require"
)

func TestFilterUseScore(t *testing.T) {
	var u filterUse
	require.False(t, u.worthReading(), "a new table reads no uncached filter")
	u.record(filterSavedNothing)
	require.Zero(t, u.score.Load(), "the score does not go below zero")
	u.record(filterSavedRead)
	require.True(t, u.worthReading())
	for range filterSavedRead - 1 {
		u.record(filterSavedNothing)
	}
	require.True(t, u.worthReading())
	u.record(filterSavedNothing)
	require.False(t, u.worthReading(), "one saved read pays for %d wasted filter reads", filterSavedRead)
	u.record(filterSavedSearch)
	require.True(t, u.worthReading())
	u.record(filterSavedNothing)
	require.False(t, u.worthReading(), "a saved search pays for one wasted filter read")
	for range 1000 {
		u.record(filterSavedRead)
	}
	require.Equal(t, int32(filterScoreMax), u.score.Load())
	for range filterScoreMax - 1 {
		u.record(filterSavedNothing)
	}
	require.True(t, u.worthReading())
	u.record(filterSavedNothing)
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
			kvs := evenEntryKVs(ledgers, entries)
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
				c, err := cache.New(cache.Options{Capacity: 64 << 10, NumShardBits: cache.OneShard})
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

			// Found keys again: the score falls back to zero (lookups that
			// use a filter in memory are scored one in eight times), and
			// then no lookup touches a filter, cached or not.
			var decay Stats
			for range 12000 {
				get(r, true, &decay)
			}
			require.NotZero(t, decay.FilterSkips, "%+v", decay)
			var settled Stats
			for range 1000 {
				get(r, true, &settled)
			}
			require.Zero(t, settled.FilterChecks+settled.FilterReads, "%+v", settled)
			require.EqualValues(t, 1000, settled.FilterSkips)

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

// TestFilterPartitionsPinnedOnFirstRead: in a cache with room, a
// partitioned table pins no filter partition at open and none while its
// lookups find their keys; absent keys make it read partitions, which it
// pins, so that later lookups read none and make no filter cache lookups;
// once lookups find their keys again it unpins them. Close gives the
// pinned bytes back.
func TestFilterPartitionsPinnedOnFirstRead(t *testing.T) {
	fs, dir := tempFS(t)
	path := filepath.Join(dir, "t.sst")
	const ledgers, entries = 20, 2000
	kvs := evenEntryKVs(ledgers, entries)
	props := writeTable(t, fs, path, WriterOptions{BlockSize: 4096, MetadataBlockSize: 512}, kvs, nil)
	require.Greater(t, props.FilterPartitions, uint64(10))
	c, err := cache.New(cache.Options{Capacity: 16 << 20, NumShardBits: 2})
	require.NoError(t, err)
	r := openTable(t, fs, path, c)
	require.NotNil(t, r.filterSlots)
	atOpen := c.PinnedUsage()
	get := func(i int, present bool, stats *Stats) {
		e := uint64(2 * (i % entries))
		if !present {
			e++
		}
		l := MakeLookup(entryKey(uint64(i%ledgers), e), base.SeqNumMax)
		_, _, found, err := r.Get(nil, &l, stats)
		require.NoError(t, err)
		require.Equal(t, present, found)
	}
	var found Stats
	for i := range 5000 {
		get(i*7919, true, &found)
	}
	require.Zero(t, found.FilterReads)
	require.Equal(t, atOpen, c.PinnedUsage(), "no filter partition pinned by lookups of present keys")

	var first Stats
	for i := range 5000 {
		get(i*7919, false, &first)
	}
	require.LessOrEqual(t, first.FilterReads, int64(props.FilterPartitions), "each partition read at most once: %+v", first)
	require.Greater(t, c.PinnedUsage(), atOpen, "the partitions read are pinned")
	before := c.Metrics().Kinds[cache.KindFilter]
	var again Stats
	for i := range 5000 {
		get(i*7919, false, &again)
	}
	after := c.Metrics().Kinds[cache.KindFilter]
	require.Zero(t, again.FilterReads, "%+v", again)
	require.Greater(t, again.FilterNegatives, int64(4800))
	require.Equal(t, before.Hits+before.Misses, after.Hits+after.Misses, "pinned partitions need no cache lookup")

	// Present keys again: once the score is back at zero the partitions
	// are unpinned.
	var decay Stats
	for i := range 12000 {
		get(i*7919, true, &decay)
	}
	require.NotZero(t, decay.FilterSkips)
	require.Equal(t, atOpen, c.PinnedUsage(), "filter partitions unpinned when lookups find their keys again")
	require.NoError(t, r.Close())
	require.Zero(t, c.PinnedUsage())
}

// TestConcurrentLookupsWithFilterUse runs lookups of present and absent
// keys from several goroutines on both layouts, in a cache that pins
// partitions and in one that cannot, so that filter skipping, reading,
// pinning on first read and the score race with each other (run with
// -race). Every answer must match the table's contents.
func TestConcurrentLookupsWithFilterUse(t *testing.T) {
	const ledgers, entries = 10, 3000
	kvs := evenEntryKVs(ledgers, entries)
	for _, layout := range []Layout{LayoutPartitioned, LayoutFull} {
		fs, dir := tempFS(t)
		path := filepath.Join(dir, "t.sst")
		writeTable(t, fs, path, WriterOptions{Layout: layout, BlockSize: 2048, MetadataBlockSize: 256, Compression: CompressionNone}, kvs, nil)
		for _, capacity := range []int64{32 << 10, 16 << 20} {
			t.Run(fmt.Sprintf("%s/capacity=%d", layout, capacity), func(t *testing.T) {
				c, err := cache.New(cache.Options{Capacity: capacity, NumShardBits: 1})
				require.NoError(t, err)
				r := openTable(t, fs, path, c)
				var wg sync.WaitGroup
				errs := make(chan error, 4)
				for g := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := rand.New(rand.NewSource(int64(g)))
						for range 3000 {
							// Goroutines 0 and 1 look up mostly absent keys,
							// 2 and 3 present ones.
							present := rng.Intn(4) < g
							i := rng.Intn(len(kvs))
							key := kvs[i].key.UserKey
							if !present {
								key = entryKey(uint64(i/entries), uint64(2*(i%entries)+1))
							}
							l := MakeLookup(key, base.SeqNumMax)
							v, _, found, err := r.Get(nil, &l, nil)
							if err == nil && (found != present || present && !bytes.Equal(v, kvs[i].value)) {
								err = fmt.Errorf("key %x: found %v, want %v", key, found, present)
							}
							if err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				require.NoError(t, r.Close())
				require.Zero(t, c.PinnedUsage())
			})
		}
	}
}

// BenchmarkGetCached: point lookups of present and absent keys on a
// partitioned table whose blocks all fit in the cache, with filters read
// only while they pay (pinned on first read) and with AlwaysLoadFilters
// (pinned at open).
func BenchmarkGetCached(b *testing.B) {
	const ledgers, entries = 100, 2000
	kvs := evenEntryKVs(ledgers, entries)
	fs, dir := tempFS(b)
	path := filepath.Join(dir, "t.sst")
	writeTable(b, fs, path, WriterOptions{Compression: CompressionNone}, kvs, nil)
	for _, always := range []bool{false, true} {
		c, err := cache.New(cache.Options{Capacity: 256 << 20, NumShardBits: 6})
		require.NoError(b, err)
		r := openTableWith(b, fs, path, ReaderOptions{Cache: c, AlwaysLoadFilters: always})
		for _, present := range []bool{true, false} {
			keys := make([][]byte, 4096)
			for i := range keys {
				j := (i * 7919) % len(kvs)
				keys[i] = entryKey(uint64(j/entries), uint64(2*(j%entries)))
				if !present {
					keys[i][15]++
				}
			}
			warm := func() {
				for _, k := range keys {
					l := MakeLookup(k, base.SeqNumMax)
					_, _, _, _ = r.Get(nil, &l, nil)
				}
			}
			warm()
			warm()
			b.Run(fmt.Sprintf("alwaysLoadFilters=%v/present=%v", always, present), func(b *testing.B) {
				dst := make([]byte, 0, 8)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					l := MakeLookup(keys[i%len(keys)], base.SeqNumMax)
					_, _, _, _ = r.Get(dst[:0], &l, nil)
				}
			})
		}
		require.NoError(b, r.Close())
	}
}

// evenEntryKVs is entryLocationKVs with even entry ids only: the odd ones
// are absent keys spread over every data block, as lookups of missing
// entries would be.
func evenEntryKVs(ledgers, entries int) []kv {
	kvs := entryLocationKVs(ledgers, entries)
	for i := range kvs {
		kvs[i].key.UserKey = entryKey(uint64(i/entries), uint64(2*(i%entries)))
	}
	return kvs
}

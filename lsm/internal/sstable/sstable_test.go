package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

type kv struct {
	key   base.InternalKey
	value []byte
}

func sortKVs(kvs []kv) []kv {
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].key.Compare(kvs[j].key) < 0 })
	out := kvs[:0]
	for _, e := range kvs {
		if len(out) > 0 && out[len(out)-1].key.Compare(e.key) == 0 {
			continue
		}
		out = append(out, e)
	}
	return out
}

func randomKVs(rng *rand.Rand, n int) []kv {
	prefixes := [][]byte{nil, []byte("ledger/"), bytes.Repeat([]byte{0}, 12)}
	var kvs []kv
	for i := 0; i < n; i++ {
		k := append([]byte(nil), prefixes[rng.Intn(len(prefixes))]...)
		for j := rng.Intn(64 - len(k) + 1); j > 0; j-- {
			k = append(k, byte('a'+rng.Intn(4)))
		}
		kind := base.KindSet
		if rng.Intn(8) == 0 {
			kind = base.KindDelete
		}
		v := make([]byte, rng.Intn(40))
		rng.Read(v)
		kvs = append(kvs, kv{key: base.MakeInternalKey(k, base.SeqNum(rng.Intn(10)), kind), value: v})
	}
	return sortKVs(kvs)
}

func entryKey(ledger, entry uint64) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], ledger)
	binary.BigEndian.PutUint64(k[8:], entry)
	return k[:]
}

// entryLocationKVs is the workload's shape: ledgers × entries, 8-byte
// increasing locations, sequence number 0 (bottom level).
func entryLocationKVs(ledgers, entries int) []kv {
	kvs := make([]kv, 0, ledgers*entries)
	loc := uint64(1 << 32)
	for l := 0; l < ledgers; l++ {
		for e := 0; e < entries; e++ {
			v := make([]byte, 8)
			binary.BigEndian.PutUint64(v, loc)
			loc += 100
			kvs = append(kvs, kv{key: base.MakeInternalKey(entryKey(uint64(l), uint64(e)), 0, base.KindSet), value: v})
		}
	}
	return kvs
}

func writeTable(t testing.TB, fs vfs.FS, path string, opts WriterOptions, kvs []kv, dels []Tombstone) *Properties {
	f, err := fs.Create(path)
	require.NoError(t, err)
	w, err := NewWriter(f, path, opts)
	require.NoError(t, err)
	for _, e := range kvs {
		require.NoError(t, w.Add(e.key, e.value))
	}
	for _, d := range dels {
		require.NoError(t, w.AddRangeDeletion(d.Start, d.End, d.Seq))
	}
	props, err := w.Close()
	require.NoError(t, err)
	return props
}

func openTable(t testing.TB, fs vfs.FS, path string, c *cache.Cache) *Reader {
	return openTableWith(t, fs, path, ReaderOptions{Cache: c})
}

func openTableWith(t testing.TB, fs vfs.FS, path string, opts ReaderOptions) *Reader {
	f, err := fs.Open(path)
	require.NoError(t, err)
	r, err := Open(f, path, opts)
	require.NoError(t, err)
	return r
}

// tempFS returns the file system and directory tests write tables to.
func tempFS(t testing.TB) (vfs.FS, string) {
	return vfs.Default, t.TempDir()
}

// modelGet is the newest entry of userKey with seq <= seq.
func modelGet(kvs []kv, userKey []byte, seq base.SeqNum) (kv, bool) {
	i := sort.Search(len(kvs), func(i int) bool {
		return base.CompareInternal(kvs[i].key.UserKey, kvs[i].key.Trailer, userKey, base.SeekTrailer(seq)) >= 0
	})
	if i < len(kvs) && bytes.Equal(kvs[i].key.UserKey, userKey) {
		return kvs[i], true
	}
	return kv{}, false
}

func randomOptions(rng *rand.Rand) WriterOptions {
	return WriterOptions{
		BlockSize:            []int{256, 512, 4096}[rng.Intn(3)],
		RestartInterval:      []int{1, 16, 1024}[rng.Intn(3)],
		IndexRestartInterval: []int{1, 4}[rng.Intn(2)],
		MetadataBlockSize:    []int{64, 128, 4096}[rng.Intn(3)],
		Layout:               Layout(rng.Intn(2)),
		BloomBitsPerKey:      []int{-1, 10}[rng.Intn(2)],
		Compression:          Compression(rng.Intn(3)),
		DisableCommonPrefix:  rng.Intn(2) == 0,
	}
}

func TestTableRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	fs, dir := tempFS(t)
	for iter := 0; iter < 60; iter++ {
		kvs := randomKVs(rng, []int{0, 1, 50, 2000}[rng.Intn(4)])
		opts := randomOptions(rng)
		name := fmt.Sprintf("iter=%d n=%d opts=%+v", iter, len(kvs), opts)
		path := filepath.Join(dir, fmt.Sprintf("%d.sst", iter))
		props := writeTable(t, fs, path, opts, kvs, nil)
		require.Equal(t, uint64(len(kvs)), props.Entries, name)
		var c *cache.Cache
		switch rng.Intn(3) {
		case 1: // small: partitions go through the cache
			var err error
			c, err = cache.New(cache.Options{Capacity: int64(rng.Intn(64 << 10)), NumShardBits: rng.Intn(3)})
			require.NoError(t, err)
		case 2: // large: a partitioned table pins its partitions
			var err error
			c, err = cache.New(cache.Options{Capacity: 16 << 20, NumShardBits: rng.Intn(7) - 1})
			require.NoError(t, err)
		}
		r := openTable(t, fs, path, c)
		require.NoError(t, r.Verify(), name)

		// Point lookups of present and absent keys at random snapshots.
		var stats Stats
		for i := 0; i < 300; i++ {
			var uk []byte
			if len(kvs) > 0 && rng.Intn(3) > 0 {
				uk = kvs[rng.Intn(len(kvs))].key.UserKey
			} else {
				uk = []byte(fmt.Sprintf("absent%d", rng.Intn(100)))
			}
			seq := base.SeqNum(rng.Intn(12))
			if rng.Intn(4) == 0 {
				seq = base.SeqNumMax
			}
			l := MakeLookup(uk, seq)
			v, tr, found, err := r.Get(nil, &l, &stats)
			require.NoError(t, err, name)
			want, ok := modelGet(kvs, uk, seq)
			require.Equal(t, ok, found, "%s Get(%q, %d)", name, uk, seq)
			if ok {
				require.Equal(t, want.key.Trailer, tr, name)
				require.True(t, bytes.Equal(want.value, v), name)
			}
		}
		checkIterator(t, rng, r, kvs, name)
		require.NoError(t, r.Close())
	}
}

// checkIterator drives random iterator operations, with random bounds,
// against the sorted slice.
func checkIterator(t *testing.T, rng *rand.Rand, r *Reader, kvs []kv, name string) {
	for round := 0; round < 5; round++ {
		var lower, upper []byte
		if len(kvs) > 0 && rng.Intn(2) == 0 {
			lower = kvs[rng.Intn(len(kvs))].key.UserKey
		}
		if len(kvs) > 0 && rng.Intn(2) == 0 {
			upper = kvs[rng.Intn(len(kvs))].key.UserKey
		}
		in := func(k []byte) bool {
			return (lower == nil || bytes.Compare(k, lower) >= 0) && (upper == nil || bytes.Compare(k, upper) < 0)
		}
		var view []kv
		for _, e := range kvs {
			if in(e.key.UserKey) {
				view = append(view, e)
			}
		}
		it := r.NewIter(IterOptions{LowerBound: lower, UpperBound: upper})
		pos := -1
		for op := 0; op < 100; op++ {
			var ok bool
			var what string
			switch rng.Intn(6) {
			case 0:
				k, tr := randomTarget(rng, kvs)
				ok, what = it.SeekGE(k, tr), fmt.Sprintf("SeekGE(%q,%d)", k, tr)
				pos = sort.Search(len(view), func(i int) bool {
					return base.CompareInternal(view[i].key.UserKey, view[i].key.Trailer, k, tr) >= 0
				})
			case 1:
				k, tr := randomTarget(rng, kvs)
				ok, what = it.SeekLT(k, tr), fmt.Sprintf("SeekLT(%q,%d)", k, tr)
				pos = sort.Search(len(view), func(i int) bool {
					return base.CompareInternal(view[i].key.UserKey, view[i].key.Trailer, k, tr) >= 0
				}) - 1
			case 2:
				ok, what = it.First(), "First"
				pos = 0
			case 3:
				ok, what = it.Last(), "Last"
				pos = len(view) - 1
			case 4:
				if pos < 0 || pos >= len(view) {
					continue
				}
				ok, what = it.Next(), "Next"
				pos++
			case 5:
				if pos < 0 || pos >= len(view) {
					continue
				}
				ok, what = it.Prev(), "Prev"
				pos--
			}
			what = fmt.Sprintf("%s bounds [%q,%q) %s", name, lower, upper, what)
			require.NoError(t, it.Error(), what)
			valid := pos >= 0 && pos < len(view)
			require.Equal(t, valid, ok, what)
			if valid {
				require.True(t, bytes.Equal(view[pos].key.UserKey, it.UserKey()), "%s: at %q want %q", what, it.UserKey(), view[pos].key.UserKey)
				require.Equal(t, view[pos].key.Trailer, it.Trailer(), what)
				require.True(t, bytes.Equal(view[pos].value, it.Value()), what)
			}
		}
		require.NoError(t, it.Close())
	}
}

func randomTarget(rng *rand.Rand, kvs []kv) ([]byte, base.Trailer) {
	tr := base.MakeTrailer(base.SeqNum(rng.Intn(12)), base.KindMax)
	if len(kvs) == 0 || rng.Intn(8) == 0 {
		return []byte(fmt.Sprintf("%c", 'A'+rng.Intn(60))), tr
	}
	k := append([]byte(nil), kvs[rng.Intn(len(kvs))].key.UserKey...)
	switch rng.Intn(4) {
	case 1:
		k = k[:rng.Intn(len(k)+1)]
	case 2:
		k = append(k, 'z')
	case 3:
		if len(k) > 0 {
			k[rng.Intn(len(k))] ^= 1
		}
	}
	return k, tr
}

func TestRangeDeletionsRoundTrip(t *testing.T) {
	fs, dir := tempFS(t)
	path := filepath.Join(dir, "t.sst")
	dels := []Tombstone{{Start: entryKey(1, 0), End: entryKey(1, 1<<63-1), Seq: 9}, {Start: entryKey(3, 0), End: entryKey(4, 0), Seq: 7}}
	props := writeTable(t, fs, path, WriterOptions{}, entryLocationKVs(2, 10), dels)
	require.Equal(t, uint64(2), props.RangeDeletions)
	require.Equal(t, uint64(9), props.LargestSeqNum)
	r := openTable(t, fs, path, nil)
	defer r.Close()
	require.Equal(t, dels, r.RangeDeletions())
}

// TestCommonPrefixShrinksIndexAndData builds the check table, 200
// ledgers × 5,000 entries with default options, with the common prefix on
// and off: the index tiers must shrink by a quarter and the data by 5%,
// and both tables must hold the same entries.
func TestCommonPrefixShrinksIndexAndData(t *testing.T) {
	fs, dir := tempFS(t)
	kvs := entryLocationKVs(200, 5000)
	opts := WriterOptions{Compression: CompressionLZ4}
	on := writeTable(t, fs, filepath.Join(dir, "on.sst"), opts, kvs, nil)
	opts.DisableCommonPrefix = true
	off := writeTable(t, fs, filepath.Join(dir, "off.sst"), opts, kvs, nil)
	idxOn, idxOff := on.IndexBytes+on.TopIndexBytes, off.IndexBytes+off.TopIndexBytes
	t.Logf("index bytes %d -> %d (%.1f%%), data bytes %d -> %d (%.1f%%)",
		idxOff, idxOn, 100*(float64(idxOn)/float64(idxOff)-1), off.DataBytes, on.DataBytes, 100*(float64(on.DataBytes)/float64(off.DataBytes)-1))
	require.LessOrEqual(t, float64(idxOn), 0.75*float64(idxOff))
	require.LessOrEqual(t, float64(on.DataBytes), 0.95*float64(off.DataBytes))
	ron, roff := openTable(t, fs, filepath.Join(dir, "on.sst"), nil), openTable(t, fs, filepath.Join(dir, "off.sst"), nil)
	defer ron.Close()
	defer roff.Close()
	a, b := ron.NewIter(IterOptions{}), roff.NewIter(IterOptions{})
	n := 0
	for oka, okb := a.First(), b.First(); oka || okb; oka, okb = a.Next(), b.Next() {
		require.Equal(t, oka, okb)
		require.Equal(t, a.UserKey(), b.UserKey())
		require.Equal(t, a.Value(), b.Value())
		n++
	}
	require.Equal(t, len(kvs), n)
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
}

func TestGetAllocatesNothingWhenCached(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool does not keep items under the race detector")
	}
	fs, dir := tempFS(t)
	path := filepath.Join(dir, "t.sst")
	kvs := entryLocationKVs(10, 2000)
	writeTable(t, fs, path, WriterOptions{Compression: CompressionLZ4}, kvs, nil)
	c, err := cache.New(cache.Options{Capacity: 64 << 20})
	require.NoError(t, err)
	r := openTable(t, fs, path, c)
	defer r.Close()
	dst := make([]byte, 0, 8)
	l := MakeLookup(entryKey(5, 1234), base.SeqNumMax)
	_, _, found, err := r.Get(dst, &l, nil) // warm the cache
	require.NoError(t, err)
	require.True(t, found)
	var stats Stats
	allocs := testing.AllocsPerRun(200, func() {
		_, _, _, _ = r.Get(dst[:0], &l, &stats)
	})
	require.Zero(t, allocs)
	require.Zero(t, stats.DataReads+stats.IndexReads+stats.FilterReads)
}

// TestFullFilterLargerThanShardIsReadOnce is RocksDB's filter-cache cliff at
// table level: a multi-MiB full filter and a cache of 1 MiB shards. The
// filter must be read from the file once, not on every Get, and must not
// push the other cached blocks out. (AlwaysLoadFilters: by default lookups
// that find their keys would not read the filter at all.)
func TestFullFilterLargerThanShardIsReadOnce(t *testing.T) {
	fs, dir := tempFS(t)
	path := filepath.Join(dir, "full.sst")
	kvs := entryLocationKVs(100, 30000) // 3M keys → a 3.6 MiB filter at 10 bits/key
	props := writeTable(t, fs, path, WriterOptions{Layout: LayoutFull, Compression: CompressionLZ4}, kvs, nil)
	require.Greater(t, props.MaxFilterBlockSize, uint64(3<<20))
	c, err := cache.New(cache.Options{Capacity: 64 << 20, NumShardBits: 6}) // 1 MiB shards
	require.NoError(t, err)
	r := openTableWith(t, fs, path, ReaderOptions{Cache: c, AlwaysLoadFilters: true})
	defer r.Close()
	rng := rand.New(rand.NewSource(1))
	get := func(stats *Stats) {
		e := kvs[rng.Intn(len(kvs))]
		l := MakeLookup(e.key.UserKey, base.SeqNumMax)
		v, _, found, err := r.Get(nil, &l, stats)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, e.value, v)
	}
	var warm Stats
	for i := 0; i < 100; i++ {
		get(&warm)
	}
	require.Equal(t, int64(1), warm.FilterReads, "the oversized filter is read once")
	before := c.Metrics()
	var stats Stats
	for i := 0; i < 2000; i++ {
		get(&stats)
	}
	after := c.Metrics()
	require.Zero(t, stats.FilterReads, "no filter re-reads after warm-up")
	require.GreaterOrEqual(t, r.PinnedBytes(), int64(props.MaxFilterBlockSize))
	require.Equal(t, before.Kinds[cache.KindIndex].Evictions, after.Kinds[cache.KindIndex].Evictions, "the index stays cached")
	t.Logf("2000 gets: %+v; cache pinned usage %d", stats, after.PinnedUsage)
}

func TestCorruptionIsDetected(t *testing.T) {
	fs, dir := tempFS(t)
	path := filepath.Join(dir, "t.sst")
	kvs := entryLocationKVs(3, 300)
	writeTable(t, fs, path, WriterOptions{BlockSize: 512, MetadataBlockSize: 128, Compression: CompressionLZ4}, kvs, nil)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(5))
	for trial := 0; trial < 300; trial++ {
		bad := append([]byte(nil), good...)
		if trial%3 == 0 {
			bad = bad[:rng.Intn(len(bad))]
		} else {
			bad[rng.Intn(len(bad))] ^= byte(1 + rng.Intn(255))
		}
		p := filepath.Join(dir, "bad.sst")
		require.NoError(t, os.WriteFile(p, bad, 0o644))
		f, err := fs.Open(p)
		require.NoError(t, err)
		r, err := Open(f, p, ReaderOptions{})
		if err != nil {
			require.True(t, errors.Is(err, base.ErrCorruption), "trial %d: %v", trial, err)
			f.Close()
			continue
		}
		verr := r.Verify()
		require.Error(t, verr, "trial %d: a damaged table verified", trial)
		require.True(t, errors.Is(verr, base.ErrCorruption), "trial %d: %v", trial, verr)
		// Reads give the right answer or a corruption error, never a wrong one.
		for _, e := range kvs[:50] {
			l := MakeLookup(e.key.UserKey, base.SeqNumMax)
			v, _, found, err := r.Get(nil, &l, nil)
			if err != nil {
				require.True(t, errors.Is(err, base.ErrCorruption), "trial %d: %v", trial, err)
				continue
			}
			require.True(t, found)
			require.Equal(t, e.value, v)
		}
		r.Close()
	}
}

func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	for i, opts := range []WriterOptions{{BlockSize: 256, MetadataBlockSize: 64}, {Layout: LayoutFull, Compression: CompressionLZ4}} {
		path := filepath.Join(dir, fmt.Sprintf("%d.sst", i))
		writeTable(f, vfs.Default, path, opts, entryLocationKVs(2, 20), []Tombstone{{Start: []byte("a"), End: []byte("b"), Seq: 1}})
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.sst")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		// Without a cache, and with a large one (the table then pins its
		// partitions and decodes its top-level searches at open).
		big, err := cache.New(cache.Options{Capacity: 16 << 20, NumShardBits: 2})
		require.NoError(t, err)
		for _, c := range []*cache.Cache{nil, big} {
			file, err := vfs.Default.Open(path)
			require.NoError(t, err)
			r, err := Open(file, path, ReaderOptions{Cache: c})
			if err != nil {
				file.Close()
				continue
			}
			_ = r.Verify()
			for _, k := range [][]byte{entryKey(1, 5), entryKey(0, 0), entryKey(9, 9), nil} {
				l := MakeLookup(k, base.SeqNumMax)
				_, _, _, _ = r.Get(nil, &l, nil)
			}
			it := r.NewIter(IterOptions{})
			for ok := it.First(); ok; ok = it.Next() {
			}
			for ok := it.Last(); ok; ok = it.Prev() {
			}
			_ = it.Close()
			_ = r.Close()
		}
	})
}

// TestPartitionsPinnedInLargeCache: with room in the cache, a partitioned
// table pins every index partition at open, and its filter partitions too
// when it reads every filter (AlwaysLoadFilters), so point lookups make no
// index (or filter) cache lookups; in a small cache they go through the
// cache. Either way Close gives the pinned bytes back.
func TestPartitionsPinnedInLargeCache(t *testing.T) {
	fs, dir := tempFS(t)
	path := filepath.Join(dir, "t.sst")
	kvs := entryLocationKVs(50, 2000)
	props := writeTable(t, fs, path, WriterOptions{BlockSize: 4096, MetadataBlockSize: 512}, kvs, nil)
	require.Greater(t, props.IndexPartitions, uint64(1))
	require.Greater(t, props.FilterBytes, props.IndexBytes)
	for _, tc := range []struct {
		capacity      int64
		alwaysFilters bool
		pinIndex      bool
		pinFilter     bool
	}{
		{16 << 20, true, true, true},
		{16 << 20, false, true, false},
		{int64(2 * props.IndexBytes), true, false, false},
		{int64(2 * props.IndexBytes), false, false, false},
	} {
		name := fmt.Sprintf("capacity=%d/alwaysLoadFilters=%v", tc.capacity, tc.alwaysFilters)
		c, err := cache.New(cache.Options{Capacity: tc.capacity, NumShardBits: 2})
		require.NoError(t, err)
		r := openTableWith(t, fs, path, ReaderOptions{Cache: c, AlwaysLoadFilters: tc.alwaysFilters})
		require.Equal(t, tc.pinIndex, r.dataSearch != nil, name)
		require.Equal(t, tc.pinFilter, r.filterParts != nil, name)
		require.NotNil(t, r.filterSearch, name)
		pinned := int64(0)
		if tc.pinIndex {
			pinned += int64(props.IndexBytes)
		}
		if tc.pinFilter {
			pinned += int64(props.FilterBytes)
		}
		require.GreaterOrEqual(t, r.partitionBytes, pinned, "partitions and their decoded searches: %s", name)
		require.Equal(t, r.PinnedBytes(), c.PinnedUsage(), name)
		var stats Stats
		for i := 0; i < 2000; i++ {
			e := kvs[(i*7919)%len(kvs)]
			l := MakeLookup(e.key.UserKey, base.SeqNumMax)
			v, _, found, err := r.Get(nil, &l, &stats)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, e.value, v)
		}
		m := c.Metrics()
		lookups := func(k cache.Kind) int64 { return m.Kinds[k].Hits + m.Kinds[k].Misses }
		if tc.pinIndex {
			require.Zero(t, lookups(cache.KindIndex), name)
			require.Zero(t, stats.IndexReads, "read at open, not by lookups: %s", name)
		} else {
			require.Greater(t, lookups(cache.KindIndex), int64(0), name)
		}
		switch {
		case tc.pinFilter:
			require.Zero(t, lookups(cache.KindFilter), name)
			require.Zero(t, stats.FilterReads, "read at open, not by lookups: %s", name)
		case tc.alwaysFilters:
			require.Greater(t, lookups(cache.KindFilter), int64(0), name)
		default:
			require.Zero(t, stats.FilterReads, "lookups of present keys skip uncached filters: %s", name)
			require.EqualValues(t, 2000, stats.FilterSkips, name)
		}
		require.NoError(t, r.Close())
		require.Zero(t, c.PinnedUsage(), name)
	}
}

package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestLoadLocations checks that the load's closed-form locations are the
// ones its batched writes used to take from a locationSequence: in write
// order, across two log rolls, and for a last batch shorter than the rest.
func TestLoadLocations(t *testing.T) {
	seq := &locationSequence{log: 1, offset: 1024}
	for i := int64(0); i < 2*locationsPerLog+10; i++ {
		if got, want := loadLocation(i), seq.next(); got != want {
			require.Equal(t, want, got, "location %d", i)
		}
	}
	cfg := &Config{Ledgers: 7, Entries: 23, FlushEntries: 5}
	var i int64
	for k := int64(0); k*cfg.FlushEntries < cfg.Entries; k++ {
		for l := range cfg.Ledgers {
			for e := k * cfg.FlushEntries; e < min((k+1)*cfg.FlushEntries, cfg.Entries); e++ {
				require.Equal(t, i, cfg.loadIndex(l, e), "ledger %d entry %d", l, e)
				i++
			}
		}
	}
	var sorted []Entry
	for en := range cfg.sortedLoad() {
		sorted = append(sorted, en)
	}
	require.Len(t, sorted, int(cfg.Keys()))
	for j := 1; j < len(sorted); j++ {
		a, b := sorted[j-1], sorted[j]
		require.True(t, a.Ledger < b.Ledger || a.Ledger == b.Ledger && a.EntryID < b.EntryID, "key order at %d", j)
	}
}

// loadIndex loads the workload into a new index by via (with compact, a
// written one is then compacted to the last level, as a manual compaction
// leaves it) and returns it reopened with a cache that holds everything.
func loadIndex(t *testing.T, cfg Config, via string, compact bool) *BookieEngine {
	cfg.LoadVia = via
	e := NewBookieEngine(&cfg)
	var out bytes.Buffer
	r := &runner{cfg: &cfg, e: e, dir: filepath.Join(t.TempDir(), via), rep: &reporter{w: &out, json: true}}
	require.NoError(t, e.Open(r.dir, 64<<20))
	require.NoError(t, r.load())
	var row LoadRow
	require.NoError(t, json.Unmarshal(out.Bytes(), &row), out.String())
	require.Equal(t, via, row.LoadVia)
	require.Equal(t, cfg.Keys(), row.Keys)
	if compact {
		require.NoError(t, e.ix.DB().Compact(context.Background(), nil, nil))
	}
	// Reopen: the reads below start from the table files alone.
	require.NoError(t, e.Close())
	require.NoError(t, e.Open(r.dir, 64<<20))
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// seekConfig is the workload of the seek-path tests: 100,000 keys in
// small blocks. Every lookup probes its filter: by default a table
// samples at random which lookups score its filter's use (sstable/get.go),
// so two indexes would drift apart in filter probes, lookup by lookup,
// whatever their tables. Compactions run whole: a split one cuts its
// tables at its key ranges' bounds too, where an ingest of the same
// entries cuts them at the target size only.
func seekConfig() Config {
	return Config{
		Ledgers: 50, Entries: 2000, FlushEntries: 500, Layout: "partitioned", CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 256 << 10,
		AlwaysLoadFilters: true, IdleCompactionDelay: -1, MaxSubcompactions: 1, CacheSizes: []int64{64 << 20}, Threads: 1, Phases: []string{"load"}, DeleteFraction: 0.5,
	}
}

// TestIngestedReadsLikeCompacted checks what RocksDB got wrong (its ingested
// tables with a global sequence number took a slower comparator path in
// block seeks): an ingested index and a written, compacted one of the same
// entries hold the same tables — every one in the last level, every entry
// at sequence number 0 as a SET, byte for byte — and answer the same gets
// and floors with the same block reads and cache hits, lookup by lookup.
// There is no per-table state in the read path that could tell them
// apart: tables are opened with the DB's ReaderOptions alone, and a seek
// compares suffixes and trailers with the same functions
// (block.Iter.compareRestartValue, compareCurrent, base.CompareTrailers) on
// the same bytes.
func TestIngestedReadsLikeCompacted(t *testing.T) {
	cfg := seekConfig()
	written, ingested := loadIndex(t, cfg, LoadViaWrite, true), loadIndex(t, cfg, LoadViaIngest, false)
	last := written.opts.NumLevels - 1

	// The same tables, entry for entry and block for block.
	wt, err := written.ix.DB().Tables()
	require.NoError(t, err)
	it, err := ingested.ix.DB().Tables()
	require.NoError(t, err)
	require.Greater(t, len(wt), 2, "several tables, so that lookups cross table boundaries")
	require.Equal(t, len(wt), len(it), "tables cut at the same target size")
	for i := range wt {
		for _, ti := range []lsm.TableInfo{wt[i], it[i]} {
			require.Equal(t, last, ti.Level, "table %s", ti.Path)
			require.Zero(t, ti.LargestSeqNum, "table %s", ti.Path)
			require.Zero(t, ti.Properties.LargestSeqNum, "table %s", ti.Path)
		}
		require.Equal(t, wt[i].Smallest, it[i].Smallest, "table %d", i)
		require.Equal(t, wt[i].Largest, it[i].Largest, "table %d", i)
		require.Equal(t, wt[i].Entries, it[i].Entries, "table %d", i)
		require.Equal(t, tableBlocks(t, wt[i].Path), tableBlocks(t, it[i].Path), "table %d: the same blocks at the same offsets", i)
		we, ie := tableEntries(t, wt[i].Path), tableEntries(t, it[i].Path)
		require.Equal(t, we, ie, "table %d", i)
		for _, e := range we {
			require.Equal(t, lsm.TableEntry{Key: e.Key, SeqNum: 0, Kind: "SET", Value: e.Value}, e)
		}
		// Byte for byte, even: the manual compaction writes the last level
		// in one stream, cut at the same target size, with the same writer
		// and options as the ingest's tables, and at the bottom every
		// trailer is (0, SET) either way.
		wf, err := os.ReadFile(wt[i].Path)
		require.NoError(t, err)
		inf, err := os.ReadFile(it[i].Path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(wf, inf), "table %d: %s and %s differ (%d and %d bytes)", i, wt[i].Path, it[i].Path, len(wf), len(inf))
	}
	sameLookups(t, cfg, written, ingested, true)
}

// TestIngestedReadsLikeFlushed compares an ingested index with a written
// one whose only table is its flushed memtable, moved unchanged into the
// last level by the idle compaction (what a written load of a few million
// keys can leave): that table keeps its sequence numbers (1 to N, bigger
// trailers) and is not cut at the target size, yet the gets of present
// keys cost the same blocks and cache hits, lookup by lookup: the seek
// takes the same path whatever the trailers hold.
func TestIngestedReadsLikeFlushed(t *testing.T) {
	cfg := seekConfig()
	cfg.WriteBuffer = 64 << 20 // one memtable holds the load
	cfg.IdleCompactionDelay = 10 * time.Millisecond
	written, ingested := loadIndex(t, cfg, LoadViaWrite, false), loadIndex(t, cfg, LoadViaIngest, false)
	wt, err := written.ix.DB().Tables()
	require.NoError(t, err)
	require.Len(t, wt, 1, "the flushed memtable")
	require.Equal(t, written.opts.NumLevels-1, wt[0].Level, "moved to the last level")
	require.Equal(t, uint64(cfg.Keys()), wt[0].LargestSeqNum, "a moved table keeps its sequence numbers")
	it, err := ingested.ix.DB().Tables()
	require.NoError(t, err)
	require.Greater(t, len(it), 2)
	sameLookups(t, cfg, written, ingested, false)
}

// sameLookups runs random gets and floors (of present and absent keys and
// ledgers) on a and b after warming their caches with every key: the
// answers must be the workload's, and each lookup must read no block and
// count the same cache hits and filter probes in both. With sameTables
// false (a and b cut their tables differently), only gets of present keys
// compare counters: a floor whose ledger spans two tables takes the
// general path instead of the one-table one, and whether an absent key
// passes a filter depends on which keys share its filter partition.
func sameLookups(t *testing.T, cfg Config, a, b *BookieEngine, sameTables bool) {
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	type op struct {
		floor         bool
		ledger, entry int64
	}
	ops := make([]op, 4000)
	for i := range ops {
		ops[i] = op{floor: rng.Intn(4) == 0, ledger: rng.Int63n(cfg.Ledgers + 2), entry: rng.Int63n(cfg.Entries + 10)}
	}
	do := func(e *BookieEngine, o op, stats *lsm.ReadStats) int64 {
		if o.floor {
			last, err := e.ix.GetLastEntryInLedgerStats(o.ledger, stats)
			if err != nil {
				return -1 // no entry (ledgers past the last)
			}
			return last
		}
		loc, err := e.ix.GetLocationStats(o.ledger, o.entry, stats)
		require.NoError(t, err)
		return loc
	}
	for _, e := range []*BookieEngine{a, b} { // warm the cache: every block
		for l := range cfg.Ledgers {
			do(e, op{floor: true, ledger: l}, nil)
			for en := range cfg.Entries {
				do(e, op{ledger: l, entry: en}, nil)
			}
		}
		for _, o := range ops {
			do(e, o, nil)
		}
	}
	var hits int64
	for i, o := range ops {
		var as, bs lsm.ReadStats
		av, bv := do(a, o, &as), do(b, o, &bs)
		require.Equal(t, av, bv, "op %d %+v", i, o)
		switch {
		case o.ledger >= cfg.Ledgers:
			require.Contains(t, []int64{-1, 0}, av, "op %d %+v: a ledger never written", i, o)
		case o.floor:
			require.Equal(t, cfg.Entries-1, av, "op %d %+v", i, o)
		case o.entry < cfg.Entries:
			require.Equal(t, cfg.loadEntry(o.ledger, o.entry).Location, av, "op %d %+v", i, o)
		default:
			require.Zero(t, av, "op %d %+v: an entry never written", i, o)
		}
		for _, s := range []lsm.ReadStats{as, bs} {
			require.Zero(t, s.DataReads+s.IndexReads+s.FilterReads, "op %d %+v: the cache is warm: %+v", i, o, s)
		}
		if sameTables || !o.floor && o.ledger < cfg.Ledgers && o.entry < cfg.Entries {
			require.Equal(t, as, bs, "op %d %+v: the same blocks and cache hits", i, o)
		}
		hits += as.CacheHits
	}
	require.Greater(t, hits, int64(len(ops)), "the lookups count their cache hits")
}

func tableBlocks(t *testing.T, path string) []lsm.TableBlock {
	tb, err := lsm.OpenTable(vfs.Default, path)
	require.NoError(t, err)
	defer tb.Close()
	b, err := tb.Blocks()
	require.NoError(t, err)
	return b
}

func tableEntries(t *testing.T, path string) []lsm.TableEntry {
	tb, err := lsm.OpenTable(vfs.Default, path)
	require.NoError(t, err)
	defer tb.Close()
	var out []lsm.TableEntry
	require.NoError(t, tb.Scan(func(e lsm.TableEntry) error {
		e.Key, e.Value = bytes.Clone(e.Key), bytes.Clone(e.Value)
		out = append(out, e)
		return nil
	}))
	return out
}

// TestRunIngestLoad runs the bench with --load-via ingest: the load row
// says so, every table is in the last level, and the get phase (which
// fails unless every key is found) passes. An engine that cannot ingest
// is refused before anything runs.
func TestRunIngestLoad(t *testing.T) {
	cfg := Config{
		Dir: t.TempDir(), Ledgers: 20, Entries: 3000, FlushEntries: 1000, LoadVia: LoadViaIngest, Layout: "full", CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "none", TargetFileSize: 64 << 10, WriteBuffer: 256 << 10,
		CacheSizes: []int64{16 << 20}, Threads: 2, Warmup: 20 * time.Millisecond, Duration: 50 * time.Millisecond,
		Phases: []string{"load", "get", "floor"}, DeleteFraction: 0.5, JSON: true,
	}
	var out bytes.Buffer
	require.NoError(t, Run(&cfg, []Engine{NewBookieEngine(&cfg)}, &out, nil))
	var load LoadRow
	require.NoError(t, json.Unmarshal(bytes.SplitN(out.Bytes(), []byte("\n"), 2)[0], &load), out.String())
	require.Equal(t, "load", load.Phase)
	require.Equal(t, LoadViaIngest, load.LoadVia)
	require.Equal(t, cfg.Keys(), load.Keys)
	tables := 0
	for level, n := range load.TablesPerLevel {
		if level < len(load.TablesPerLevel)-1 {
			require.Zero(t, n, "level %d: ingested tables go to the last level", level)
		}
		tables += n
	}
	require.Greater(t, tables, 1)
	require.Contains(t, out.String(), `"phase":"floor"`)

	cfg.Dir = t.TempDir()
	notIngester := struct{ Engine }{NewBookieEngine(&cfg)}
	err := Run(&cfg, []Engine{NewBookieEngine(&cfg), notIngester}, &out, nil)
	require.ErrorContains(t, err, "--load-via ingest: engine bookie-index cannot ingest")
	require.NoDirExists(t, filepath.Join(cfg.Dir, "bookie-index"), "refused before the first engine ran")

	cfg.LoadVia = "sideways"
	require.ErrorContains(t, cfg.Validate(), "--load-via")
}

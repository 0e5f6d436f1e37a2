package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/benchmark"
	"github.com/stretchr/testify/require"
)

// tinyConfig is the whole workload at a scale that runs in a few seconds.
// Pebble charges its memtable to the block cache, and its cache shards are
// 64 KiB at the small size: there Pebble caches nothing and every get reads
// its blocks from the files, while the large cache holds everything.
func tinyConfig(t *testing.T, layout string) *benchmark.Config {
	return &benchmark.Config{
		Dir: t.TempDir(), Ledgers: 20, Entries: 600, FlushEntries: 100, Layout: layout, CommonPrefix: true,
		BlockSize: 4096, BloomBits: 10, Compression: "lz4", TargetFileSize: 64 << 10, WriteBuffer: 256 << 10,
		CacheSizes: []int64{256 << 10, 16 << 20}, Threads: 2, IdleCompactionDelay: 50 * time.Millisecond, Warmup: 50 * time.Millisecond, Duration: 150 * time.Millisecond,
		Phases: []string{"load", "get", "floor", "miss", "mixed", "delete"}, DeleteFraction: 0.5, JSON: true,
	}
}

// rowsByEngine parses JSON rows into engine → phase → rows.
func rowsByEngine(t *testing.T, out *bytes.Buffer) map[string]map[string][]map[string]interface{} {
	rows := map[string]map[string][]map[string]interface{}{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var row map[string]interface{}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), sc.Text())
		engine, phase := row["engine"].(string), row["phase"].(string)
		if rows[engine] == nil {
			rows[engine] = map[string][]map[string]interface{}{}
		}
		rows[engine][phase] = append(rows[engine][phase], row)
	}
	require.NoError(t, sc.Err())
	return rows
}

// TestBothEnginesAllPhases runs every phase on both arms in one run and
// checks that the rows agree with what each engine does. (TestIndexLayouts
// covers the full layout.)
func TestBothEnginesAllPhases(t *testing.T) {
	for _, layout := range []string{"partitioned"} {
		t.Run(layout, func(t *testing.T) {
			cfg := tinyConfig(t, layout)
			engines, err := newEngines(cfg, "bookie-index,pebble", &bookkeeperFlags{})
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, benchmark.RunArms(cfg, engines, &out, nil))
			rows := rowsByEngine(t, &out)
			require.Len(t, rows, 2, "a set of rows per engine")
			for _, engine := range []string{"bookie-index", "pebble"} {
				r := rows[engine]
				require.NotNil(t, r, engine)
				load := r["load"][0]
				require.Equal(t, float64(12000), load["keys"], engine)
				require.Greater(t, load["table_bytes"], float64(0), engine)
				tiers := load["bytes_by_tier"].(map[string]interface{})
				require.Greater(t, tiers["data"], float64(0), engine)
				require.Greater(t, tiers["filter"], float64(0), engine)
				require.Greater(t, load["max_filter_block_bytes"], float64(0), engine)
				require.Len(t, r["get"], 2, "%s: a row per cache size", engine)
				for _, g := range r["get"] {
					require.Equal(t, float64(1), g["found_fraction"], engine)
					require.Greater(t, g["ops"], float64(0), engine)
				}
				small, big := r["get"][0], r["get"][1]
				require.Greater(t, small["data_reads_per_op"], big["data_reads_per_op"], "%s: a smaller cache reads more blocks", engine)
				require.Greater(t, big["cache_hits_per_op"], float64(0), "%s: lookups hit the cache", engine)
				require.Equal(t, float64(1), r["floor"][0]["found_fraction"], engine)
				require.Equal(t, float64(0), r["miss"][0]["found_fraction"], engine)
				require.Greater(t, r["mixed"][0]["extra"].(map[string]interface{})["write_keys_per_sec"], float64(0), engine)
				del := r["delete"][0]["extra"].(map[string]interface{})
				require.Equal(t, float64(0), del["floor_deleted_found"], "%s: deleted ledgers have no last entry", engine)
				require.Equal(t, float64(1), r["delete"][0]["found_fraction"], "%s: live ledgers keep theirs", engine)
				t.Logf("%s/%s: load tiers %v, get rows %v, delete %v", engine, layout, tiers, r["get"], del)
			}
			// Pebble's reads come from the global block cache and file
			// counters; at the small cache a get must read from files.
			small := rows["pebble"]["get"][0]
			require.Greater(t, small["bytes_read_per_op"], float64(0))
			require.Equal(t, float64(0), small["filter_reads_per_op"], "Pebble does not split reads by block kind")
		})
	}
}

// TestIndexLayouts checks that "partitioned" gives Pebble tables a
// two-level index and "full" a one-level one. Pebble splits an index only
// when it outgrows 4 KiB, so the tables need many data blocks.
func TestIndexLayouts(t *testing.T) {
	for _, layout := range []string{"partitioned", "full"} {
		cfg := tinyConfig(t, layout)
		cfg.Ledgers, cfg.Entries, cfg.FlushEntries = 10, 10000, 5000
		cfg.BlockSize, cfg.TargetFileSize = 512, 1<<20
		cfg.Phases = []string{"load"}
		var out bytes.Buffer
		require.NoError(t, benchmark.Run(cfg, []benchmark.Engine{NewPebbleEngine(cfg)}, &out, nil))
		tiers := rowsByEngine(t, &out)["pebble"]["load"][0]["bytes_by_tier"].(map[string]interface{})
		t.Logf("%s: %v", layout, tiers)
		require.Greater(t, tiers["index"], float64(4096), layout)
		if layout == "partitioned" {
			require.Greater(t, tiers["top_index"], float64(0), "a two-level index has a top level")
		} else {
			require.Equal(t, float64(0), tiers["top_index"], "a one-level index has no top level")
		}
	}
}

// TestDeleteLedgersGivesSpaceBack: Pebble drops a table in a delete-only
// compaction when one ledger's range deletion covers all of it, so with
// long ledgers and small tables most of the deleted ledgers' space comes
// back. (Tables that straddle two ledgers stay until a compaction reaches
// them: at the full scale's 64 MiB tables, which span many ledgers, little
// comes back within the phase.)
func TestDeleteLedgersGivesSpaceBack(t *testing.T) {
	cfg := tinyConfig(t, "partitioned")
	cfg.Ledgers, cfg.Entries, cfg.FlushEntries = 4, 20000, 5000
	cfg.TargetFileSize = 32 << 10
	cfg.Phases = []string{"load", "delete"}
	cfg.CacheSizes = cfg.CacheSizes[1:]
	var out bytes.Buffer
	require.NoError(t, benchmark.Run(cfg, []benchmark.Engine{NewPebbleEngine(cfg)}, &out, nil))
	del := rowsByEngine(t, &out)["pebble"]["delete"][0]["extra"].(map[string]interface{})
	t.Logf("delete: %v", del)
	require.Greater(t, del["reclaimed_fraction"], 0.2, "deleting half of the ledgers gives space back")
}

func TestPebbleReaderLookups(t *testing.T) {
	cfg := tinyConfig(t, "partitioned")
	e := NewPebbleEngine(cfg)
	require.NoError(t, e.Open(cfg.Dir, 1<<20))
	defer func() { require.NoError(t, e.Close()) }()
	require.NoError(t, e.WriteBatch([]benchmark.Entry{{Ledger: 1, EntryID: 0, Location: 10}, {Ledger: 1, EntryID: 7, Location: 11}, {Ledger: 3, EntryID: 2, Location: 12}}))
	rd := e.NewReader()
	for _, c := range []struct {
		ledger, entry int64
		want          bool
	}{{1, 0, true}, {1, 7, true}, {1, 1, false}, {2, 0, false}, {3, 2, true}} {
		found, err := rd.Get(c.ledger, c.entry)
		require.NoError(t, err)
		require.Equal(t, c.want, found, "get(%d, %d)", c.ledger, c.entry)
	}
	for ledger, want := range map[int64]bool{0: false, 1: true, 2: false, 3: true, 4: false} {
		found, err := rd.Floor(ledger)
		require.NoError(t, err)
		require.Equal(t, want, found, "floor(%d)", ledger)
	}
	require.NoError(t, e.DeleteLedgers([]int64{1}))
	found, err := rd.Floor(1)
	require.NoError(t, err)
	require.False(t, found, "a deleted ledger has no last entry")
	found, err = rd.Floor(3)
	require.NoError(t, err)
	require.True(t, found, "the deletion stops at its ledger")
	require.NoError(t, e.Settle())
	st, err := e.Storage()
	require.NoError(t, err)
	require.Len(t, st.TablesPerLevel, 7)
}

func TestPebbleOptions(t *testing.T) {
	cfg := tinyConfig(t, "full")
	o, err := NewPebbleEngine(cfg).Options()
	require.NoError(t, err)
	require.Greater(t, o.Levels[6].IndexBlockSize, 1<<30, "full: a one-level index")
	require.Equal(t, int64(64<<10), o.TargetFileSizes[6], "every level gets the base table size")
	require.Equal(t, "rocksdb.BuiltinBloomFilter", o.Levels[0].FilterPolicy.Name())
	require.Equal(t, "Snappy", o.Levels[3].Compression().Name)
	cfg.Layout = "partitioned"
	cfg.Compression = "none"
	o, err = NewPebbleEngine(cfg).Options()
	require.NoError(t, err)
	require.Equal(t, 4096, o.Levels[2].IndexBlockSize)
	require.Equal(t, "NoCompression", o.Levels[2].Compression().Name)
	cfg.Compression = "zstd"
	_, err = NewPebbleEngine(cfg).Options()
	require.ErrorContains(t, err, "no Pebble equivalent")
}

// TestDeltaAttribution checks that the deltas the harness computes from
// the readers' Stats add up to the global growth during the measured run,
// whatever happened before it.
func TestDeltaAttribution(t *testing.T) {
	var global readCounters
	a := newDeltaAttributor(func() readCounters { return global })
	readers := make([]*pebbleReader, 3)
	for i := range readers {
		readers[i] = &pebbleReader{attr: a}
	}
	global = global.add(readCounters{blockReads: 5, cacheHits: 50, bytesRead: 500}) // a warm-up
	before := make([]benchmark.OpStats, len(readers))
	for i, r := range readers {
		before[i] = r.Stats()
	}
	run := readCounters{blockReads: 7, cacheHits: 70, bytesRead: 700}
	global = global.add(run)
	var sum readCounters
	for i, r := range readers {
		s := r.Stats()
		sum = sum.add(readCounters{s.DataReads - before[i].DataReads, s.CacheHits - before[i].CacheHits, s.BytesRead - before[i].BytesRead})
	}
	require.Equal(t, run, sum)
}

func TestCommandFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, run([]string{"--engines", "rocksdb"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "unknown engine")
	stderr.Reset()
	require.Equal(t, 2, run([]string{"--engines", "pebble,pebble"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "twice")
	stderr.Reset()
	require.Equal(t, 2, run([]string{"--layout", "sideways"}, &stdout, &stderr))
	require.Equal(t, 2, run([]string{"extra"}, &stdout, &stderr))
	stderr.Reset()
	require.Equal(t, 2, run([]string{"--load-via", "ingest"}, &stdout, &stderr), "the Pebble arm cannot ingest")
	require.Contains(t, stderr.String(), "engine pebble cannot ingest")
	stderr.Reset()
	require.Equal(t, 2, run([]string{"--load-via", "sideways"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "--load-via")

	dir := t.TempDir()
	stdout.Reset()
	stderr.Reset()
	code := run([]string{"--dir", dir, "--ledgers", "10", "--entries", "200", "--flush-entries", "100", "--cache", "1MiB",
		"--threads", "1", "--warmup", "10ms", "--duration", "50ms", "--phases", "load,get", "--engines", "pebble,bookie-index",
		"--idle-compaction-delay", "20ms"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	out := stdout.String()
	require.True(t, strings.Contains(out, "load (pebble") && strings.Contains(out, "load (bookie-index"), out)
	require.Less(t, strings.Index(out, "load (pebble"), strings.Index(out, "load (bookie-index"), "engines run in the order given")
}

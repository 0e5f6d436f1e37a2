package httpapi

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// openIndexes opens n real indexes under a temporary directory, with
// small engine buffers, closed at the end of the test.
func openIndexes(t *testing.T, n int, stats bool) []Directory {
	t.Helper()
	root := t.TempDir()
	var dirs []Directory
	for i := range n {
		ledgerDir := filepath.Join(root, "ledgers"+string(rune('0'+i)), "current")
		engine := lsm.DefaultOptions()
		engine.WriteBufferSize = 64 << 10
		ix, err := entrylocation.Open(filepath.Join(ledgerDir, "locations"), &entrylocation.Options{Engine: engine, EnableStatistics: stats, LatencyRollover: testRollover})
		require.NoError(t, err)
		t.Cleanup(func() { _ = ix.Close() })
		dirs = append(dirs, Directory{LedgerDir: ledgerDir, IndexDir: ledgerDir, Index: ix})
	}
	return dirs
}

// exercise writes, looks up and deletes locations in ix.
// testRollover is the latency window of the test indexes: short, so that
// a test sees a window complete.
const testRollover = 200 * time.Millisecond

// scrapeAfterRollover looks up a location, waits for its window to end
// and scrapes /metrics within the next one, so that the quantiles are
// those of the window holding the lookup. It tries again if the scrape
// came too late (a loaded machine).
func scrapeAfterRollover(t *testing.T, s http.Handler, ix *entrylocation.Index, ok func(scrape string) bool) string {
	t.Helper()
	var scrape string
	for range 5 {
		_, err := ix.GetLocation(3, 0)
		require.NoError(t, err)
		now := time.Now().UnixNano()
		time.Sleep(time.Duration(int64(testRollover)-now%int64(testRollover)) + 5*time.Millisecond)
		var code int
		code, scrape = do(t, s, http.MethodGet, PathMetrics, "")
		require.Equal(t, http.StatusOK, code)
		if ok(scrape) {
			break
		}
	}
	return scrape
}

func exercise(t *testing.T, ix *entrylocation.Index) {
	t.Helper()
	b := ix.NewBatch()
	for l := int64(1); l <= 20; l++ {
		for e := int64(0); e < 200; e++ {
			require.NoError(t, b.AddLocation(l, e, l<<32|(e+1024)))
		}
	}
	require.NoError(t, b.Flush())
	require.NoError(t, b.Close())
	for e := int64(0); e < 50; e++ {
		loc, err := ix.GetLocation(3, e)
		require.NoError(t, err)
		require.Equal(t, 3<<32|(e+1024), loc)
	}
	loc, err := ix.GetLocation(99, 0) // a miss
	require.NoError(t, err)
	require.Zero(t, loc)
	last, err := ix.GetLastEntryInLedger(5)
	require.NoError(t, err)
	require.Equal(t, int64(199), last)
	_, err = ix.GetLastEntryInLedger(500)
	require.ErrorIs(t, err, entrylocation.ErrNoEntry)
	require.NoError(t, ix.Delete(4))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
}

// sample returns the value of the sample with exactly this name and these
// labels in a Prometheus text scrape, or "" if there is none.
func sample(scrape, name string, labels map[string]string) string {
	for _, line := range strings.Split(scrape, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		head, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, rest, hasLabels := strings.Cut(head, "{")
		if n != name {
			continue
		}
		got := map[string]string{}
		if hasLabels {
			for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = strings.Trim(v, `"`)
			}
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			if got[k] != v {
				match = false
			}
		}
		if match {
			return value
		}
	}
	return ""
}

// with returns the labels of d plus extra key, value pairs.
func with(d Directory, extra ...string) map[string]string {
	m := map[string]string{"ledgerDir": d.LedgerDir, "indexDir": d.IndexDir}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// TestMetricsRealIndex scrapes /metrics over real indexes after lookups
// and a compaction triggered over HTTP.
func TestMetricsRealIndex(t *testing.T) {
	for _, stats := range []bool{true, false} {
		t.Run(map[bool]string{true: "statistics", false: "no statistics"}[stats], func(t *testing.T) {
			dirs := openIndexes(t, 2, stats)
			s, err := New(Options{Directories: dirs, EnableStatistics: stats})
			require.NoError(t, err)
			defer s.Close()
			exercise(t, dirs[0].Index.(*entrylocation.Index))

			code, _ := do(t, s, http.MethodPut, PathEntryLocationCompact, `{"entryLocationRocksDBCompact":true}`)
			require.Equal(t, http.StatusOK, code)
			eventually(t, "compactions end", func() bool { return idle(t, s) })
			for _, d := range gcDetails(t, s) {
				require.Equal(t, outcomeCompleted, d.LastEntryLocationCompactionOutcome, d.LastEntryLocationCompactionError)
				require.Equal(t, int64(1), d.EntryLocationCompactionCounter)
				require.InDelta(t, time.Now().UnixMilli(), d.LastEntryLocationCompactionTime, 60e3)
			}

			code, scrape := do(t, s, http.MethodGet, PathMetrics, "")
			require.Equal(t, http.StatusOK, code)
			d0, d1 := dirs[0], dirs[1]
			// 20 ledgers × 200 entries, minus ledger 4 purged and compacted away.
			require.Equal(t, "3800", sample(scrape, "bookie_entries_count", with(d0)))
			require.Equal(t, "0", sample(scrape, "bookie_entries_count", with(d1)))
			require.Equal(t, "50", sample(scrape, "bookie_lookup_entry_location_count", with(d0, "success", "true")))
			require.Equal(t, "1", sample(scrape, "bookie_lookup_entry_location_count", with(d0, "success", "false")))
			require.Equal(t, "1", sample(scrape, "bookie_get_last_entry_in_ledger_count", with(d0, "success", "true")))
			require.Equal(t, "1", sample(scrape, "bookie_get_last_entry_in_ledger_count", with(d0, "success", "false")))
			p99 := sample(scrape, "bookie_lookup_entry_location", with(d0, "success", "true", "quantile", "0.99"))
			if stats {
				require.NotEmpty(t, p99)
				// Upstream's quantile labels, "1.0" included.
				for _, q := range []string{"0.5", "0.75", "0.95", "0.99", "0.999", "0.9999", "1.0"} {
					require.NotEmpty(t, sample(scrape, "bookie_lookup_entry_location", with(d0, "success", "true", "quantile", q)), q)
				}
				require.Empty(t, sample(scrape, "bookie_lookup_entry_location", with(d0, "success", "true", "quantile", "1")))
				later := scrapeAfterRollover(t, s, dirs[0].Index.(*entrylocation.Index), func(scrape string) bool {
					return sample(scrape, "bookie_lookup_entry_location", with(d0, "success", "true", "quantile", "0.99")) != "NaN"
				})
				require.NotEqual(t, "NaN", sample(later, "bookie_lookup_entry_location", with(d0, "success", "true", "quantile", "0.99")))
				require.NotEqual(t, "NaN", sample(later, "bookie_lookup_entry_location", with(d0, "success", "true", "quantile", "1.0")))
				require.NotEqual(t, "0", sample(scrape, "bookie_lookup_entry_location_sum", with(d0, "success", "true")))
				require.Equal(t, "NaN", sample(scrape, "bookie_get_last_entry_in_ledger", with(d1, "success", "true", "quantile", "0.5")))
				require.NotEmpty(t, sample(scrape, "bookie_index_lsm_write_stall_seconds_total", with(d0)))
			} else {
				require.Empty(t, p99)
				require.Equal(t, "0", sample(scrape, "bookie_lookup_entry_location_sum", with(d0, "success", "true")))
				require.NotContains(t, scrape, "bookie_index_lsm_write_stall_seconds_total")
			}
			require.Equal(t, "1", sample(scrape, "bookie_index_entry_location_compactions_total", with(d0, "trigger", "http", "result", "completed")))
			require.Equal(t, "0", sample(scrape, "bookie_index_entry_location_compactions_total", with(d0, "trigger", "periodic", "result", "completed")))
			require.Equal(t, "0", sample(scrape, "bookie_index_entry_location_compacting", with(d0)))
			require.NotEqual(t, "0", sample(scrape, "bookie_index_entry_location_last_compaction_timestamp_seconds", with(d0)))
			// After a full compaction everything is in one level.
			tables := 0
			for level := range 7 {
				v := sample(scrape, "bookie_index_lsm_level_tables", with(d0, "level", strconv.Itoa(level)))
				require.NotEmpty(t, v, "level %d", level)
				n, err := strconv.Atoi(v)
				require.NoError(t, err)
				tables += n
			}
			require.Equal(t, 1, tables)
			for _, kind := range []string{"data", "index", "filter", "top-level"} {
				require.NotEmpty(t, sample(scrape, "bookie_index_lsm_block_cache_hits_total", with(d0, "block", kind)), kind)
				require.NotEmpty(t, sample(scrape, "bookie_index_lsm_block_cache_misses_total", with(d0, "block", kind)), kind)
			}
			require.NotEmpty(t, sample(scrape, "bookie_index_lsm_write_stalls_total", with(d0, "kind", "stop")))
			require.NotEmpty(t, sample(scrape, "bookie_index_lsm_write_stalls_total", with(d0, "kind", "slowdown")))
			for _, name := range []string{"bookie_index_lsm_compaction_written_bytes_total", "bookie_index_lsm_wal_syncs_total", "bookie_index_lsm_flushes_total", "bookie_index_lsm_compactions_total"} {
				v := sample(scrape, name, with(d0))
				require.NotEmpty(t, v, name)
				require.NotEqual(t, "0", v, name)
			}
		})
	}
}

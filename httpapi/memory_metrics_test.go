package httpapi

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/bookie-index/bookie-index/internal/procmem"
	"github.com/stretchr/testify/require"
)

// TestMemoryMetrics: /metrics reports the process's memory by kind over a
// real storage after writes, a checkpoint and reads: the storage's caches
// and the indexes' memtables and block caches are counted, and (on Linux) the kinds add up to the resident
// set, with "other" taking the rest.
func TestMemoryMetrics(t *testing.T) {
	s, st := liveService(t)
	code, scrape := do(t, s, http.MethodGet, PathMetrics, "")
	require.Equal(t, http.StatusOK, code)
	value := func(name string, labels map[string]string) int64 {
		t.Helper()
		v := sample(scrape, name, labels)
		require.NotEmpty(t, v, "%s %v", name, labels)
		f, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err)
		return int64(f)
	}
	kinds := map[string]int64{}
	var sum int64
	for _, k := range []string{"block_cache", "memtables", "write_cache", "read_cache", "go_heap"} {
		kinds[k] = value("bookie_index_memory_bytes", map[string]string{"kind": k})
		sum += kinds[k]
	}
	t.Logf("memory by kind: %v", kinds)
	require.Positive(t, kinds["memtables"], "the checkpoint wrote locations into the indexes")
	require.Positive(t, kinds["write_cache"]+kinds["read_cache"], "entries were written and read")
	require.Positive(t, kinds["go_heap"])
	var readCache int64
	for _, m := range st.Metrics() {
		readCache += m.ReadCacheSize
	}
	require.Equal(t, readCache, kinds["read_cache"])
	for _, d := range s.dirs {
		m := d.Index.Metrics().Engine.BlockCache
		require.LessOrEqual(t, m.AllocatedBytes, m.MappedBytes)
		require.Equal(t, m.MappedBytes, value("bookie_index_lsm_block_cache_mapped_bytes", with(d.Directory)))
	}
	if rss := procmem.ResidentBytes(); rss > 0 {
		resident := value("bookie_index_resident_memory_bytes", nil)
		other := value("bookie_index_memory_bytes", map[string]string{"kind": "other"})
		require.Positive(t, other, "the program's code at least")
		require.InDelta(t, resident, sum+other, float64(resident)/10, "the kinds add up to the resident set (it moves between reads)")
	}
}

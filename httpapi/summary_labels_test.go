package httpapi

import (
	"net/http"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/internal/opstats"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// TestSummariesAreOpStatsLoggers checks that every summary a live
// service exports has the shape upstream's Prometheus provider gives an
// OpStatsLogger (all of upstream's summaries are): per directory one
// series with success="true" and one with success="false", each with the
// provider's quantiles. flush_size and the read-ahead batch summaries are
// values, not latencies: their sums are bytes and entries.
func TestSummariesAreOpStatsLoggers(t *testing.T) {
	s, st := liveService(t)
	for _, d := range st.Dirs() {
		_, err := d.RunGC(bookie.GCRequest{Force: true})
		require.NoError(t, err)
	}
	families, err := s.Registry().Gather()
	require.NoError(t, err)
	summaries := map[string]*dto.MetricFamily{}
	for _, f := range families {
		if f.GetType() != dto.MetricType_SUMMARY {
			continue
		}
		summaries[f.GetName()] = f
		sides := map[[2]string]int{} // (ledgerDir, success) → series
		for _, m := range f.GetMetric() {
			var dir, success string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "ledgerDir":
					dir = l.GetValue()
				case "success":
					success = l.GetValue()
				}
			}
			require.Contains(t, []string{"true", "false"}, success, "%s: a series without success=\"true\"|\"false\"", f.GetName())
			sides[[2]string{dir, success}]++
			require.Len(t, m.GetSummary().GetQuantile(), len(opstats.SummaryQuantiles()), "%s: quantiles", f.GetName())
		}
		for k, n := range sides {
			require.Equal(t, 1, n, "%s %v", f.GetName(), k)
			other := [2]string{k[0], map[string]string{"true": "false", "false": "true"}[k[1]]}
			require.Contains(t, sides, other, "%s: %v has no counterpart", f.GetName(), k)
		}
	}
	for _, name := range []string{"bookie_flush_size", "bookie_readahead_batch_count", "bookie_readahead_batch_size",
		"bookie_THREAD_RUNTIME", "bookie_GC_LEDGER_RUNTIME", "bookie_EXTRACT_META_RUNTIME", "bookie_COMPACT_RUNTIME",
		"bookie_add_entry", "bookie_flush"} {
		require.Contains(t, summaries, name)
	}

	// The values' sums are in their own unit: the bytes checkpoints wrote.
	var flushed float64
	for _, m := range summaries["bookie_flush_size"].GetMetric() {
		flushed += m.GetSummary().GetSampleSum()
	}
	var want int64
	for _, m := range st.Metrics() {
		want += m.FlushBytes
	}
	require.Positive(t, want)
	require.Equal(t, float64(want), flushed)

	code, body := do(t, s, http.MethodGet, PathMetrics, "")
	require.Equal(t, http.StatusOK, code)
	require.Regexp(t, `bookie_flush_size_count\{[^}]*success="true"\} 1\n`, body)
	require.Regexp(t, `bookie_flush_size_count\{[^}]*success="false"\} 0\n`, body)
}

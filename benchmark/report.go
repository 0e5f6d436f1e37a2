package benchmark

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// LoadRow is the load phase's result.
type LoadRow struct {
	Engine string `json:"engine"`
	Phase  string `json:"phase"`
	// LoadVia is how the index was filled: "write" (synced batches) or
	// "ingest" (tables built outside the DB and ingested, --load-via).
	LoadVia         string  `json:"load_via"`
	Layout          string  `json:"layout"`
	Keys            int64   `json:"keys"`
	WriteKeysPerSec float64 `json:"write_keys_per_sec"`
	TotalKeysPerSec float64 `json:"total_keys_per_sec"`
	WriteSeconds    float64 `json:"write_seconds"`
	SettleSeconds   float64 `json:"settle_seconds"`
	// IdleSeconds is the wait, after the settle, for the work an engine
	// does once writes stop (bookie-index's idle compaction); not in
	// TotalKeysPerSec.
	IdleSeconds float64 `json:"idle_seconds"`
	// WriteCPUSeconds, SettleCPUSeconds and IdleCPUSeconds are the
	// process's CPU (user + system, from getrusage) in each part.
	WriteCPUSeconds     float64 `json:"write_cpu_seconds"`
	SettleCPUSeconds    float64 `json:"settle_cpu_seconds"`
	IdleCPUSeconds      float64 `json:"idle_cpu_seconds"`
	TableBytes          int64   `json:"table_bytes"`
	BytesPerKey         float64 `json:"bytes_per_key"`
	TablesPerLevel      []int   `json:"tables_per_level"`
	BytesByTier         Tiers   `json:"bytes_by_tier"`
	MaxFilterBlockBytes int64   `json:"max_filter_block_bytes"`
	PeakRSSBytes        int64   `json:"peak_rss_bytes"`
	// EngineVersion and Options tell arms of one engine apart (a
	// ProcessArm's: BookKeeper's rocksdbjni, its bookie-conf or OPTIONS
	// file mode); empty for this module's engines.
	EngineVersion string `json:"engine_version,omitempty"`
	Options       string `json:"options,omitempty"`
	// Extra holds the engine's write counters (LoadStatser).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// OpRow is the result of a get, floor or miss phase at one cache size.
type OpRow struct {
	Engine           string  `json:"engine"`
	Phase            string  `json:"phase"`
	Layout           string  `json:"layout"`
	CacheBytes       int64   `json:"cache_bytes"`
	ShardBytes       int64   `json:"shard_bytes"`
	Threads          int     `json:"threads"`
	Ops              int64   `json:"ops"`
	OpsPerSec        float64 `json:"ops_per_sec"`
	FoundFraction    float64 `json:"found_fraction"`
	FilterReadsPerOp float64 `json:"filter_reads_per_op"`
	// FilterSkipsPerOp: lookups per op that skipped an uncached filter
	// block (lsm.Options.AlwaysLoadFilters; bookie-index only).
	FilterSkipsPerOp float64 `json:"filter_skips_per_op"`
	IndexReadsPerOp  float64 `json:"index_reads_per_op"`
	DataReadsPerOp   float64 `json:"data_reads_per_op"`
	BytesReadPerOp   float64 `json:"bytes_read_per_op"`
	CacheHitsPerOp   float64 `json:"cache_hits_per_op"`
	CPUMicrosPerOp   float64 `json:"cpu_us_per_op"`
	GCCPUFraction    float64 `json:"gc_cpu_fraction"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	// CacheMemoryBytes is what the engine's block cache held from the
	// system at the end of the phase, when it reports it (MemoryReporter;
	// bookie-index's blocks live outside the Go heap); GoMemoryBytes is
	// what the Go runtime held (heap, stacks, metadata; not what it gave
	// back). With the peak RSS they split the process's memory.
	CacheMemoryBytes int64 `json:"cache_memory_bytes,omitempty"`
	GoMemoryBytes    int64 `json:"go_memory_bytes"`
	// DiskBound marks a row of the disk-bound mode (--disk-bound): measured
	// in a reader process of its own with the store's files kept out of
	// the page cache; Extra has the disk's own figures.
	DiskBound bool `json:"disk_bound,omitempty"`
	// Extra, phase-specific numbers (delete, mixed and disk-bound phases).
	Extra map[string]float64 `json:"extra,omitempty"`
	// EngineVersion and Options: as in LoadRow.
	EngineVersion string `json:"engine_version,omitempty"`
	Options       string `json:"options,omitempty"`
}

// variant names a row's engine version and options, if it has them.
func variant(version, options string) string {
	if version == "" && options == "" {
		return ""
	}
	return " [" + strings.TrimSpace(version+" "+options) + "]"
}

type reporter struct {
	w       io.Writer
	json    bool
	lastHdr string
}

func (r *reporter) emit(row interface{}) {
	if r.json {
		b, _ := json.Marshal(row)
		fmt.Fprintln(r.w, string(b))
		return
	}
	switch row := row.(type) {
	case LoadRow:
		fmt.Fprintf(r.w, "\nload (%s%s, %s, via %s): %d keys, %.0f keys/s writing, %.0f keys/s with the compaction settle (%.1fs + %.1fs), then %.1fs idle\n",
			row.Engine, variant(row.EngineVersion, row.Options), row.Layout, row.LoadVia, row.Keys, row.WriteKeysPerSec, row.TotalKeysPerSec, row.WriteSeconds, row.SettleSeconds, row.IdleSeconds)
		fmt.Fprintf(r.w, "  CPU %.1fs writing, %.1fs settling, %.1fs idle\n", row.WriteCPUSeconds, row.SettleCPUSeconds, row.IdleCPUSeconds)
		if x := row.Extra; x != nil {
			fmt.Fprintf(r.w, "  %.0f flushes (%s), %.0f compactions (%s written, %s more while idle), %.0f write stops\n",
				x["flushes"], formatMiB(int64(x["flush_bytes"])), x["compactions"], formatMiB(int64(x["compaction_bytes_written"])),
				formatMiB(int64(x["idle_compaction_bytes_written"])), x["write_stops"])
		}
		fmt.Fprintf(r.w, "  tables per level %v, %d table bytes (%.2f bytes/key), peak RSS %s\n",
			row.TablesPerLevel, row.TableBytes, row.BytesPerKey, formatMiB(row.PeakRSSBytes))
		fmt.Fprintf(r.w, "  bytes by tier: data %d, index %d, top index %d, filter %d, top filter %d; largest filter block %d\n",
			row.BytesByTier.Data, row.BytesByTier.Index, row.BytesByTier.TopIndex, row.BytesByTier.Filter, row.BytesByTier.TopFilter, row.MaxFilterBlockBytes)
	case OpRow:
		if row.Phase == "delete" {
			x := row.Extra
			fmt.Fprintf(r.w, "\ndelete (%s, %s): %.0f ledgers deleted and purged in %.3fs; floor lookups: %.0f/s on deleted ledgers (found %.3f), %.0f/s on live ones (found %.3f)\n",
				row.Engine, row.Layout, x["deleted_ledgers"], x["delete_seconds"], x["floor_deleted_per_sec"], x["floor_deleted_found"], row.OpsPerSec, row.FoundFraction)
			fmt.Fprintf(r.w, "  table bytes %.0f -> %.0f after %.1fs of background compaction: %.1f%% given back (%.1f%% of the ledgers were deleted)\n",
				x["table_bytes_before"], x["table_bytes_after"], x["settle_seconds"], 100*x["reclaimed_fraction"], 100*x["expected_deleted_fraction"])
			return
		}
		v := variant(row.EngineVersion, row.Options)
		hdr := row.Engine + v + "/" + row.Phase + "/" + row.Layout
		mode := ""
		if row.DiskBound {
			hdr, mode = hdr+"/disk-bound", ", disk-bound"
		}
		if hdr != r.lastHdr {
			r.lastHdr = hdr
			fmt.Fprintf(r.w, "\n%s (%s%s, %s, %d threads%s)\n", row.Phase, row.Engine, v, row.Layout, row.Threads, mode)
			fmt.Fprintf(r.w, "%-18s %10s %7s %9s %8s %8s %7s %11s %8s %10s %6s %9s %9s %8s\n",
				"cache (shard)", "ops/s", "found", "filter/op", "skips/op", "index/op", "data/op", "bytes/op", "hits/op", "CPU µs/op", "GC%", "peak RSS", "cache mem", "Go mem")
		}
		cacheMem := "-"
		if row.CacheMemoryBytes > 0 {
			cacheMem = formatMiB(row.CacheMemoryBytes)
		}
		fmt.Fprintf(r.w, "%-18s %10.0f %7.3f %9.3f %8.3f %8.3f %7.3f %11.0f %8.3f %10.2f %6.1f %9s %9s %8s",
			FormatSize(row.CacheBytes)+" ("+FormatSize(row.ShardBytes)+")", row.OpsPerSec, row.FoundFraction, row.FilterReadsPerOp,
			row.FilterSkipsPerOp, row.IndexReadsPerOp, row.DataReadsPerOp, row.BytesReadPerOp, row.CacheHitsPerOp, row.CPUMicrosPerOp, 100*row.GCCPUFraction,
			formatMiB(row.PeakRSSBytes), cacheMem, formatMiB(row.GoMemoryBytes))
		var extras []string
		for k, v := range row.Extra {
			extras = append(extras, fmt.Sprintf("%s=%.4g", k, v))
		}
		sort.Strings(extras)
		if len(extras) > 0 {
			fmt.Fprintf(r.w, "  %s", strings.Join(extras, " "))
		}
		fmt.Fprintln(r.w)
	}
}

func formatMiB(n int64) string { return fmt.Sprintf("%.0fMiB", float64(n)/(1<<20)) }

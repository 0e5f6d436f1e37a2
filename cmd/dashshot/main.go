// Command dashshot draws a static picture of the Grafana dashboard's
// queries (docs/grafana/bookie-index.json) from a running service: it
// opens a small storage in a temporary directory, serves it with httpapi,
// drives writes, reads and a ledger deletion, scrapes /metrics every
// interval and writes an HTML page of SVG line charts, one per panel,
// with the panel's queries evaluated over consecutive scrapes. Grafana is
// not packaged by Debian, so docs/grafana/dashboard.png is this page
// screenshotted with headless Chromium:
//
//	go run ./cmd/dashshot -out /tmp/dash.html
//	chromium --headless --no-sandbox --disable-gpu --window-size=1400,1620 \
//	    --screenshot=docs/grafana/dashboard.png file:///tmp/dash.html
package main

import (
	"bufio"
	"flag"
	"fmt"
	"html"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/httpapi"
	"github.com/bookie-index/bookie-index/lsm"
)

func main() {
	out := flag.String("out", "dashboard.html", "HTML file to write")
	samples := flag.Int("samples", 12, "scrapes")
	interval := flag.Duration("interval", time.Second, "time between scrapes")
	flag.Parse()
	if err := run(*out, *samples, *interval); err != nil {
		log.Fatal(err)
	}
}

// sample is one series of a scrape.
type sample struct {
	labels map[string]string
	value  float64
}

// scrape maps a sample name to its series.
type scrape map[string][]sample

func parse(r io.Reader) (scrape, error) {
	s := scrape{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("parsing %q: %w", line, err)
		}
		head := line[:sp]
		name, rest, _ := strings.Cut(head, "{")
		labels := map[string]string{}
		for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), "\",") {
			k, val, ok := strings.Cut(kv, "=\"")
			if ok {
				labels[k] = strings.TrimSuffix(val, "\"")
			}
		}
		s[name] = append(s[name], sample{labels, v})
	}
	return s, sc.Err()
}

// sumBy adds a name's series by the value of label ("" sums all), keeping
// those whose labels match where.
func (s scrape) sumBy(name, label string, where map[string]string) map[string]float64 {
	out := map[string]float64{}
next:
	for _, x := range s[name] {
		for k, v := range where {
			if x.labels[k] != v {
				continue next
			}
		}
		out[x.labels[label]] += x.value
	}
	return out
}

// query evaluates one panel's series from two consecutive scrapes dt apart.
type query func(prev, cur scrape, dt float64) map[string]float64

func gauge(name, label string, where map[string]string) query {
	return func(_, cur scrape, _ float64) map[string]float64 { return cur.sumBy(name, label, where) }
}

func rate(name, label string, where map[string]string) query {
	return func(prev, cur scrape, dt float64) map[string]float64 {
		p, c := prev.sumBy(name, label, where), cur.sumBy(name, label, where)
		out := map[string]float64{}
		for k, v := range c {
			out[k] = max(v-p[k], 0) / dt
		}
		return out
	}
}

func ratio(hits, misses, label string) query {
	return func(prev, cur scrape, dt float64) map[string]float64 {
		h, m := rate(hits, label, nil)(prev, cur, dt), rate(misses, label, nil)(prev, cur, dt)
		out := map[string]float64{}
		for k, v := range h {
			if v+m[k] > 0 {
				out[k] = v / (v + m[k])
			}
		}
		return out
	}
}

// named renames a query's series.
func named(prefix string, q query) query {
	return func(prev, cur scrape, dt float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range q(prev, cur, dt) {
			out[strings.TrimSpace(prefix+" "+k)] = v
		}
		return out
	}
}

type panel struct {
	title, unit string
	queries     []query
}

func panels() []panel {
	ok := map[string]string{"success": "true"}
	q := func(quantile string) map[string]string {
		return map[string]string{"success": "true", "quantile": quantile}
	}
	return []panel{
		{"Lookup rate", "ops/s", []query{named("all", rate("bookie_lookup_entry_location_count", "", nil)),
			named("read-ahead", rate("bookie_index_storage_readahead_index_lookups_total", "", nil))}},
		{"Lookup latency (last window)", "ms", []query{named("p50", gauge("bookie_lookup_entry_location", "", q("0.5"))),
			named("p99", gauge("bookie_lookup_entry_location", "", q("0.99"))), named("max", gauge("bookie_lookup_entry_location", "", q("1.0")))}},
		{"Block cache hit ratio by block kind", "ratio", []query{ratio("bookie_index_lsm_block_cache_hits_total", "bookie_index_lsm_block_cache_misses_total", "block")}},
		{"Block cache occupancy", "bytes", []query{named("used", gauge("bookie_index_lsm_block_cache_usage_bytes", "", nil)),
			named("pinned", gauge("bookie_index_lsm_block_cache_pinned_bytes", "", nil))}},
		{"Bytes per level", "bytes", []query{named("L", gauge("bookie_index_lsm_level_bytes", "level", nil))}},
		{"Tables per level", "tables", []query{named("L", gauge("bookie_index_lsm_level_tables", "level", nil))}},
		{"Compactions and flushes", "per s", []query{named("compactions", rate("bookie_index_lsm_compactions_total", "", nil)),
			named("flushes", rate("bookie_index_lsm_flushes_total", "", nil))}},
		{"Write stalls", "per s", []query{named("", rate("bookie_index_lsm_write_stalls_total", "kind", nil))}},
		{"Write cache", "bytes", []query{named("used", gauge("bookie_write_cache_size", "", nil)), named("capacity", gauge("bookie_write_cache_max_size", "", nil))}},
		{"Throttled and rejected adds", "per s", []query{named("throttled", rate("bookie_throttled_write_requests", "", nil)),
			named("rejected", rate("bookie_rejected_write_requests", "", nil))}},
		{"Checkpoint latency", "ms", []query{named("p99 (max of directories)", func(_, cur scrape, _ float64) map[string]float64 {
			hi := math.NaN()
			for _, v := range cur.sumBy("bookie_flush", "ledgerDir", q("0.99")) {
				if math.IsNaN(hi) || v > hi {
					hi = v
				}
			}
			return map[string]float64{"": hi}
		}),
			func(prev, cur scrape, dt float64) map[string]float64 {
				s, c := rate("bookie_flush_sum", "", ok)(prev, cur, dt), rate("bookie_flush_count", "", ok)(prev, cur, dt)
				if c[""] == 0 {
					return nil
				}
				return map[string]float64{"mean": s[""] / c[""]}
			}}},
		{"Read cache hit ratio", "ratio", []query{named("read cache", ratio("bookie_read_cache_hits", "bookie_read_cache_misses", ""))}},
		{"GC reclaimed bytes", "bytes/s", []query{named("deleted logs", rate("bookie_RECLAIMED_DELETION_SPACE_BYTES", "", nil)),
			named("compacted logs", rate("bookie_RECLAIMED_COMPACTION_SPACE_BYTES", "", nil))}},
		{"Read-only state and write health", "", []query{named("server status", gauge("bookie_SERVER_STATUS", "", nil)), named("index out of space", gauge("bookie_index_lsm_out_of_space", "", nil)),
			named("checkpoint failures", gauge("bookie_index_storage_checkpoint_failures", "", nil))}},
	}
}

func run(out string, samples int, interval time.Duration) error {
	dir, err := os.MkdirTemp("", "dashshot")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Small memtables, so that the index flushes and compacts within the
	// run and reads go through tables and the block cache.
	engine := lsm.DefaultOptions()
	engine.WriteBufferSize = 64 << 10
	engine.TargetFileSizeBase = 64 << 10
	engine.MaxBytesForLevelBase = 1 << 20
	st, err := bookie.Open(&bookie.Options{
		Index:            &entrylocation.Options{Engine: engine, EnableStatistics: true, LatencyRollover: interval},
		LedgerDirs:       []string{filepath.Join(dir, "l0"), filepath.Join(dir, "l1")},
		FlushInterval:    200 * time.Millisecond,
		GCWaitTime:       time.Second,
		WriteCacheSize:   8 << 20,
		ReadCacheSize:    1 << 20,
		LogSizeLimit:     256 << 10,
		EnableStatistics: true,
		LatencyRollover:  interval,
	})
	if err != nil {
		return err
	}
	defer st.Close()
	opts := httpapi.Options{Storage: st, GC: st, EnableStatistics: true}
	for _, d := range st.Dirs() {
		opts.Directories = append(opts.Directories, httpapi.Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex()})
	}
	svc, err := httpapi.New(opts)
	if err != nil {
		return err
	}
	defer svc.Close()
	srv := httptest.NewServer(svc)
	defer srv.Close()

	stop := make(chan struct{})
	loadDone := make(chan error, 1)
	go func() { loadDone <- load(st, stop) }()

	var scrapes []scrape
	for i := 0; i <= samples; i++ {
		time.Sleep(interval)
		resp, err := http.Get(srv.URL + httpapi.PathMetrics)
		if err != nil {
			return err
		}
		s, err := parse(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		scrapes = append(scrapes, s)
	}
	close(stop)
	if err := <-loadDone; err != nil {
		return err
	}
	return os.WriteFile(out, []byte(render(scrapes, interval)), 0o644)
}

// load writes ledgers of 1 KiB entries, reads back older ones (read-cache
// misses, read-aheads) and deletes old ledgers, so that every panel moves.
func load(st *bookie.Storage, stop <-chan struct{}) error {
	payload := make([]byte, 1024)
	for l := int64(1); ; l++ {
		select {
		case <-stop:
			return nil
		default:
		}
		for e := int64(0); e < 500; e++ {
			if err := st.AddEntry(l, e, payload); err != nil && !strings.Contains(err.Error(), "rejected") {
				return err
			}
		}
		if l > 3 {
			for e := int64(0); e < 500; e += 50 {
				_, _ = st.GetEntry(l-3, e)
			}
		}
		if l > 8 {
			_, _ = st.DeleteLedger(l - 8)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var colors = []string{"#7eb26d", "#eab839", "#6ed0e0", "#ef843c", "#e24d42", "#1f78c1", "#ba43a9", "#705da0"}

func render(scrapes []scrape, interval time.Duration) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body{background:#111217;color:#ccccdc;font-family:DejaVu Sans,sans-serif;margin:12px}
h1{font-size:18px;margin:4px 0 10px} .grid{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.p{background:#181b1f;border:1px solid #2c3235;border-radius:3px;padding:6px}
.t{font-size:13px;margin-bottom:2px} .l{font-size:11px} text{fill:#8e8e8e;font-size:10px}
</style></head><body>`)
	fmt.Fprintf(&b, "<h1>bookie-index — the dashboard's queries over %d scrapes, %v apart (static render; docs/grafana/bookie-index.json)</h1><div class=grid>", len(scrapes), interval)
	dt := interval.Seconds()
	for _, p := range panels() {
		series := map[string][]float64{}
		for i := 1; i < len(scrapes); i++ {
			for _, q := range p.queries {
				for k, v := range q(scrapes[i-1], scrapes[i], dt) {
					if series[k] == nil {
						series[k] = make([]float64, len(scrapes)-1)
						for j := range series[k] {
							series[k][j] = math.NaN()
						}
					}
					series[k][i-1] = v
				}
			}
		}
		b.WriteString(chart(p, series))
	}
	b.WriteString("</div></body></html>\n")
	return b.String()
}

func chart(p panel, series map[string][]float64) string {
	const w, h, left, bottom = 640, 150, 60, 16
	names := make([]string, 0, len(series))
	hi := 0.0
	for k, vs := range series {
		names = append(names, k)
		for _, v := range vs {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				hi = max(hi, v)
			}
		}
	}
	sort.Strings(names)
	if hi == 0 {
		hi = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<div class=p><div class=t>%s <span class=l>(%s)</span></div><svg width="%d" height="%d">`, html.EscapeString(p.title), html.EscapeString(p.unit), w, h+bottom)
	for i := 0; i <= 2; i++ {
		y := float64(h) - float64(i)*float64(h-10)/2
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.0f" y2="%.0f" stroke="#2c3235"/><text x="2" y="%.0f">%s</text>`, left, w, y, y, y+3, human(hi*float64(i)/2))
	}
	for i, k := range names {
		vs := series[k]
		var pts []string
		for j, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			x := left + float64(j)*float64(w-left-5)/float64(max(len(vs)-1, 1))
			y := float64(h) - v/hi*float64(h-10)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke-width="1.5" stroke="%s" points="%s"/>`, colors[i%len(colors)], strings.Join(pts, " "))
	}
	b.WriteString("</svg><div class=l>")
	for i, k := range names {
		fmt.Fprintf(&b, `<span style="color:%s">■</span> %s &nbsp; `, colors[i%len(colors)], html.EscapeString(k))
	}
	if len(names) == 0 {
		b.WriteString("no data")
	}
	b.WriteString("</div></div>")
	return b.String()
}

// human formats an axis value.
func human(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1fG", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1fM", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1fK", v/(1<<10))
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

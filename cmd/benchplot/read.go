package main

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// row is the part of a bench JSON row (benchmark's LoadRow and
// OpRow) that the plot reads. It is declared here rather than imported so
// that the plot reads files written by older commits too.
type row struct {
	Engine     string   `json:"engine"`
	Phase      string   `json:"phase"`
	Layout     string   `json:"layout"`
	Keys       int64    `json:"keys"`
	CacheBytes int64    `json:"cache_bytes"`
	OpsPerSec  *float64 `json:"ops_per_sec"`
	DiskBound  bool     `json:"disk_bound"`
	// EngineVersion and Options tell arms of one engine apart (the
	// BookKeeper arm's rocksdbjni and option mode); empty for others.
	EngineVersion string `json:"engine_version"`
	Options       string `json:"options"`
}

// variant is what tells a row's arm apart from others of its engine: its
// version and options, without a leading ENGINE-VERSION word (the
// BookKeeper arm's "bookkeeper-4.18.2 rocksdbjni-9.9.3" and "bookie-conf"
// make "rocksdbjni-9.9.3 bookie-conf").
func (r row) variant() string {
	v := r.EngineVersion
	if first, rest, ok := strings.Cut(v, " "); ok && strings.HasPrefix(first, r.Engine+"-") {
		v = rest
	}
	return strings.TrimSpace(v + " " + r.Options)
}

// diskBoundSuffix marks the phase of a disk-bound row (bench --disk-bound):
// its own row of charts, since a get that reads the disk is orders of
// magnitude slower than one the caches answer.
const diskBoundSuffix = " (disk-bound)"

// sample is one get or floor row with its key count. After medians, one
// sample stands for every row that shares its key.
type sample struct {
	key
	ops  float64
	rows int // how many rows the median was taken over
}

type key struct {
	engine, variant, layout, phase string
	keys, cache                    int64
}

func isPlotted(phase string) bool { return phase == "get" || phase == "floor" }

// readArg reads one [KEYS=]PATH argument.
func readArg(arg string) ([]sample, error) {
	path, keys := arg, int64(0)
	if i := strings.IndexByte(arg, '='); i > 0 {
		if n, err := parseCount(arg[:i]); err == nil {
			path, keys = arg[i+1:], n
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRows(path, f, keys)
}

// readRows reads the JSON rows of one file. keys, if not 0, is the key
// count the argument gave for the file.
func readRows(name string, f io.Reader, keys int64) ([]sample, error) {
	loaded := map[string]int64{} // engine+"/"+layout+"/"+variant -> keys of its last load row
	var out []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var r row
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return nil, errors.Wrapf(err, "%s:%d: not a bench JSON row", name, line)
		}
		if r.Engine == "" || r.Phase == "" {
			return nil, errors.Newf("%s:%d: not a bench JSON row: no engine or phase", name, line)
		}
		run := r.Engine + "/" + r.Layout + "/" + r.variant()
		switch {
		case r.Phase == "load":
			if keys != 0 && r.Keys != keys {
				return nil, errors.Newf("%s:%d: load row has %d keys, the argument says %d", name, line, r.Keys, keys)
			}
			loaded[run] = r.Keys
		case isPlotted(r.Phase):
			n, ok := loaded[run]
			if !ok {
				n = keys
			}
			if n <= 0 {
				return nil, errors.Newf("%s:%d: %s row of %s with no key count: no load row of %s before it; give it as KEYS=%s",
					name, line, r.Phase, r.Engine, run, name)
			}
			if r.OpsPerSec == nil || r.CacheBytes <= 0 {
				return nil, errors.Newf("%s:%d: %s row without ops_per_sec or cache_bytes", name, line, r.Phase)
			}
			phase := r.Phase
			if r.DiskBound {
				phase += diskBoundSuffix
			}
			out = append(out, sample{key: key{r.Engine, r.variant(), r.Layout, phase, n, r.CacheBytes}, ops: *r.OpsPerSec, rows: 1})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errors.Wrapf(err, "%s", name)
	}
	return out, nil
}

// parseCount parses a key count: a number with an optional K, M or G
// (decimal, either case) suffix, such as 5M, 5m or 1.5G.
func parseCount(s string) (int64, error) {
	num, mult := s, 1.0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			mult = 1e3
		case 'M', 'm':
			mult = 1e6
		case 'G', 'g':
			mult = 1e9
		}
		if mult != 1 {
			num = s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || v*mult >= 1<<62 {
		return 0, errors.Newf("bad key count %q", s)
	}
	return int64(math.Round(v * mult)), nil
}

// medians folds the samples that share a key into one, the median of
// their ops/s, sorted by key.
func medians(in []sample) []sample {
	groups := map[key][]float64{}
	for _, s := range in {
		groups[s.key] = append(groups[s.key], s.ops)
	}
	out := make([]sample, 0, len(groups))
	for k, v := range groups {
		sort.Float64s(v)
		m := v[len(v)/2]
		if len(v)%2 == 0 {
			m = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		out = append(out, sample{key: k, ops: m, rows: len(v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key.less(out[j].key) })
	return out
}

func (a key) less(b key) bool {
	switch {
	case a.engine != b.engine:
		return a.engine < b.engine
	case a.variant != b.variant:
		return a.variant < b.variant
	case a.layout != b.layout:
		return a.layout < b.layout
	case a.phase != b.phase:
		return a.phase < b.phase
	case a.keys != b.keys:
		return a.keys < b.keys
	}
	return a.cache < b.cache
}

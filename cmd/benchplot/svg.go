package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// Geometry of the figure, in SVG user units (pixels).
const (
	width      = 960.0
	colW       = width / 2
	titleH     = 56.0
	chartH     = 280.0
	padL       = 70.0 // room for the y tick labels
	padR       = 24.0
	padT       = 28.0 // room for the chart title
	padB       = 46.0 // room for the x tick labels and axis title
	xInset     = 24.0 // the outermost points sit this far inside the axes
	legendLine = 16.0
)

// Colours tell engines apart, dash patterns the other series dimension;
// both cycle when there are more series than entries.
var (
	colours = [...]string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}
	dashes  = [...]string{"", "8 4", "2 3", "8 3 2 3", "12 3 3 3 3 3", "4 6"}
)

// column is one of the two panels: which field is the x axis and which
// names the series.
type column struct {
	title, xlabel string
	x, dim        func(sample) int64
	xfmt, dimfmt  func(int64) string
}

var errNoRows = errors.New("no get or floor rows in the input")

type series struct {
	name   string // engine (and layout, and variant, when there are several)
	dim    int64  // the other dimension: key count or cache size
	colour string
	dash   string
	pts    []sample
}

// render writes the SVG of the samples (sorted, one per key, as medians
// returns them).
func render(w io.Writer, samples []sample) error {
	if len(samples) == 0 {
		return errNoRows
	}
	layouts := map[string]bool{}
	variants := map[string]map[string]bool{} // engine -> its variants
	maxRows := 0
	for _, s := range samples {
		layouts[s.layout] = true
		if variants[s.engine] == nil {
			variants[s.engine] = map[string]bool{}
		}
		variants[s.engine][s.variant] = true
		maxRows = max(maxRows, s.rows)
	}
	labels := variantLabels(variants)
	name := func(s sample) string {
		n := s.engine
		if len(layouts) > 1 {
			n += " " + s.layout
		}
		if l := labels[s.engine][s.variant]; l != "" {
			n += " (" + l + ")"
		}
		return n
	}
	colourOf := indexer(samples, name)
	cols := []column{
		{title: "ops/s vs cache size", xlabel: "block cache size (log scale)",
			x: func(s sample) int64 { return s.cache }, dim: func(s sample) int64 { return s.keys },
			xfmt: formatBytes, dimfmt: func(n int64) string { return formatCount(n) + " keys" }},
		{title: "ops/s vs key count", xlabel: "keys (log scale)",
			x: func(s sample) int64 { return s.keys }, dim: func(s sample) int64 { return s.cache },
			xfmt: formatCount, dimfmt: func(n int64) string { return formatBytes(n) + " cache" }},
	}
	phases := []string{"get", "floor"}
	for _, phase := range phases[:2] {
		for _, s := range samples {
			if s.phase == phase+diskBoundSuffix {
				phases = append(phases, s.phase)
				break
			}
		}
	}

	var legends [][]series
	legendN := 0
	for _, c := range cols {
		l := seriesOf(samples, c, name, colourOf, "")
		legends = append(legends, l)
		legendN = max(legendN, len(l))
	}
	height := titleH + chartH*float64(len(phases)) + 12 + legendLine*float64(legendN) + 12

	var b bytes.Buffer
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%s\" height=\"%s\" viewBox=\"0 0 %s %s\" font-family=\"sans-serif\" font-size=\"12\">\n",
		num(width), num(height), num(width), num(height))
	fmt.Fprintf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n")
	text(&b, width/2, 22, "middle", "font-size=\"16\" font-weight=\"bold\"",
		"Scale curve: get and floor ops/s against block cache size and key count")
	note := "Each point is one bench row; x axes are logarithmic."
	if maxRows > 1 {
		note = fmt.Sprintf("Each point is the median ops/s of the rows sharing engine, layout, phase, key count and cache size (up to %d rows a point); x axes are logarithmic.", maxRows)
	}
	if len(phases) > 2 {
		note += " Disk-bound: the index's files kept out of the page cache."
	}
	text(&b, width/2, 42, "middle", "fill=\"#444\"", note)
	for pi, phase := range phases {
		for ci, c := range cols {
			chart(&b, float64(ci)*colW, titleH+float64(pi)*chartH, phase+": "+c.title, c,
				seriesOf(samples, c, name, colourOf, phase))
		}
	}
	for ci, l := range legends {
		x := float64(ci)*colW + padL
		for i, s := range l {
			y := titleH + chartH*float64(len(phases)) + 12 + legendLine*float64(i) + legendLine/2
			fmt.Fprintf(&b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
				num(x), num(y), num(x+32), num(y), s.colour, dashAttr(s.dash))
			fmt.Fprintf(&b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>\n", num(x+16), num(y), s.colour)
			text(&b, x+40, y+4, "start", "", s.name+", "+cols[ci].dimfmt(s.dim))
		}
	}
	fmt.Fprintf(&b, "</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// variantLabels names the variants of each engine that has more than
// one by the words of theirs that not all of them share: rocksdbjni
// versions and option modes of the BookKeeper arm become "bookie-conf"
// and "file" when one version ran, "rocksdbjni-9.9.3" and
// "rocksdbjni-10.10.1" when one mode did.
func variantLabels(variants map[string]map[string]bool) map[string]map[string]string {
	labels := map[string]map[string]string{}
	for engine, vs := range variants {
		if len(vs) < 2 {
			continue
		}
		count := map[string]int{}
		for v := range vs {
			for _, w := range strings.Fields(v) {
				count[w]++
			}
		}
		labels[engine] = map[string]string{}
		for v := range vs {
			var own []string
			for _, w := range strings.Fields(v) {
				if count[w] < len(vs) {
					own = append(own, w)
				}
			}
			if len(own) == 0 {
				own = []string{v} // the variant whose words all the others share: its full name
			}
			labels[engine][v] = strings.Join(own, " ")
		}
	}
	return labels
}

// indexer numbers the distinct values of f over the samples in sorted order.
func indexer(samples []sample, f func(sample) string) map[string]int {
	m := map[string]int{}
	for _, s := range samples {
		m[f(s)] = 0
	}
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		m[n] = i
	}
	return m
}

// seriesOf groups the samples of phase ("" for every phase, which the
// legend uses) into the column's series, sorted by name and dimension,
// each with its points sorted by x. The dash pattern is the rank of the
// dimension's value among all samples, so it matches across charts.
func seriesOf(samples []sample, c column, name func(sample) string, colourOf map[string]int, phase string) []series {
	dims := map[int64]int{}
	for _, s := range samples {
		dims[c.dim(s)] = 0
	}
	var dv []int64
	for d := range dims {
		dv = append(dv, d)
	}
	sort.Slice(dv, func(i, j int) bool { return dv[i] < dv[j] })
	for i, d := range dv {
		dims[d] = i
	}
	type sk struct {
		name string
		dim  int64
	}
	byKey := map[sk]*series{}
	var out []*series
	for _, s := range samples {
		if phase != "" && s.phase != phase {
			continue
		}
		k := sk{name(s), c.dim(s)}
		sr := byKey[k]
		if sr == nil {
			sr = &series{name: k.name, dim: k.dim,
				colour: colours[colourOf[k.name]%len(colours)], dash: dashes[dims[k.dim]%len(dashes)]}
			byKey[k] = sr
			out = append(out, sr)
		}
		if phase != "" {
			sr.pts = append(sr.pts, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].dim < out[j].dim
	})
	res := make([]series, len(out))
	for i, s := range out {
		sort.Slice(s.pts, func(a, b int) bool { return c.x(s.pts[a]) < c.x(s.pts[b]) })
		res[i] = *s
	}
	return res
}

// chart draws one chart with its top left corner at (x0, y0).
func chart(b *bytes.Buffer, x0, y0 float64, title string, c column, ss []series) {
	left, right := x0+padL, x0+colW-padR
	top, bottom := y0+padT, y0+chartH-padB
	text(b, (left+right)/2, y0+16, "middle", "font-weight=\"bold\"", title)
	fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" stroke=\"#888\"/>\n",
		num(left), num(top), num(right-left), num(bottom-top))
	text(b, (left+right)/2, bottom+38, "middle", "", c.xlabel)
	if len(ss) == 0 {
		text(b, (left+right)/2, (top+bottom)/2, "middle", "fill=\"#888\"", "no rows")
		return
	}

	xset := map[int64]bool{}
	ymax := 0.0
	for _, s := range ss {
		for _, p := range s.pts {
			xset[c.x(p)] = true
			ymax = math.Max(ymax, p.ops)
		}
	}
	var xs []int64
	for x := range xset {
		xs = append(xs, x)
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	lo, hi := math.Log(float64(xs[0])), math.Log(float64(xs[len(xs)-1]))
	xpos := func(v int64) float64 {
		if hi == lo {
			return (left + right) / 2
		}
		return left + xInset + (math.Log(float64(v))-lo)/(hi-lo)*(right-left-2*xInset)
	}
	ticks, unit, unitName, decimals := yTicks(ymax)
	ytop := ticks[len(ticks)-1]
	ypos := func(v float64) float64 { return bottom - v/ytop*(bottom-top) }

	// The x ticks are the measured values: the points are where the runs
	// were, and the labels say which cache or key count each was.
	for _, x := range xs {
		px := xpos(x)
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#888\"/>\n", num(px), num(bottom), num(px), num(bottom+5))
		text(b, px, bottom+18, "middle", "", c.xfmt(x))
	}
	for _, t := range ticks {
		py := ypos(t)
		if t > 0 {
			fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#e4e4e4\"/>\n", num(left), num(py), num(right), num(py))
		}
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#888\"/>\n", num(left-5), num(py), num(left), num(py))
		label := "0"
		if t > 0 {
			label = formatFixed(t/unit, decimals) + " " + unitName
		}
		text(b, left-8, py+4, "end", "", label)
	}
	for _, s := range ss {
		var pts []string
		for _, p := range s.pts {
			pts = append(pts, num(xpos(c.x(p)))+","+num(ypos(p.ops)))
		}
		if len(pts) > 1 {
			fmt.Fprintf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>\n",
				s.colour, dashAttr(s.dash), strings.Join(pts, " "))
		}
		for _, p := range s.pts {
			fmt.Fprintf(b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>\n", num(xpos(c.x(p))), num(ypos(p.ops)), s.colour)
		}
	}
}

// yTicks returns ticks from 0 to a round value at or above ymax, about
// five of them, 1, 2 or 5 times a power of ten apart, and the unit their
// labels use (K/s or M/s) with the decimals the step needs.
func yTicks(ymax float64) (ticks []float64, unit float64, unitName string, decimals int) {
	if ymax <= 0 {
		ymax = 1000
	}
	raw := ymax / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	n := int(math.Ceil(ymax/step - 1e-9))
	for i := 0; i <= n; i++ {
		ticks = append(ticks, float64(i)*step)
	}
	unit, unitName = 1e3, "K/s"
	if ticks[n] >= 1e6 {
		unit, unitName = 1e6, "M/s"
	}
	decimals = max(0, int(-math.Floor(math.Log10(step/unit)+1e-9)))
	return ticks, unit, unitName, decimals
}

// formatBytes formats a cache size as "64 MiB" or "1 GiB".
func formatBytes(n int64) string {
	v, u := float64(n), "B"
	for _, s := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, u = v/1024, s
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + u
}

// formatCount formats a key count as "5M" or "500M".
func formatCount(n int64) string {
	v, u := float64(n), ""
	for _, s := range []string{"K", "M", "G"} {
		if v < 1000 {
			break
		}
		v, u = v/1000, s
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + u
}

func formatFixed(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// num formats a coordinate with one decimal, so the output is the same on
// every platform.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return " stroke-dasharray=\"" + d + "\""
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&quot;")

func text(b *bytes.Buffer, x, y float64, anchor, attrs, s string) {
	if attrs != "" {
		attrs = " " + attrs
	}
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"%s\"%s>%s</text>\n", num(x), num(y), anchor, attrs, xmlEscaper.Replace(s))
}

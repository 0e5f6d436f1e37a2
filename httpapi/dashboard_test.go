package httpapi

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dashboardFile is the Grafana dashboard shipped in docs.
const dashboardFile = "../docs/grafana/bookie-index.json"

var (
	promStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	promRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promQuantiles = regexp.MustCompile(`quantile="([^"]*)"`)
	promKeywords  = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true, "without": true}
)

// promMetricNames returns the metric names a PromQL expression selects:
// identifiers outside strings, label matchers, ranges and grouping
// clauses that are not function calls or keywords.
func promMetricNames(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, " ")
	e = promRanges.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	var names []string
	for _, loc := range promIdent.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		rest := strings.TrimLeft(e[loc[1]:], " ")
		if promKeywords[name] || strings.HasPrefix(rest, "(") || loc[0] > 0 && (e[loc[0]-1] == '$' || e[loc[0]-1] >= '0' && e[loc[0]-1] <= '9') {
			continue
		}
		names = append(names, name)
	}
	return names
}

func TestPromMetricNames(t *testing.T) {
	require.Equal(t, []string{"a_total", "b"},
		promMetricNames(`sum by (ledgerDir, kind) (rate(a_total{x="y{z}",q=~"$v"}[$__rate_interval])) / on (l) b{quantile="1.0"} > 0.5`))
	require.Equal(t, []string{"x"}, promMetricNames(`max by (indexDir) (x{ledgerDir=~"$ledgerDir"}) * 2`))
}

// TestDashboardQueriesExist checks every PromQL expression of the shipped
// Grafana dashboard against a live /metrics of a storage served by this
// package: each metric it queries exists, and each quantile it selects is
// one the summaries carry.
func TestDashboardQueriesExist(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Name  string
				Query json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal(raw, &dash), dashboardFile)

	s, _ := liveService(t)
	code, scrape := do(t, s, http.MethodGet, PathMetrics, "")
	require.Equal(t, http.StatusOK, code)
	present := map[string]bool{}
	for _, line := range strings.Split(scrape, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		present[line[:strings.IndexAny(line, "{ ")]] = true
	}

	exprs := map[string]string{} // expression → where
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs[tg.Expr] = "panel " + p.Title
		}
	}
	for _, v := range dash.Templating.List {
		var q struct{ Query string }
		if json.Unmarshal(v.Query, &q) == nil && q.Query != "" {
			// label_values(METRIC, LABEL): the metric.
			metric, _, _ := strings.Cut(strings.TrimPrefix(q.Query, "label_values("), ",")
			exprs[metric] = "variable " + v.Name
		}
	}
	require.NotEmpty(t, exprs)
	var queried []string
	for expr, where := range exprs {
		names := promMetricNames(expr)
		require.NotEmpty(t, names, "%s: no metric in %q", where, expr)
		for _, n := range names {
			require.True(t, present[n], "%s queries %s, which /metrics does not serve (expression %q)", where, n, expr)
			queried = append(queried, n)
		}
		for _, m := range promQuantiles.FindAllStringSubmatch(expr, -1) {
			require.Contains(t, scrape, `quantile="`+m[1]+`"`, "%s selects a quantile /metrics does not have", where)
		}
	}
	sort.Strings(queried)
	t.Logf("%d expressions, metrics queried: %s", len(exprs), strings.Join(queried, " "))
}

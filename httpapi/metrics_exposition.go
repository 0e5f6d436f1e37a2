package httpapi

import (
	"bufio"
	"bytes"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// metricsHandler serves a registry in Prometheus text format 0.0.4, the
// one format upstream's PrometheusMetricsProvider serves, with its
// quantile label values: Java's Double.toString spells the largest
// quantile "1.0" where Go's float formatting writes "1", and a dashboard
// that selects quantile="1.0" must find it here too. The other quantiles
// (0.5 … 0.9999) are spelled alike by both.
type metricsHandler struct {
	gatherer prometheus.Gatherer
	log      *slog.Logger
}

// quantileOne and upstreamQuantileOne are the largest quantile's label
// as Go and as upstream write it. Label values are escaped (a '"' inside
// one is written \"), so the unescaped form only matches a label.
var (
	quantileOne         = []byte(`quantile="1"}`)
	upstreamQuantileOne = []byte(`quantile="1.0"}`)
)

func (h metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	families, err := h.gatherer.Gather()
	if err != nil {
		// Some collector failed; serve what was gathered, as promhttp's
		// ContinueOnError does.
		h.log.Warn("gathering metrics", "err", err)
	}
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	if r.Method == http.MethodHead {
		return
	}
	out := bufio.NewWriter(w)
	var buf bytes.Buffer
	for _, f := range families {
		buf.Reset()
		if _, err := expfmt.MetricFamilyToText(&buf, f); err != nil {
			h.log.Warn("encoding metrics", "family", f.GetName(), "err", err)
			continue
		}
		b := buf.Bytes()
		if f.GetType() == dto.MetricType_SUMMARY {
			b = bytes.ReplaceAll(b, quantileOne, upstreamQuantileOne)
		}
		if _, err := out.Write(b); err != nil {
			return // the client went away
		}
	}
	_ = out.Flush()
}

package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/cockroachdb/errors"
	"github.com/prometheus/client_golang/prometheus"
)

// PathStateReadOnly reads (GET) and forces (PUT {"readOnly": true|false})
// the storage's read-only mode, as upstream's BookieStateReadOnlyService.
const PathStateReadOnly = "/api/v1/bookie/state/readonly"

// ReadOnlyStorage is what the read-only endpoint, the readOnly field of
// /api/v1/bookie/state and the bookie_SERVER_STATUS gauge need of the
// storage; *bookie.Storage implements it. A storage without it is always
// writable.
type ReadOnlyStorage interface {
	// ReadOnly reports whether the storage refuses writes, and why.
	ReadOnly() (bool, string)
	// SetReadOnly forces read-only (true) or makes the storage writable
	// (false) and returns the resulting state.
	SetReadOnly(readOnly bool) (bool, string, error)
}

// readOnlyStorage returns the storage's ReadOnlyStorage, or nil.
func (s *Service) readOnlyStorage() ReadOnlyStorage {
	ro, _ := s.opts.Storage.(ReadOnlyStorage)
	return ro
}

// readOnly reports whether the storage is read-only, and why.
func (s *Service) readOnly() (bool, string) {
	if ro := s.readOnlyStorage(); ro != nil {
		return ro.ReadOnly()
	}
	return false, ""
}

// serveStateReadOnly answers {"readOnly": ..., "reason": ...} to a GET;
// a PUT (behind the admin token) with upstream's body {"readOnly": b}
// forces the mode first. A forced read-only mode stays until a PUT of
// false; a PUT of false leaves the storage read-only while a directory is
// over diskUsageThreshold (the answer then says so).
func (s *Service) serveStateReadOnly(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPut:
		body, ok := s.authorizedBody(w, r)
		if !ok {
			return
		}
		var req struct {
			ReadOnly *bool `json:"readOnly"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.ReadOnly == nil {
			writeText(w, http.StatusBadRequest, `Request body must be {"readOnly": true} or {"readOnly": false}.`)
			return
		}
		st := s.readOnlyStorage()
		if st == nil {
			writeText(w, http.StatusNotImplemented, "This storage has no read-only mode.")
			return
		}
		ro, reason, err := st.SetReadOnly(*req.ReadOnly)
		if err != nil {
			if errors.Is(err, bookie.ErrInvalidArgument) {
				writeText(w, http.StatusBadRequest, err.Error())
				return
			}
			s.log.Error("changing the read-only mode failed", "readOnly", *req.ReadOnly, "err", err)
			writeText(w, http.StatusInternalServerError, err.Error())
			return
		}
		s.log.Info("read-only mode set over HTTP", "requested", *req.ReadOnly, "readOnly", ro, "reason", reason, "remote", r.RemoteAddr)
		writeJSON(w, http.StatusOK, jsonObject{{"readOnly", ro}, {"reason", reason}})
		return
	default:
		methodNotServed(w, http.StatusNotFound, "GET, HEAD, PUT", msgStateReadOnlyMethod)
		return
	}
	ro, reason := s.readOnly()
	writeJSON(w, http.StatusOK, jsonObject{{"readOnly", ro}, {"reason", reason}})
}

// readOnlyError answers a write refused by a read-only storage: 503 with
// the reason, and Retry-After (the mode may end by itself).
func readOnlyError(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "10")
	writeText(w, http.StatusServiceUnavailable, err.Error())
}

// stateCollector exports upstream's bookie_SERVER_STATUS gauge (1 while
// the storage is writable, 0 while it is read-only) and its
// LedgerDirsManager's bookie_ledger_num_dirs and
// bookie_ledger_writable_dirs (the ledger directories not full).
type stateCollector struct {
	s                      *Service
	status, dirs, writable *prometheus.Desc
}

func newStateCollector(s *Service) *stateCollector {
	return &stateCollector{s: s,
		status: prometheus.NewDesc("bookie_SERVER_STATUS",
			"1 while the storage takes writes, 0 while it is read-only (the log's WARN line and /api/v1/bookie/state/readonly say why).", nil, nil),
		dirs: prometheus.NewDesc("bookie_ledger_num_dirs", "Ledger directories configured.", nil, nil),
		writable: prometheus.NewDesc("bookie_ledger_writable_dirs",
			"Ledger directories not full (over diskUsageThreshold until below diskUsageLwmThreshold); /api/v1/bookie/state names the full ones. "+
				"With readOnlyModeOnAnyDiskFullEnabled=false a full directory takes no new ledger while the storage stays writable.", nil, nil),
	}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.status
	ch <- c.dirs
	ch <- c.writable
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	v := 1.0
	if ro, _ := c.s.readOnly(); ro {
		v = 0
	}
	ch <- prometheus.MustNewConstMetric(c.status, prometheus.GaugeValue, v)
	writable := 0
	for _, d := range c.s.dirs {
		if d.Space == nil {
			writable++
		} else if full, _ := d.Space.Full(); !full {
			writable++
		}
	}
	ch <- prometheus.MustNewConstMetric(c.dirs, prometheus.GaugeValue, float64(len(c.s.dirs)))
	ch <- prometheus.MustNewConstMetric(c.writable, prometheus.GaugeValue, float64(writable))
}

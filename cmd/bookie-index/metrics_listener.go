package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/bookie-index/bookie-index/conf"
	"github.com/bookie-index/bookie-index/httpapi"
	"github.com/cockroachdb/errors"
)

// listenMetrics binds the metrics listener, when statsProviderClass names
// upstream's Prometheus provider and prometheusStatsHttpEnable is true, as
// a bookie's provider does, so that scrapers pointed at a bookie's :8000
// find the same series as the admin port's /metrics. It returns nil when
// the listener is off (and logs why).
func listenMetrics(c *conf.Config, log *slog.Logger) (net.Listener, error) {
	if !c.PrometheusListenerEnabled() {
		switch {
		case c.PrometheusProviderNamed():
			log.Info("prometheusStatsHttpEnable=false: no metrics listener on prometheusStatsHttpPort (/metrics stays on the admin port)")
		case c.StatsProviderClass != "":
			log.Info("statsProviderClass is not the Prometheus provider; no metrics listener on prometheusStatsHttpPort (/metrics stays on the admin port)",
				"statsProviderClass", c.StatsProviderClass)
		}
		return nil, nil
	}
	addr := net.JoinHostPort(c.PrometheusStatsHTTPAddress, strconv.Itoa(c.PrometheusStatsHTTPPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errors.Wrapf(err, "metrics listener (prometheusStatsHttpAddress, prometheusStatsHttpPort): listening on %s", addr)
	}
	return ln, nil
}

// serveMetrics serves /metrics on ln (nothing when ln is nil) and sends
// Serve's error to served. It returns the function that stops it.
func serveMetrics(ln net.Listener, c *conf.Config, svc *httpapi.Service, log *slog.Logger, served chan<- error) (stop func()) {
	if ln == nil {
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle(httpapi.PathMetrics, svc.MetricsHandler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			served <- errors.Wrap(err, "metrics listener")
		}
	}()
	log.Info("metrics listener serving /metrics", "addr", ln.Addr().String(), "statsProviderClass", c.StatsProviderClass)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
	}
}

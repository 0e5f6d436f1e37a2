package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// metricsListenerConf writes a bk_server.conf naming upstream's
// Prometheus provider, with the listener on 127.0.0.1:port, plus extra
// lines.
func metricsListenerConf(t *testing.T, port string, extra ...string) string {
	t.Helper()
	root := t.TempDir()
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join(append([]string{
		"ledgerDirectories=" + filepath.Join(root, "l"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_writeCacheMaxSizeMb=4",
		"dbStorage_readAheadCacheMaxSizeMb=4",
		"dbStorage_rocksDB_blockCacheSize=4194304",
		"statsProviderClass=org.apache.bookkeeper.stats.prometheus.PrometheusMetricsProvider",
		"prometheusStatsHttpAddress=127.0.0.1",
		"prometheusStatsHttpPort=" + port,
	}, extra...), "\n")+"\n"), 0o644))
	return confPath
}

// TestServeMetricsListener checks that naming upstream's Prometheus
// provider in statsProviderClass serves /metrics on
// prometheusStatsHttpPort as well as on the admin port.
func TestServeMetricsListener(t *testing.T) {
	confPath := metricsListenerConf(t, "0")

	_, stderr, stop := serveInProcess(t, confPath)
	defer stop()
	var metricsAddr string
	re := regexp.MustCompile(`msg="metrics listener serving /metrics" addr=(\S+)`)
	deadline := time.Now().Add(10 * time.Second)
	for metricsAddr == "" && time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			metricsAddr = m[1]
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NotEmpty(t, metricsAddr, stderr.String())
	body := getMetrics(t, metricsAddr)
	require.Contains(t, string(body), "bookie_lookup_entry_location_count{")
	require.Contains(t, string(body), `quantile="1.0"`)
	require.Contains(t, string(body), "bookie_write_cache_max_size ")
}

// TestServeMetricsListenerDisabled: with prometheusStatsHttpEnable=false
// serve opens no metrics listener (its port may be taken) and /metrics
// stays on the admin port.
func TestServeMetricsListenerDisabled(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	_, port, err := net.SplitHostPort(busy.Addr().String())
	require.NoError(t, err)
	confPath := metricsListenerConf(t, port, "prometheusStatsHttpEnable=false")

	admin, stderr, stop := serveInProcess(t, confPath)
	defer stop()
	body := getMetrics(t, admin)
	require.Contains(t, string(body), "bookie_lookup_entry_location_count{")
	require.Contains(t, stderr.String(), "prometheusStatsHttpEnable=false: no metrics listener")
	require.NotContains(t, stderr.String(), "metrics listener serving")

}

// serveInProcess runs serve with the configuration at confPath until stop,
// which checks that it ends cleanly; it returns the admin address and the
// log.
func serveInProcess(t *testing.T, confPath string) (admin string, stderr *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, []string{"--conf", confPath}, stderr, func(addr string) { addrs <- addr })
	}()
	select {
	case admin = <-addrs:
	case err := <-done:
		cancel()
		t.Fatalf("serve returned %v\n%s", err, stderr.String())
	}
	stop = func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, stderr.String())
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
		}
	}
	return admin, stderr, stop
}

// getMetrics fetches /metrics from addr and requires a 200.
func getMetrics(t *testing.T, addr string) []byte {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return body
}

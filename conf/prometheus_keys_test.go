package conf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrometheusListenerKeys: the metrics listener runs when
// statsProviderClass names the Prometheus provider and
// prometheusStatsHttpEnable (default true) allows it.
func TestPrometheusListenerKeys(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"", false},
		{"statsProviderClass=" + PrometheusProviderClass + "\n", true},
		{"statsProviderClass=PrometheusMetricsProvider\nprometheusStatsHttpEnable=true\n", true},
		{"statsProviderClass=" + PrometheusProviderClass + "\nprometheusStatsHttpEnable=false\n", false},
		{"statsProviderClass=org.apache.bookkeeper.stats.NullStatsProvider\n", false},
	} {
		c, err := Load(LoadOptions{Path: writeFile(t, "bk_server.conf", tc.file)})
		require.NoError(t, err, tc.file)
		require.Equal(t, tc.want, c.PrometheusListenerEnabled(), tc.file)
	}
	_, err := Load(LoadOptions{Path: writeFile(t, "bk_server.conf", "prometheusStatsHttpEnable=maybe\n")})
	require.ErrorContains(t, err, "prometheusStatsHttpEnable")
}

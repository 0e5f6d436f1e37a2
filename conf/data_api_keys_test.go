package conf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDataAPIKeys: the data API's limits and the backup root decode, the
// bytes in flight default to a quarter of the write cache (at least one
// entry), and every rule names its key.
func TestDataAPIKeys(t *testing.T) {
	c, err := Load(LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(5<<20), c.NettyMaxFrameSizeBytes)
	require.Equal(t, int64(128<<20), c.HTTPServerMaxEntryBytesInFlight)
	require.Zero(t, c.MaxAddsInProgressLimit)
	require.Zero(t, c.MaxReadsInProgressLimit)
	require.Empty(t, c.IndexCheckpointRootDirectory)

	c, err = Load(LoadOptions{Overrides: map[string]string{
		"dbStorage_writeCacheMaxSizeMb": "8", "nettyMaxFrameSizeBytes": "3145728",
		"maxAddsInProgressLimit": "100", "maxReadsInProgressLimit": "-1",
		"journalDirectories": "/j1, /j2", "journalDirectory": "/j0", "indexCheckpointRootDirectory": "/backups",
	}})
	require.NoError(t, err)
	require.Equal(t, int64(3<<20), c.HTTPServerMaxEntryBytesInFlight, "a quarter of 8 MiB is less than one entry")
	require.Equal(t, 100, c.MaxAddsInProgressLimit)
	require.Equal(t, -1, c.MaxReadsInProgressLimit, "negative: no limit, as upstream")
	require.Equal(t, []string{"/j1", "/j2"}, c.JournalDirectories)
	require.Equal(t, []DataDirectory{
		{"ledger directory", "data/ledgers"}, {"index directory", "data/ledgers"},
		{"journal directory", "/j1"}, {"journal directory", "/j2"}, // journalDirectory only without journalDirectories, as upstream
	}, c.DataDirectories())

	for _, tc := range []struct {
		overrides map[string]string
		want      string
	}{
		{map[string]string{"nettyMaxFrameSizeBytes": "0"}, `nettyMaxFrameSizeBytes: "0" is out of range [1, 2147483647]`},
		{map[string]string{"nettyMaxFrameSizeBytes": "2147483648"}, `nettyMaxFrameSizeBytes: "2147483648" is out of range`},
		{map[string]string{"httpServerMaxEntryBytesInFlight": "1048576"}, `httpServerMaxEntryBytesInFlight: 1048576 is less than nettyMaxFrameSizeBytes (5242880)`},
		{map[string]string{"httpServerMaxEntryBytesInFlight": "0"}, `httpServerMaxEntryBytesInFlight: "0" is out of range`},
		{map[string]string{"maxAddsInProgressLimit": "lots"}, `maxAddsInProgressLimit: "lots" is not an integer`},
		{map[string]string{"maxReadsInProgressLimit": "2147483648"}, `maxReadsInProgressLimit: "2147483648" is out of range`},
		{map[string]string{"indexCheckpointRootDirectory": "backups"}, `indexCheckpointRootDirectory: "backups" must be an absolute path`},
		{map[string]string{"indexCheckpointRootDirectory": "/b/../data"}, `indexCheckpointRootDirectory: "/b/../data" must be an absolute path without ".." components`},
		{map[string]string{"indexCheckpointRootDirectory": "/data/ledgers/backups", "ledgerDirectories": "/data/ledgers"}, `indexCheckpointRootDirectory: /data/ledgers/backups overlaps ledger directory /data/ledgers`},
		{map[string]string{"indexCheckpointRootDirectory": "/data", "ledgerDirectories": "/data/ledgers"}, `overlaps ledger directory /data/ledgers`},
		{map[string]string{"indexCheckpointRootDirectory": "/j/b", "journalDirectory": "/j"}, `overlaps journal directory /j`},
	} {
		_, err := Load(LoadOptions{Overrides: tc.overrides})
		require.Error(t, err, "%v", tc.overrides)
		require.Contains(t, err.Error(), tc.want, "%v", tc.overrides)
	}
}

// TestHostForms: httpServerHost and prometheusStatsHttpAddress take IPv4
// addresses in the numeric forms Java's InetAddress takes (as upstream
// reads them) and keep them as dotted quads; ambiguous or impossible
// numeric forms are errors naming the key; names and IPv6 pass as they
// are.
func TestHostForms(t *testing.T) {
	for in, want := range map[string]string{
		"127.1": "127.0.0.1", "127.0.1": "127.0.0.1", "2130706433": "127.0.0.1", "0": "0.0.0.0",
		"127.16777215": "127.255.255.255", "4294967295": "255.255.255.255", "10.0.0.1": "10.0.0.1",
		"localhost": "localhost", "::1": "::1", "bookie-1.example.com": "bookie-1.example.com", "1a.2": "1a.2",
	} {
		c, err := Load(LoadOptions{Overrides: map[string]string{"httpServerHost": in, "prometheusStatsHttpAddress": in, "httpServerAllowUnauthenticated": "true"}})
		require.NoError(t, err, in)
		require.Equal(t, want, c.HTTPServerHost, in)
		require.Equal(t, want, c.PrometheusStatsHTTPAddress, in)
	}
	for in, msg := range map[string]string{
		"0177.0.0.1":   `httpServerHost: "0177.0.0.1" is ambiguous: BookKeeper (Java) reads the part "0177" as decimal`,
		"127.0.0.01":   `is ambiguous`,
		"256.1":        `httpServerHost: "256.1" is not an IPv4 address: the part "256" is above 255`,
		"127.16777216": `the part "16777216" is above 16777215`,
		"4294967296":   `is above 4294967295`,
		"1.2.3.4.5":    `is not an IPv4 address: 5 parts, at most 4`,
		"127..1":       `an empty part`,
		"127.1.":       `an empty part`,
	} {
		_, err := Load(LoadOptions{Overrides: map[string]string{"httpServerHost": in}})
		require.Error(t, err, in)
		require.Contains(t, err.Error(), msg, in)
	}
}

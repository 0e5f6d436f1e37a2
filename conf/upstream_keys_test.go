package conf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnusedKeysReported: upstream keys bookie-index does not use are
// summed up in one line, a key close to one of ours gets a did-you-mean
// warning, from the file and the environment.
func TestUnusedKeysReported(t *testing.T) {
	path := writeFile(t, "bk_server.conf", "journalMaxSizeMB=2048\nledgerStorageClass=org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage\n"+
		"bookiePort=3181\ngcWaitTme=1000\nflushIntervl=5\nmyOwnThing=1\nhttpServerPort=9090\n")
	t.Setenv("BK_zkServers", "zk:2181")
	t.Setenv("BK_httpServerHosst", "0.0.0.0")
	c, err := Load(LoadOptions{Path: path, Environment: true})
	require.NoError(t, err)
	require.Equal(t, []string{
		"4 BookKeeper keys recognized but not used by bookie-index: bookiePort, journalMaxSizeMB, ledgerStorageClass, zkServers",
		"1 keys unknown to bookie-index and BookKeeper's bk_server.conf, ignored: myOwnThing",
	}, c.UnusedKeys)
	require.Equal(t, []string{
		path + `:4: key "gcWaitTme" is not used by bookie-index; did you mean "gcWaitTime"?`,
		path + `:5: key "flushIntervl" is not used by bookie-index; did you mean "flushInterval"?`,
		`environment variable BK_httpServerHosst: key "httpServerHosst" is not used by bookie-index; did you mean "httpServerHost"?`,
	}, c.KeyWarnings)

	// The embedded file sets only our keys.
	c, err = Load(LoadOptions{})
	require.NoError(t, err)
	require.Empty(t, c.UnusedKeys)
	require.Empty(t, c.KeyWarnings)
}

// TestLoadAllErrors: every problem of the sources is reported at once,
// one per line.
func TestLoadAllErrors(t *testing.T) {
	path := writeFile(t, "bk_server.conf", "httpServerPort=http\nGCWaitTime=5\nflushInterval=soon\n")
	_, err := Load(LoadOptions{Path: path, Overrides: map[string]string{"gcWaitTme": "1"}})
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "configuration: 4 problems:\n")
	require.Contains(t, msg, path+`:2: key "GCWaitTime": keys are case-sensitive; did you mean "gcWaitTime"?`)
	require.Contains(t, msg, `override: unknown key "gcWaitTme"; did you mean "gcWaitTime"?`)
	require.Contains(t, msg, `httpServerPort: "http" `)
	require.Contains(t, msg, `flushInterval: "soon" `)
}

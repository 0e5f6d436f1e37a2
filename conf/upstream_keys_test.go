package conf

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnusedKeysReported: upstream keys of the rest of a bookie are
// summed up in one line; an upstream key of the storage that bookie-index
// does not honour, set to anything but its default, gets a warning saying
// why; a key neither ours nor upstream's gets a warning, with the known key
// closest to it; from the file and the environment.
func TestUnusedKeysReported(t *testing.T) {
	path := writeFile(t, "bk_server.conf", "journalQueueSize=10000\nledgerStorageClass=org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage\n"+
		"bookiePort=3181\ngcWaitTme=1000\nflushIntervl=5\nmyOwnThing=1\nhttpServerPort=9090\nentryLogSizeLimit=1000000\n"+
		"entryLogPerLedgerEnabled=true\nflushEntrylogBytes=0\npersistBookieStatusEnabled=Off\nallowMultipleDirsUnderSameDiskPartition=no\n"+
		"zkServres=zk\n")
	t.Setenv("BK_zkServers", "zk:2181")
	t.Setenv("BK_httpServerHosst", "0.0.0.0")
	t.Setenv("BK_HOME", "/opt/bookkeeper")
	c, err := Load(LoadOptions{Path: path, Environment: true})
	require.NoError(t, err)
	require.Equal(t, []string{
		"5 BookKeeper keys of the rest of a bookie, not used by bookie-index: bookiePort, journalQueueSize, " +
			"ledgerStorageClass, persistBookieStatusEnabled, zkServers",
		"1 environment variable BK_* naming no key, ignored: BK_HOME",
	}, c.UnusedKeys)
	require.Equal(t, []string{
		path + `:4: unknown key "gcWaitTme", ignored; did you mean "gcWaitTime"?`,
		path + `:5: unknown key "flushIntervl", ignored; did you mean "flushInterval"?`,
		path + `:6: unknown key "myOwnThing" (neither bookie-index's nor BookKeeper's), ignored`,
		path + `:8: unknown key "entryLogSizeLimit", ignored; did you mean "logSizeLimit"?`,
		path + `:9: entryLogPerLedgerEnabled=true has no effect in bookie-index: the ledgers of a directory share its entry logs; one entry log per ledger is not implemented`,
		path + `:12: allowMultipleDirsUnderSameDiskPartition=no has no effect in bookie-index: directories on one disk partition are not detected; list one directory per disk`,
		path + `:13: unknown key "zkServres", ignored; did you mean "zkServers" (a BookKeeper key that bookie-index does not use)?`,
		`environment variable BK_httpServerHosst: unknown key "httpServerHosst", ignored; did you mean "httpServerHost"?`,
	}, c.KeyWarnings)

	// The embedded file sets only our keys.
	c, err = Load(LoadOptions{})
	require.NoError(t, err)
	require.Empty(t, c.UnusedKeys)
	require.Empty(t, c.KeyWarnings)
}

// TestOverridesTakeUpstreamKeys: --set takes every key a file takes,
// noted the same way; a key neither ours nor upstream's is an error there
// (nothing else shares a command line).
func TestOverridesTakeUpstreamKeys(t *testing.T) {
	c, err := Load(LoadOptions{Overrides: map[string]string{"zkServers": "zk:2181", "entryLogPerLedgerEnabled": "true", "forceReadOnlyBookie": "true"}})
	require.NoError(t, err)
	require.True(t, c.ForceReadOnlyBookie)
	require.Equal(t, []string{"1 BookKeeper key of the rest of a bookie, not used by bookie-index: zkServers"}, c.UnusedKeys)
	require.Equal(t, []string{"override: entryLogPerLedgerEnabled=true has no effect in bookie-index: " +
		"the ledgers of a directory share its entry logs; one entry log per ledger is not implemented"}, c.KeyWarnings)

	// The value that wins is the one described: an override (or an
	// environment variable) of an ignored key is warned about even when the
	// file sets the key to its default, and a file's default does not
	// hide it.
	path := writeFile(t, "bk_server.conf", "entryLogPerLedgerEnabled=false\npersistBookieStatusEnabled=true\npersistBookieStatusEnabled=false\n")
	t.Setenv("BK_useTransactionalCompaction", "true")
	c, err = Load(LoadOptions{Path: path, Environment: true, Overrides: map[string]string{"entryLogPerLedgerEnabled": "true"}})
	require.NoError(t, err)
	require.Equal(t, []string{"1 BookKeeper key of the rest of a bookie, not used by bookie-index: persistBookieStatusEnabled"}, c.UnusedKeys)
	require.Equal(t, []string{
		"environment variable BK_useTransactionalCompaction: useTransactionalCompaction=true has no effect in bookie-index: " +
			"entry-log compaction has one mode: live entries are copied into the log being written, " +
			"their locations move in the index, then the old log is removed (docs/operations.md, \"Entry-log garbage collection\")",
		"override: entryLogPerLedgerEnabled=true has no effect in bookie-index: " +
			"the ledgers of a directory share its entry logs; one entry log per ledger is not implemented",
	}, c.KeyWarnings)

	_, err = Load(LoadOptions{Overrides: map[string]string{"entryLogSizeLimit": "1"}})
	require.ErrorContains(t, err, `override: unknown key "entryLogSizeLimit"; did you mean "logSizeLimit"?`)
	_, err = Load(LoadOptions{Overrides: map[string]string{"zkServres": "zk"}})
	require.ErrorContains(t, err, `override: unknown key "zkServres"; did you mean "zkServers"?`)
}

// TestLoadAllErrors: every problem of the sources is reported at once,
// one per line, the values that do not decode and the rules between keys
// alike.
func TestLoadAllErrors(t *testing.T) {
	path := writeFile(t, "bk_server.conf", "httpServerPort=http\nGCWaitTime=5\nflushInterval=soon\nentryLocationCompactionInterval=60\n"+
		"forceReadOnlyBookie=true\nreadOnlyModeEnabled=false\n")
	_, err := Load(LoadOptions{Path: path, Overrides: map[string]string{"gcWaitTme": "1"}})
	require.Error(t, err)
	msg := err.Error()
	require.True(t, strings.HasPrefix(msg, "6 problems:\n"), msg)
	require.Contains(t, msg, path+`:2: key "GCWaitTime": keys are case-sensitive; did you mean "gcWaitTime"?`)
	require.Contains(t, msg, `override: unknown key "gcWaitTme"; did you mean "gcWaitTime"?`)
	require.Contains(t, msg, `httpServerPort: "http" `)
	require.Contains(t, msg, `flushInterval: "soon" `)
	require.Contains(t, msg, `entryLocationCompactionInterval: 60 seconds is shorter than gcWaitTime`)
	require.Contains(t, msg, `forceReadOnlyBookie: true needs readOnlyModeEnabled=true`)
	// A key whose value did not decode is validated at its default: no
	// second problem about it.
	require.NotContains(t, msg, "flushInterval: 0")
}

// TestUpstreamKeysFile: upstream_keys.txt is read whole (comments left
// out), sorted without repeats (isUpstreamKey searches it), and holds
// every upstream key ignoredKeys explains.
func TestUpstreamKeysFile(t *testing.T) {
	keys := upstreamKeys()
	require.Len(t, keys, 212)
	require.Equal(t, "advertisedAddress", keys[0])
	require.Equal(t, "zkTimeout", keys[len(keys)-1])
	for i := 1; i < len(keys); i++ {
		require.Less(t, keys[i-1], keys[i], "upstream_keys.txt line order")
	}
	for k := range ignoredKeys() {
		require.True(t, isUpstreamKey(k), "ignored key %s", k)
	}
}

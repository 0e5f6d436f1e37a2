package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/stretchr/testify/require"
)

// TestRebuildCommandRefusals: with the ledgers index removed, rebuild
// exits 1 naming it and --rebuild-ledgers-index and moves nothing, and
// check-ledgers-index fails; with the flag both indexes are rebuilt and
// the check passes.
func TestRebuildCommandRefusals(t *testing.T) {
	root := t.TempDir()
	ledgerDir := filepath.Join(root, "l1")
	s, err := bookie.Open(&bookie.Options{LedgerDirs: []string{ledgerDir}, FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20})
	require.NoError(t, err)
	for l := int64(1); l <= 3; l++ {
		for e := int64(0); e < 20; e++ {
			require.NoError(t, s.AddEntry(l, e, []byte("entry")))
		}
	}
	require.NoError(t, s.Close())
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte("ledgerDirectories="+ledgerDir+"\nentryLocationRocksdbConf="+filepath.Join(root, "absent.conf")+"\n"), 0o600))
	current := filepath.Join(ledgerDir, "current")

	out := mustRun(t, "check-ledgers-index", "--conf", confPath)
	require.Contains(t, out, "OK, 3 records: 3 ledgers exist, 0 fenced, 0 awaiting a purge")

	require.NoError(t, os.RemoveAll(filepath.Join(current, "ledgers")))
	before, err := os.ReadDir(current)
	require.NoError(t, err)
	code, _, errOut := runCmd("rebuild", "--conf", confPath)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "the ledgers index "+filepath.Join(current, "ledgers")+" is missing; nothing was moved")
	require.Contains(t, errOut, "--rebuild-ledgers-index")
	after, err := os.ReadDir(current)
	require.NoError(t, err)
	require.Equal(t, len(before), len(after), "nothing moved or created")
	code, _, errOut = runCmd("check-ledgers-index", "--conf", confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is missing")

	code, _, errOut = runCmd("rebuild", "--conf", confPath, "--rebuild-ledgers-index")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "rebuilt the ledgers index with 3 ledgers (fenced, no master key); old ledgers index: none")
	require.Contains(t, errOut, "60 entries of 3 ledgers")
	require.False(t, strings.Contains(errOut, "fewer"), errOut)
	out = mustRun(t, "check-ledgers-index", "--conf", confPath)
	require.Contains(t, out, "OK, 3 records: 3 ledgers exist, 3 fenced")
}

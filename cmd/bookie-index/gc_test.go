package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/conf"
	"github.com/stretchr/testify/require"
)

func logsSize(t *testing.T, dir string) int64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	var n int64
	for _, l := range logs {
		fi, err := os.Stat(l)
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

// TestGCCommand writes logs that each hold many ledgers, deletes most
// ledgers, and runs 'bookie-index gc': the logs shrink to at most half,
// the live entries read back, and the flags are checked.
func TestGCCommand(t *testing.T) {
	root := t.TempDir()
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(root, "l1"),
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=4",
		"logSizeLimit=32768",
		"compactionRateByEntries=0",
	}, "\n")+"\n"), 0o600))
	c, err := conf.Load(conf.LoadOptions{Path: confPath})
	require.NoError(t, err)
	opts, _, err := storageOptions(c, nil)
	require.NoError(t, err)
	opts.FlushInterval = -1
	st, err := bookie.Open(opts)
	require.NoError(t, err)
	payload := func(l, e int64) []byte { return fmt.Appendf(nil, "ledger %d entry %d %0300d", l, e, l) }
	for e := int64(0); e < 20; e++ {
		for l := int64(1); l <= 20; l++ {
			require.NoError(t, st.AddEntry(l, e, payload(l, e)))
		}
		require.NoError(t, st.Checkpoint())
	}
	for l := int64(1); l <= 20; l++ {
		if l%4 != 0 {
			_, err := st.DeleteLedger(l)
			require.NoError(t, err)
		}
	}
	require.NoError(t, st.Close())
	dir := filepath.Join(root, "l1", "current")
	before := logsSize(t, dir)

	code, _, errOut := runCmd("gc", "--conf", confPath, "--major", "--minor")
	require.Equal(t, 2, code, errOut)
	code, out, errOut := runCmd("gc", "--conf", confPath, "--minor")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "minor compaction: 0 logs compacted", "usage 25% is above the minor threshold")
	code, out, errOut = runCmd("gc", "--conf", confPath)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "gc [1/1] "+dir+": done in ")
	require.Contains(t, out, "major compaction")
	require.Contains(t, errOut, "major compaction: compacted entry log")
	after := logsSize(t, dir)
	t.Logf("entry logs: %d bytes before, %d after\n%s%s", before, after, out, errOut)
	require.LessOrEqual(t, after, before/2)

	st, err = bookie.Open(opts)
	require.NoError(t, err)
	defer st.Close()
	for l := int64(4); l <= 20; l += 4 {
		for e := int64(0); e < 20; e++ {
			got, err := st.GetEntry(l, e)
			require.NoError(t, err)
			require.Equal(t, string(payload(l, e)), string(got))
		}
	}
}

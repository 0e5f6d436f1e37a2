package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestServeForcedGC is the check through serve: logs that each
// hold many ledgers, most ledgers deleted, PUT /api/v1/bookie/gc: the
// entry logs' bytes drop to at most half, every live entry reads back
// byte for byte and the deleted ones are 404.
func TestServeForcedGC(t *testing.T) {
	root := t.TempDir()
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(root, "l1"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=4",
		"flushInterval=3600000",
		"logSizeLimit=32768",
		"compactionRateByEntries=0",
	}, "\n")+"\n"), 0o600))
	dir := filepath.Join(root, "l1", "current")
	payload := func(l, e int64) string { return fmt.Sprintf("ledger %d entry %d %0300d", l, e, l) }
	entry := func(base string, l, e int64) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l, e)
	}
	serveWhile(t, []string{"--conf", confPath}, func(base string) {
		for e := int64(0); e < 10; e++ {
			for l := int64(1); l <= 20; l++ {
				code, body := request(t, http.MethodPut, entry(base, l, e), payload(l, e), "")
				require.Equal(t, http.StatusOK, code, body)
			}
			code, _ := request(t, http.MethodPut, base+"/api/v1/bookie/checkpoint", "", "")
			require.Equal(t, http.StatusOK, code)
		}
		before := logsSize(t, dir)
		for l := int64(1); l <= 20; l++ {
			if l%5 != 0 {
				code, _ := request(t, http.MethodDelete, fmt.Sprintf("%s/api/v1/ledger?ledgerId=%d", base, l), "", "")
				require.Equal(t, http.StatusOK, code)
			}
		}
		code, body := request(t, http.MethodPut, base+"/api/v1/bookie/gc", `{"forceMajor": true}`, "")
		require.Equal(t, http.StatusOK, code, body)
		require.Contains(t, body, "Triggered GC on BookieServer: ")
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, body := request(t, http.MethodGet, base+"/api/v1/bookie/gc", "", "")
			if strings.Contains(body, `"is_in_force_gc" : "false"`) {
				break
			}
			require.True(t, time.Now().Before(deadline), "the forced GC did not finish: %s", body)
			time.Sleep(10 * time.Millisecond)
		}
		after := logsSize(t, dir)
		t.Logf("entry logs: %d bytes before, %d after", before, after)
		require.LessOrEqual(t, after, before/2)
		for l := int64(1); l <= 20; l++ {
			for e := int64(0); e < 10; e++ {
				code, body := request(t, http.MethodGet, entry(base, l, e), "", "")
				if l%5 != 0 {
					require.Equal(t, http.StatusNotFound, code)
					continue
				}
				require.Equal(t, http.StatusOK, code)
				require.Equal(t, payload(l, e), body)
			}
		}
		_, body = request(t, http.MethodGet, base+"/api/v1/bookie/gc_details", "", "")
		require.Contains(t, body, `"majorCompactionCounter" : 1`)
	})
}

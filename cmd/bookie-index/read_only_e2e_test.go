package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServeReadOnly is a full-disk probe from outside: serve with
// its ledger and index directories on a small tmpfs; filling it turns the
// storage read-only (state, the gauge and one WARN line say so), writes
// get 503 with the reason, checkpointed entries still read; freeing the
// space makes it writable again by itself; a forced read-only mode over
// HTTP stays until lifted; everything acknowledged by a checkpoint reads
// back after a restart.
func TestServeReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary on a tmpfs")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	root := t.TempDir()
	disk := filepath.Join(root, "disk")
	mountSmallFS(t, disk, 16<<20)
	bin := filepath.Join(root, "bookie-index")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(disk, "l"),
		// The journal sits beside the ledgers on the 16 MiB disk: its
		// default 16 MB of pre-allocated zeros would not fit.
		"journalPreAllocSizeMB=1",
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
		"dbStorage_rocksDB_sstSizeInMB=1",
		"flushInterval=200",
		"logSizeLimit=262144",
		"dbStorage_writeCacheMaxSizeMb=4",
		"dbStorage_readAheadCacheMaxSizeMb=4",
		"diskCheckInterval=100",
		"diskUsageThreshold=0.9",
		"diskUsageWarnThreshold=0.8",
		"diskUsageLwmThreshold=0.7",
	}, "\n")+"\n"), 0o600))

	entryURL := func(base string, l, e int64) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l, e)
	}
	want := map[[2]int64]string{}
	put := func(base string, l int64) {
		t.Helper()
		for e := int64(0); e < 100; e++ {
			v := fmt.Sprintf("ledger %d entry %d %s", l, e, strings.Repeat("x", 1000))
			code, body := request(t, http.MethodPut, entryURL(base, l, e), v, "")
			require.Equal(t, http.StatusOK, code, body)
			want[[2]int64{l, e}] = v
		}
		code, body := request(t, http.MethodPut, base+"/api/v1/bookie/checkpoint", "", "")
		require.Equal(t, http.StatusOK, code, body)
	}
	readAll := func(base string) {
		t.Helper()
		for k, v := range want {
			code, body := request(t, http.MethodGet, entryURL(base, k[0], k[1]), "", "")
			require.Equal(t, http.StatusOK, code, "ledger %d entry %d: %s", k[0], k[1], body)
			require.Equal(t, v, body, "ledger %d entry %d", k[0], k[1])
		}
	}
	readOnly := func(base string) bool {
		code, body := request(t, http.MethodGet, base+"/api/v1/bookie/state", "", "")
		require.Equal(t, http.StatusOK, code)
		var st struct{ ReadOnly bool }
		require.NoError(t, json.Unmarshal([]byte(body), &st), body)
		return st.ReadOnly
	}

	p := startServe(t, bin, confPath)
	put(p.base, 1)
	require.False(t, readOnly(p.base))
	require.Equal(t, float64(1), metricSum(t, p.base, "bookie_SERVER_STATUS", ""))

	filler := filepath.Join(disk, "filler")
	fillDisk(t, filler)
	waitUntil(t, "read-only after the disk filled", 10*time.Second, func() bool { return readOnly(p.base) })
	require.Equal(t, float64(0), metricSum(t, p.base, "bookie_SERVER_STATUS", ""))
	code, body := request(t, http.MethodPut, entryURL(p.base, 2, 0), "refused", "")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "read-only")
	require.Contains(t, body, "diskUsageThreshold")
	readAll(p.base)
	require.Equal(t, 1, strings.Count(p.log.String(), "storage is read-only"), "one WARN line:\n%s", p.log.String())

	require.NoError(t, os.Remove(filler))
	waitUntil(t, "writable after space was freed", 10*time.Second, func() bool { return !readOnly(p.base) })
	put(p.base, 2)

	// Forced read-only stays through disk checks until lifted.
	code, body = request(t, http.MethodPut, p.base+"/api/v1/bookie/state/readonly", `{"readOnly": true}`, "")
	require.Equal(t, http.StatusOK, code, body)
	time.Sleep(300 * time.Millisecond) // three disk checks
	require.True(t, readOnly(p.base))
	code, _ = request(t, http.MethodPut, entryURL(p.base, 3, 0), "refused", "")
	require.Equal(t, http.StatusServiceUnavailable, code)
	code, body = request(t, http.MethodPut, p.base+"/api/v1/bookie/state/readonly", `{"readOnly": false}`, "")
	require.Equal(t, http.StatusOK, code, body)
	put(p.base, 3)
	require.NoError(t, p.stop(t, syscall.SIGTERM), "SIGTERM exits 0:\n%s", p.log.String())

	p = startServe(t, bin, confPath)
	readAll(p.base)
	require.NoError(t, p.stop(t, syscall.SIGTERM))
}

// TestServeReadOnlyModeDisabled: with readOnlyModeEnabled=false a full
// disk shuts serve down (exit status 1, an ERROR line naming the key), as
// upstream's bookie shuts down; the checkpointed entries read back after a
// restart once space is freed.
func TestServeReadOnlyModeDisabled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary on a tmpfs")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	root := t.TempDir()
	disk := filepath.Join(root, "disk")
	mountSmallFS(t, disk, 16<<20)
	bin := filepath.Join(root, "bookie-index")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(disk, "l"),
		// The journal sits beside the ledgers on the 16 MiB disk: its
		// default 16 MB of pre-allocated zeros would not fit.
		"journalPreAllocSizeMB=1",
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
		"dbStorage_writeCacheMaxSizeMb=4",
		"dbStorage_readAheadCacheMaxSizeMb=4",
		"logSizeLimit=262144",
		"diskCheckInterval=100",
		"diskUsageThreshold=0.9",
		"diskUsageWarnThreshold=0.8",
		"readOnlyModeEnabled=false",
	}, "\n")+"\n"), 0o600))
	url := func(base string, e int) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=1&entryId=%d", base, e)
	}

	p := startServe(t, bin, confPath)
	for e := range 50 {
		code, body := request(t, http.MethodPut, url(p.base, e), fmt.Sprint("entry ", e), "")
		require.Equal(t, http.StatusOK, code, body)
	}
	code, body := request(t, http.MethodPut, p.base+"/api/v1/bookie/checkpoint", "", "")
	require.Equal(t, http.StatusOK, code, body)
	code, _ = request(t, http.MethodPut, p.base+"/api/v1/bookie/state/readonly", `{"readOnly": true}`, "")
	require.Equal(t, http.StatusBadRequest, code, "forcing read-only is refused when the mode is disabled")

	filler := filepath.Join(disk, "filler")
	fillDisk(t, filler)
	select {
	case err := <-p.done:
		require.Error(t, err, "exit status 1")
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not shut down on a full disk:\n%s", p.log.String())
	}
	require.Contains(t, p.log.String(), "read-only mode is disabled (readOnlyModeEnabled=false); shutting down")

	require.NoError(t, os.Remove(filler))
	p = startServe(t, bin, confPath)
	for e := range 50 {
		code, body := request(t, http.MethodGet, url(p.base, e), "", "")
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, fmt.Sprint("entry ", e), body)
	}
	require.NoError(t, p.stop(t, syscall.SIGTERM))
}

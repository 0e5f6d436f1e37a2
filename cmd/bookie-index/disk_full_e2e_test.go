package main

import (
	"errors"
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

// mountSmallFS mounts a tmpfs of size bytes at dir for the test, or skips
// the test where that is not allowed (not root, no mount permission).
func mountSmallFS(t *testing.T, dir string, size int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
			return
		}
	}
}

// TestServeDiskFull is a full-disk probe from outside: serve with
// its indexes on a small tmpfs, fill it, keep writing; checkpoints fail
// (the index write, after the entries reached the entry log) and retry
// with backoff without writing the cache into the entry logs again; reads
// go on; once space is freed, checkpoints succeed again without a restart,
// SIGTERM exits 0, and everything reads back after a restart.
func TestServeDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary on a tmpfs")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	root := t.TempDir()
	disk := filepath.Join(root, "disk")
	mountSmallFS(t, disk, 8<<20)
	bin := filepath.Join(root, "bookie-index")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	confPath := filepath.Join(root, "bk_server.conf")
	conf := strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(root, "l"), // the entry logs have room
		// The indexes are on the small file system: the case, an
		// index write failing after the entries reached the entry log.
		"indexDirectories=" + filepath.Join(disk, "i"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
		"dbStorage_rocksDB_sstSizeInMB=1",
		"flushInterval=200",
		"logSizeLimit=262144",
		"dbStorage_writeCacheMaxSizeMb=8",
		"dbStorage_readAheadCacheMaxSizeMb=4",
		// The disk monitor checks at start only: this test is about
		// checkpoints retrying while full (TestServeReadOnly is about
		// the monitor). A write failing with ENOSPC still turns the
		// storage read-only until a checkpoint succeeds.
		"diskCheckInterval=100000000",
		// Ledger 2's adds must reach the write cache before the next
		// checkpoint (flushInterval=200) finds the disk full: the journal
		// acknowledges them once written, without waiting for an fsync
		// or a group.
		"journalSyncData=false",
		"journalMaxGroupWaitMSec=0",
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o600))

	want := map[[2]int64]string{}
	entryURL := func(base string, l, e int64) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l, e)
	}
	put := func(base string, l int64) {
		t.Helper()
		for e := int64(0); e < 200; e++ {
			v := fmt.Sprintf("ledger %d entry %d %s", l, e, strings.Repeat("x", 1000))
			code, body := request(t, http.MethodPut, entryURL(base, l, e), v, "")
			require.Equal(t, http.StatusOK, code, body)
			want[[2]int64{l, e}] = v
		}
	}
	readAll := func(base string) {
		t.Helper()
		for k, v := range want {
			code, body := request(t, http.MethodGet, entryURL(base, k[0], k[1]), "", "")
			require.Equal(t, http.StatusOK, code, "ledger %d entry %d: %s", k[0], k[1], body)
			require.Equal(t, v, body, "ledger %d entry %d", k[0], k[1])
		}
	}
	flushed := func(base string) float64 {
		return metricSum(t, base, "bookie_index_storage_flushed_entries_total", "")
	}

	p := startServe(t, bin, confPath)
	put(p.base, 1)
	waitUntil(t, "a checkpoint of ledger 1", 10*time.Second, func() bool { return flushed(p.base) >= 200 })

	filler := filepath.Join(disk, "filler")
	fillDisk(t, filler)
	put(p.base, 2) // into the write cache
	waitUntil(t, "a failed checkpoint", 10*time.Second, func() bool {
		return metricSum(t, p.base, "bookie_index_storage_checkpoint_failures", "") > 0
	})
	written := metricSum(t, p.base, "bookie_index_storage_entry_log_bytes_written_total", "")
	time.Sleep(2 * time.Second) // flushInterval=200: ten periodic checkpoints
	// Backoff: 100, 200, 400, 800 ms... a handful of attempts, not one per
	// tick or request; each writes at most the cache's 200 entries.
	failures := metricSum(t, p.base, "bookie_index_storage_checkpoint_failures", "")
	require.Less(t, failures, float64(10), "checkpoint failures in a row after 2 s")
	grown := metricSum(t, p.base, "bookie_index_storage_entry_log_bytes_written_total", "") - written
	t.Logf("while full for 2 s: %v checkpoint failures in a row, %v entry-log bytes written", failures, grown)
	require.Less(t, grown, float64(2*200*1100), "entry-log bytes written while full")
	readAll(p.base)

	require.NoError(t, os.Remove(filler))
	waitUntil(t, "checkpoints after space returned", 20*time.Second, func() bool {
		return flushed(p.base) >= 400 && metricSum(t, p.base, "bookie_index_storage_checkpoint_failures", "") == 0
	})
	require.Zero(t, metricSum(t, p.base, "bookie_index_lsm_out_of_space", ""))
	put(p.base, 3)
	code, body := request(t, http.MethodPut, p.base+"/api/v1/bookie/checkpoint", "", "")
	require.Equal(t, http.StatusOK, code, body)
	readAll(p.base)
	require.NoError(t, p.stop(t, syscall.SIGTERM), "SIGTERM after recovery exits 0:\n%s", p.log.String())

	p = startServe(t, bin, confPath)
	readAll(p.base)
	require.NoError(t, p.stop(t, syscall.SIGTERM))
}

package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// serveProcess is a running 'bookie-index serve' child.
type serveProcess struct {
	cmd  *exec.Cmd
	base string
	log  *syncBuffer
	done chan error
}

// startServe starts the binary's serve with conf and waits until it
// listens.
func startServe(t *testing.T, bin, confPath string) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--conf", confPath)
	cmd.Dir = filepath.Dir(confPath)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &serveProcess{cmd: cmd, log: &syncBuffer{}, done: make(chan error, 1)}
	addrs := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		listening := regexp.MustCompile(`msg="admin HTTP server listening" addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(p.log, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
			}
		}
	}()
	go func() {
		<-logDone
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case addr := <-addrs:
		p.base = "http://" + addr
	case err := <-p.done:
		t.Fatalf("serve exited: %v\n%s", err, p.log.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start listening:\n%s", p.log.String())
	}
	return p
}

// stop sends sig and waits for the exit.
func (p *serveProcess) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
	select {
	case err := <-p.done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not exit after %v:\n%s", sig, p.log.String())
		return nil
	}
}

// metricSum scrapes /metrics and sums the samples of a metric (every
// label set whose labels contain match).
func metricSum(t *testing.T, base, name, match string) float64 {
	t.Helper()
	code, scrape := request(t, http.MethodGet, base+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(\{[^}]*\})? (\S+)$`)
	var sum float64
	for _, m := range re.FindAllStringSubmatch(scrape, -1) {
		if !strings.Contains(m[1], match) {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		sum += v
	}
	return sum
}

func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(50 * time.Millisecond)
	}
}

// dumpIndex reads every location of the index at path.
func dumpIndex(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	db, err := lsm.Open(path, &lsm.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	m := map[string]uint64{}
	for ok := it.First(); ok; ok = it.Next() {
		m[string(it.Key())] = binary.BigEndian.Uint64(it.Value())
	}
	require.NoError(t, it.Close())
	return m
}

// TestServeStorageEndToEnd is the storage checked from outside: write
// entries through serve's data API, SIGKILL it after a checkpoint, restart
// and read everything back; delete ledgers and watch their index space
// return; rebuild the index offline and compare every location.
func TestServeStorageEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bookie-index")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	confPath := filepath.Join(root, "bk_server.conf")
	conf := strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(root, "l1") + "," + filepath.Join(root, "l2"),
		"indexDirectories=" + filepath.Join(root, "i1") + "," + filepath.Join(root, "i2"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
		"dbStorage_rocksDB_sstSizeInMB=1",
		"flushInterval=200",
		"gcWaitTime=1000",
		"logSizeLimit=262144",
		"dbStorage_writeCacheMaxSizeMb=16",
		"dbStorage_readAheadCacheMaxSizeMb=8",
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o600))

	const ledgers, entries = 6, 300
	rng := rand.New(rand.NewSource(1))
	want := map[[2]int64]string{}
	for l := int64(1); l <= ledgers; l++ {
		for e := int64(0); e < entries; e++ {
			want[[2]int64{l, e}] = fmt.Sprintf("ledger %d entry %d %s", l, e, strings.Repeat("x", rng.Intn(2000)))
		}
	}
	entryURL := func(base string, l, e int64) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l, e)
	}

	p := startServe(t, bin, confPath)
	for l := int64(1); l <= ledgers; l++ {
		for e := int64(0); e < entries; e++ {
			code, body := request(t, http.MethodPut, entryURL(p.base, l, e), want[[2]int64{l, e}], "")
			require.Equal(t, http.StatusOK, code, body)
		}
	}
	// A periodic checkpoint writes them all (flushInterval=200ms).
	waitUntil(t, "a checkpoint of every entry", 10*time.Second, func() bool {
		return metricSum(t, p.base, "bookie_index_storage_flushed_entries_total", "") >= ledgers*entries
	})
	require.Error(t, p.stop(t, syscall.SIGKILL), "killed")

	p = startServe(t, bin, confPath)
	readAll := func(base string, deleted map[int64]bool) {
		t.Helper()
		for l := int64(1); l <= ledgers; l++ {
			for e := int64(0); e < entries; e++ {
				code, body := request(t, http.MethodGet, entryURL(base, l, e), "", "")
				if deleted[l] {
					require.Equal(t, http.StatusNotFound, code, "ledger %d entry %d", l, e)
					continue
				}
				require.Equal(t, http.StatusOK, code, "ledger %d entry %d: %s", l, e, body)
				require.Equal(t, want[[2]int64{l, e}], body, "ledger %d entry %d", l, e)
			}
			if !deleted[l] {
				code, body := request(t, http.MethodGet, fmt.Sprintf("%s/api/v1/ledger/last_entry?ledgerId=%d", base, l), "", "")
				require.Equal(t, http.StatusOK, code)
				require.Contains(t, body, fmt.Sprintf(`"entryId" : %d`, entries-1))
			}
		}
	}
	readAll(p.base, nil)
	require.Positive(t, metricSum(t, p.base, "bookie_read_cache_hits", ""), "read-ahead served reads")

	// Delete half the ledgers: their locations are purged after the next
	// checkpoint, and a compaction gives their space back.
	entriesBefore := metricSum(t, p.base, "bookie_entries_count", "")
	require.Equal(t, float64(ledgers*entries), entriesBefore)
	deleted := map[int64]bool{1: true, 2: true, 3: true}
	for l := range deleted {
		code, body := request(t, http.MethodDelete, fmt.Sprintf("%s/api/v1/ledger?ledgerId=%d", p.base, l), "", "")
		require.Equal(t, http.StatusOK, code, body)
		require.Contains(t, body, `"existed" : true`)
	}
	waitUntil(t, "the purge", 10*time.Second, func() bool {
		return metricSum(t, p.base, "bookie_index_storage_purged_ledgers_total", "") >= 3 &&
			metricSum(t, p.base, "bookie_index_storage_pending_purge_ledgers", "") == 0
	})
	bytesBefore := metricSum(t, p.base, "bookie_index_lsm_level_bytes", "")
	code, body := request(t, http.MethodPut, p.base+"/api/v1/bookie/entry_location_compact", `{"entryLocationRocksDBCompact":true}`, "")
	require.Equal(t, http.StatusOK, code, body)
	waitUntil(t, "the compactions", 20*time.Second, func() bool {
		return metricSum(t, p.base, "bookie_index_entry_location_compactions_total", `result="completed"`) >= 2
	})
	require.Equal(t, float64(ledgers*entries/2), metricSum(t, p.base, "bookie_entries_count", ""), "the deleted ledgers' keys are gone")
	bytesAfter := metricSum(t, p.base, "bookie_index_lsm_level_bytes", "")
	require.Less(t, bytesAfter, bytesBefore*0.75, "index bytes %v -> %v", bytesBefore, bytesAfter)
	readAll(p.base, deleted)

	// The rebuild refuses to run under a live bookie.
	rebuild := exec.Command(bin, "rebuild", "--conf", confPath)
	rebuildOut, err := rebuild.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 1, rebuild.ProcessState.ExitCode())
	require.Contains(t, string(rebuildOut), "stop it first")

	require.NoError(t, p.stop(t, syscall.SIGTERM), p.log.String())

	// Offline rebuild: every location comes back identical.
	locations := []string{filepath.Join(root, "i1", "current", "locations"), filepath.Join(root, "i2", "current", "locations")}
	var before []map[string]uint64
	for _, path := range locations {
		before = append(before, dumpIndex(t, path))
	}
	rebuild = exec.Command(bin, "rebuild", "--conf", confPath)
	rebuildOut, err = rebuild.CombinedOutput()
	require.NoError(t, err, "%s", rebuildOut)
	for i, path := range locations {
		require.Contains(t, string(rebuildOut), fmt.Sprintf("rebuild [%d/2] %s: done in ", i+1, path))
		require.Equal(t, before[i], dumpIndex(t, path), "directory %d", i+1)
		backups, err := filepath.Glob(path + ".BACKUP-*")
		require.NoError(t, err)
		require.Len(t, backups, 1)
	}
	require.Regexp(t, `entry logs scanned`, string(rebuildOut))
	require.Equal(t, ledgers*entries/2, len(before[0])+len(before[1]))

	p = startServe(t, bin, confPath)
	readAll(p.base, deleted)
	require.NoError(t, p.stop(t, syscall.SIGTERM))
}

// TestRebuildCommandErrors: bad usage exits 2; a directory without a
// ledgers index is refused, moving nothing, unless --rebuild-ledgers-index
// rebuilds it too.
func TestRebuildCommandErrors(t *testing.T) {
	s := newServeSetup(t)
	code, _, errOut := runCmd("rebuild", "--conf", s.confPath, "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unexpected argument "extra"`)
	code, _, _ = runCmd("rebuild", "-h")
	require.Equal(t, 0, code)
	code, _, errOut = runCmd("rebuild", "--conf", s.confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no entry logs to read in "+filepath.Join(s.root, "l1", "current"))
	require.Contains(t, errOut, "2 of 2 directories failed")
	for _, l := range []string{"l1", "l2"} {
		require.NoError(t, os.MkdirAll(filepath.Join(s.root, l, "current"), 0o755))
	}
	code, _, errOut = runCmd("rebuild", "--conf", s.confPath)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "is missing; nothing was moved")
	backups, err := filepath.Glob(s.locations[0] + ".BACKUP-*")
	require.NoError(t, err)
	require.Empty(t, backups)
	code, _, errOut = runCmd("rebuild", "--conf", s.confPath, "--rebuild-ledgers-index")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "rebuild [1/2] "+s.locations[0]+": done in ")
	require.Contains(t, errOut, "0 entry logs, 0 records, 0 entries of 0 ledgers")
	require.Contains(t, errOut, "warning: the new index holds 0 entries, 1000 fewer than the old one")
	backups, err = filepath.Glob(s.locations[0] + ".BACKUP-*")
	require.NoError(t, err)
	require.Len(t, backups, 1, "the index written by the test setup was moved aside")
}

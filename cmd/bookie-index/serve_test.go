package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/stretchr/testify/require"
)

// serveSetup is a temporary deployment: two ledger directories with
// separate index directories, the first index holding entries, a token
// file, and a bk_server.conf naming them.
type serveSetup struct {
	root, confPath, token string
	locations             []string
}

func newServeSetup(t *testing.T, extra ...string) serveSetup {
	t.Helper()
	root := t.TempDir()
	s := serveSetup{root: root, confPath: filepath.Join(root, "bk_server.conf"), token: "t0ken-for-tests"}
	tokenFile := filepath.Join(root, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(s.token+"\n"), 0o600))
	for _, i := range []string{"i1", "i2"} {
		s.locations = append(s.locations, filepath.Join(root, i, "current", "locations"))
	}
	// Entries in the first index, so that compaction and metrics have
	// something to show.
	ix, err := entrylocation.Open(s.locations[0], nil)
	require.NoError(t, err)
	b := ix.NewBatch()
	for l := int64(1); l <= 10; l++ {
		for e := int64(0); e < 100; e++ {
			require.NoError(t, b.AddLocation(l, e, l<<32|(e+1024)))
		}
	}
	require.NoError(t, b.Flush())
	require.NoError(t, b.Close())
	require.NoError(t, ix.Close())

	lines := []string{
		"# test configuration",
		"ledgerDirectories=" + filepath.Join(root, "l1") + "," + filepath.Join(root, "l2"),
		"indexDirectories=" + filepath.Join(root, "i1") + "," + filepath.Join(root, "i2"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"httpServerAuthTokenFile=" + tokenFile,
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=4",
	}
	lines = append(lines, extra...)
	require.NoError(t, os.WriteFile(s.confPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return s
}

// client sends a request with an optional bearer token and returns the
// status and body.
func request(t *testing.T, method, url, body, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

// exerciseAdmin drives a running service at base: auth, a compaction to
// completion, errors, metrics.
func exerciseAdmin(t *testing.T, base string, s serveSetup) {
	t.Helper()
	compact := base + "/api/v1/bookie/entry_location_compact"
	code, body := request(t, http.MethodGet, base+"/heartbeat", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "OK\n", body)

	code, _ = request(t, http.MethodPut, compact, `{"entryLocationRocksDBCompact":true}`, "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body = request(t, http.MethodPut, compact, `{"entryLocationRocksDBCompact":"true","entryLocations":"`+s.locations[0]+`"}`, s.token)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "Triggered entry Location RocksDB: "+s.locations[0]+" compact on bookie:")
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body = request(t, http.MethodGet, compact, "", "")
		require.Equal(t, http.StatusOK, code)
		var state map[string]bool
		require.NoError(t, json.Unmarshal([]byte(body), &state), body)
		require.Len(t, state, 2)
		if !state[s.locations[0]] && !state[s.locations[1]] {
			break
		}
		require.True(t, time.Now().Before(deadline), "compaction still running: %s", body)
		time.Sleep(10 * time.Millisecond)
	}
	require.Contains(t, body, `"`+s.locations[0]+`" : false`)

	code, body = request(t, http.MethodGet, base+"/api/v1/bookie/gc_details", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"entryLocationCompactionCounter" : 1`)
	require.Contains(t, body, `"lastEntryLocationCompactionOutcome" : "completed"`)

	code, body = request(t, http.MethodPut, compact, `{"entryLocationRocksDBCompact":`, s.token)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, `"Failed to deserialize Object from Json string"`, body)
	code, _ = request(t, http.MethodPut, compact, strings.Repeat("x", 100<<10), s.token)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	code, _ = request(t, http.MethodPost, compact, "{}", s.token)
	require.Equal(t, http.StatusMethodNotAllowed, code)
	code, body = request(t, http.MethodDelete, compact, "", s.token)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"`+s.locations[1]+`" : false`)

	code, body = request(t, http.MethodGet, base+"/api/v1/config/server_config", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"httpServerPort" : "0"`)
	require.NotContains(t, body, s.token)
	// The effective engine options, next to the configured keys.
	require.Contains(t, body, `"bookieIndex.entryLocation.writeBufferSize" : "4194304"`)
	require.Contains(t, body, `"bookieIndex.entryLocation.blockCacheCapacity" : "268435456"`)

	// A backup of the indexes while the service runs: one checkpoint per
	// directory, which opens as a database holding the entries.
	backup := filepath.Join(t.TempDir(), "backup")
	code, _ = request(t, http.MethodPut, base+"/api/v1/bookie/index_checkpoint?dir="+backup, "", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body = request(t, http.MethodPut, base+"/api/v1/bookie/index_checkpoint?dir="+backup, "", s.token)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"checkpoint" : "done"`)
	for i := range s.locations {
		locations := filepath.Join(backup, fmt.Sprint(i), "current", "locations")
		require.Contains(t, body, `"checkpoint" : "`+filepath.Dir(locations)+`"`)
		require.Contains(t, mustRun(t, "db", "check", locations), "OK")
		require.Contains(t, mustRun(t, "db", "check", filepath.Join(filepath.Dir(locations), "ledgers")), "OK")
	}

	code, scrape := request(t, http.MethodGet, base+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	indexDir := filepath.Join(s.root, "i1", "current")
	ledgerDir := filepath.Join(s.root, "l1", "current")
	require.Regexp(t, regexp.MustCompile(`(?m)^bookie_entries_count\{indexDir="`+regexp.QuoteMeta(indexDir)+`",ledgerDir="`+regexp.QuoteMeta(ledgerDir)+`"\} 1000$`), scrape)
	for _, name := range []string{
		"bookie_lookup_entry_location_count", "bookie_get_last_entry_in_ledger_count",
		"bookie_index_lsm_level_tables", "bookie_index_lsm_block_cache_hits_total",
		"bookie_index_lsm_compaction_written_bytes_total", "bookie_index_lsm_write_stalls_total",
		"bookie_index_lsm_wal_syncs_total", "bookie_index_entry_location_compactions_total",
		"go_goroutines", "process_cpu_seconds_total",
	} {
		require.Regexp(t, regexp.MustCompile(`(?m)^`+name+`[{ ]`), scrape, name)
	}
	code, _ = request(t, http.MethodPut, base+"/metrics", "", s.token)
	require.Equal(t, http.StatusForbidden, code)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeInProcess runs serve in-process (so that -race sees it), with
// the periodic compaction on, and stops it by cancelling its context.
func TestServeInProcess(t *testing.T) {
	s := newServeSetup(t, "gcWaitTime=1000", "entryLocationCompactionInterval=1", "journalRemoveFromPageCache=true", "flushIntervl=5")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, []string{"--conf", s.confPath}, &stderr, func(addr string) { addrs <- addr })
	}()
	var base string
	select {
	case addr := <-addrs:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("serve returned %v\n%s", err, stderr.String())
	}
	exerciseAdmin(t, base, s)

	// The periodic compaction: every 1 to 2 seconds.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "trigger=periodic") {
		require.True(t, time.Now().Before(deadline), "no periodic compaction:\n%s", stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	require.Contains(t, stderr.String(), "msg=stopped")
	// One line of effective options per index.
	require.Equal(t, 2, strings.Count(stderr.String(), `msg="entry location index effective options"`), stderr.String())
	require.Contains(t, stderr.String(), "writeBufferSize=4194304")
	// Each compaction is logged once, by the admin API (with its
	// trigger), not again by the index.
	require.Contains(t, stderr.String(), `msg="Entry location compaction finished"`)
	require.NotContains(t, stderr.String(), "Entry location index compaction finished")
	// The keys the file sets that serve does not use.
	require.Contains(t, stderr.String(), `level=INFO msg="configuration: 1 BookKeeper key of the rest of a bookie, not used by bookie-index: journalRemoveFromPageCache"`)
	require.Contains(t, stderr.String(), `level=WARN msg="configuration: `+s.confPath)
	require.Contains(t, stderr.String(), `unknown key \"flushIntervl\", ignored; did you mean \"flushInterval\"?`)

	// The indexes were closed: they open again.
	for _, p := range s.locations {
		ix, err := entrylocation.Open(p, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Close())
	}
}

// TestServeErrors checks the failures before the service starts.
func TestServeErrors(t *testing.T) {
	s := newServeSetup(t)
	code, _, errOut := runCmd("serve", "--conf", s.confPath, "--set", "nosuchKey=1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `unknown key "nosuchKey"`)
	code, _, errOut = runCmd("serve", "--conf", s.confPath, "--set", "novalue")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "expected key=value")
	code, _, errOut = runCmd("serve", "--conf", s.confPath, "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unexpected argument "extra"`)
	code, _, errOut = runCmd("serve", "--conf", filepath.Join(s.root, "missing.conf"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing.conf")
	code, _, errOut = runCmd("serve", "--conf", s.confPath, "--set", "entryLocationCompactionInterval=10")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "entryLocationCompactionInterval should be >= gcWaitTime")
	code, _, _ = runCmd("serve", "-h")
	require.Equal(t, 0, code)

	// A port in use: serve reports it and closes the indexes it opened.
	busy := newServeSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, []string{"--conf", busy.confPath}, io.Discard, func(addr string) { addrs <- addr })
	}()
	addr := <-addrs
	_, port, _ := strings.Cut(addr, ":")
	code, _, errOut = runCmd("serve", "--conf", s.confPath, "--set", "httpServerPort="+port)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "listening on 127.0.0.1:"+port)
	cancel()
	require.NoError(t, <-done)
	ix, err := entrylocation.Open(s.locations[0], nil)
	require.NoError(t, err, "the failed serve closed its indexes")
	require.NoError(t, ix.Close())
}

// TestServeBinary is the end-to-end test: it builds the binary, starts
// serve with a configuration file on a free loopback port, drives the
// admin API, and stops it with SIGTERM.
func TestServeBinary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	bin := filepath.Join(t.TempDir(), "bookie-index")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	s := newServeSetup(t)
	cmd := exec.Command(bin, "serve", "--conf", s.confPath)
	cmd.Dir = s.root
	cmd.Env = append(os.Environ(), "BK_httpServerHost=127.0.0.1")
	stderrPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	// Read the log; the listening line gives the port.
	var logText syncBuffer
	addrs := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		listening := regexp.MustCompile(`msg="admin HTTP server listening" addr=(\S+)`)
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			fmt.Fprintln(&logText, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
			}
		}
	}()
	var base string
	select {
	case addr := <-addrs:
		base = "http://" + addr
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not start listening:\n%s", logText.String())
	}
	exerciseAdmin(t, base, s)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	// Wait reads nothing more from the pipe: read the log to its end
	// (the process exiting closes it) before calling it.
	waited := make(chan error, 1)
	go func() {
		<-logDone
		waited <- cmd.Wait()
	}()
	select {
	case err := <-waited:
		exited = true
		require.NoError(t, err, "exit status after SIGTERM:\n%s", logText.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM:\n%s", logText.String())
	}
	require.Equal(t, 0, cmd.ProcessState.ExitCode())
	require.Contains(t, logText.String(), `msg="shutting down"`)
	require.Contains(t, logText.String(), "msg=stopped")
}

// TestCompactCommand compacts every directory offline.
func TestCompactCommand(t *testing.T) {
	s := newServeSetup(t)
	// The second index does not exist yet: an error for it, the first
	// one still compacts.
	code, _, errOut := runCmd("compact", "--conf", s.confPath)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "compact [1/2] "+s.locations[0]+": done in ")
	require.Contains(t, errOut, "about 1000 entries")
	require.Contains(t, errOut, "compact [2/2] "+s.locations[1]+": no entry location index here")
	require.Contains(t, errOut, "1 of 2 directories failed")

	ix, err := entrylocation.Open(s.locations[1], nil)
	require.NoError(t, err)
	require.NoError(t, ix.Close())
	code, _, errOut = runCmd("compact", "--conf", s.confPath)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "compact [1/2] "+s.locations[0]+": compacting 1 tables")
	require.Contains(t, errOut, "-> 1 tables")
	require.Contains(t, errOut, "compact [2/2] "+s.locations[1]+": done in ")

	// Interrupted (SIGINT cancels the context): an error.
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = compactAll(ctx, []string{"--conf", s.confPath}, &out, time.Millisecond)
	require.ErrorContains(t, err, "interrupted")
}

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		require.Equal(t, tc.want, formatBytes(tc.n))
	}
}

// TestServeRefusesUnconverted: serve on a directory with BookKeeper's
// RocksDB index, or with BookKeeper's entry logs and no index, exits 1
// naming the directory and the migrate command with this configuration.
func TestServeRefusesUnconverted(t *testing.T) {
	s := newServeSetup(t)
	rocks := filepath.Join(s.root, "i2", "current", "ledgers")
	require.NoError(t, os.MkdirAll(rocks, 0o755))
	for _, f := range []string{"CURRENT", "MANIFEST-000005", "OPTIONS-000007", "IDENTITY"} {
		require.NoError(t, os.WriteFile(filepath.Join(rocks, f), nil, 0o644))
	}
	code, _, errOut := runCmd("serve", "--conf", s.confPath)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, rocks)
	require.Contains(t, errOut, "bookie-index migrate --conf "+s.confPath)

	s = newServeSetup(t)
	logDir := filepath.Join(s.root, "l2", "current")
	require.NoError(t, os.MkdirAll(logDir, 0o755))
	header := make([]byte, 1024)
	copy(header, "BKLO")
	header[7] = 1
	require.NoError(t, os.WriteFile(filepath.Join(logDir, "0.log"), header, 0o644))
	code, _, errOut = runCmd("serve", "--conf", s.confPath)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, filepath.Join(logDir, "0.log"))
	require.Contains(t, errOut, "bookie-index migrate --conf "+s.confPath)
	_, err := os.Stat(filepath.Join(s.root, "i2", "current"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was created")
}

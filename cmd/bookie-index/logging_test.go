package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// oneDirSetup writes a bk_server.conf with one ledger directory (no
// token) and returns its path and the directory's index paths.
func oneDirSetup(t *testing.T) (confPath, locations, ledgers string) {
	t.Helper()
	root := t.TempDir()
	confPath = filepath.Join(root, "bk_server.conf")
	conf := strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(root, "l1"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=4",
		"flushInterval=3600000",
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o600))
	current := filepath.Join(root, "l1", "current")
	return confPath, filepath.Join(current, "locations"), filepath.Join(current, "ledgers")
}

// serveWhile runs serve in-process with args, calls fn with the admin
// server's base URL, stops serve and returns what it logged.
func serveWhile(t *testing.T, args []string, fn func(base string)) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, args, &stderr, func(addr string) { addrs <- addr })
	}()
	select {
	case addr := <-addrs:
		fn("http://" + addr)
	case err := <-done:
		t.Fatalf("serve returned %v\n%s", err, stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	return stderr.String()
}

// newestFile returns the last file of dir whose name ends in suffix.
func newestFile(t *testing.T, dir, suffix string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	require.NoError(t, err)
	require.NotEmpty(t, names, "no %s file in %s", suffix, dir)
	return names[len(names)-1]
}

// linesWith returns the lines of log holding every one of subs.
func linesWith(log string, subs ...string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// TestServeLog is the service's log end to end: the engines of both
// indexes log through it (a torn WAL tail at open is a WARN naming the
// DB), every line is one JSON object with --log-format json, and a
// damaged table block read by many requests is one line, without a stack
// trace.
func TestServeLog(t *testing.T) {
	confPath, locations, ledgers := oneDirSetup(t)
	args := []string{"--conf", confPath}
	entryURL := func(base string, e int) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=3&entryId=%d", base, e)
	}
	serveWhile(t, args, func(base string) {
		for e := 0; e < 200; e++ {
			code, body := request(t, http.MethodPut, entryURL(base, e), strings.Repeat("p", 100), "")
			require.Equal(t, http.StatusOK, code, body)
		}
		code, body := request(t, http.MethodPut, base+"/api/v1/bookie/checkpoint", "", "")
		require.Equal(t, http.StatusOK, code, body)
	})

	// A crash in the middle of a write leaves a partial record at the end
	// of each index's WAL.
	for _, db := range []string{locations, ledgers} {
		wal := newestFile(t, db, ".log")
		f, err := os.OpenFile(wal, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.Write([]byte{0xa5, 0x5a, 0xa5})
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	log := serveWhile(t, append(args, "--log-format", "json"), func(base string) {
		code, body := request(t, http.MethodGet, entryURL(base, 199), "", "")
		require.Equal(t, http.StatusOK, code, body)
	})
	for _, db := range []string{locations, ledgers} {
		require.NotEmpty(t, linesWith(log, `"level":"WARN"`, "WAL", `"db":"`+db+`"`),
			"the engine's WARN about %s's torn WAL is not in the service's log:\n%s", db, log)
	}
	for _, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "not one JSON object: %q", line)
	}

	// Flush the index's memtable to a table, and damage one of its data
	// blocks. Every read of the block fails; the log says so once.
	d, err := lsm.Open(locations, nil)
	require.NoError(t, err)
	require.NoError(t, d.Flush())
	require.NoError(t, d.Close())
	table := newestFile(t, locations, ".sst")
	data, err := os.ReadFile(table)
	require.NoError(t, err)
	data[len(data)/4] ^= 0x55
	require.NoError(t, os.WriteFile(table, data, 0o600))
	log = serveWhile(t, args, func(base string) {
		for i := 0; i < 30; i++ {
			code, body := request(t, http.MethodGet, entryURL(base, i%200), "", "")
			require.Equal(t, http.StatusInternalServerError, code, body)
			require.Contains(t, body, table)
		}
	})
	failed := linesWith(log, "data API request failed")
	require.Len(t, failed, 1, "one line for one damaged block:\n%s", log)
	require.Contains(t, failed[0], "level=ERROR")
	require.Contains(t, failed[0], filepath.Base(table))
	require.NotContains(t, failed[0], "stack trace")
	require.NotContains(t, failed[0], ".go:")
	require.Less(t, len(failed[0]), 1000, failed[0])
}

// TestLogFlags: the flags are checked, listed, and win over the keys.
func TestLogFlags(t *testing.T) {
	confPath, _, _ := oneDirSetup(t)
	code, _, errOut := runCmd("serve", "--conf", confPath, "--log-level", "verbose")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `log level "verbose" is not one of debug, info, warn, error`)
	code, _, errOut = runCmd("compact", "--conf", confPath, "--log-format", "xml")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `log format "xml" is not one of text, json`)
	code, out, _ := runCmd("rebuild", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, out, "-log-level")
	require.Contains(t, errOut, "-log-format")

	// serve at warn (the flag over the key): none of its info lines.
	log := serveWhile(t, []string{"--conf", confPath, "--set", "logLevel=debug", "--log-level", "warn"}, func(string) {})
	require.NotContains(t, log, "level=INFO", log)
	// The key alone.
	log = serveWhile(t, []string{"--conf", confPath, "--set", "logLevel=error"}, func(string) {})
	require.Empty(t, log)
}

// TestCompactLog: the offline compaction logs warnings only, the
// engine's included (a torn WAL tail at open), unless told otherwise.
func TestCompactLog(t *testing.T) {
	s := newServeSetup(t)
	wal := newestFile(t, s.locations[0], ".log")
	f, err := os.OpenFile(wal, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0xa5, 0x5a, 0xa5})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	code, _, errOut := runCmd("compact", "--conf", s.confPath)
	require.Equal(t, 1, code, errOut) // the second index does not exist
	require.NotEmpty(t, linesWith(errOut, "level=WARN", "WAL", "db="+s.locations[0]),
		"the engine's WARN is not in compact's log:\n%s", errOut)
	require.NotContains(t, errOut, "level=INFO")
	// The index logs its compaction at debug only: compact prints its own
	// lines, as the admin API logs its own (one line per compaction).
	code, _, errOut = runCmd("compact", "--conf", s.confPath, "--log-level", "info")
	require.Equal(t, 1, code, errOut)
	require.NotContains(t, errOut, "Starting entry location index compaction")
	code, _, errOut = runCmd("compact", "--conf", s.confPath, "--log-level", "debug")
	require.Equal(t, 1, code, errOut)
	require.NotEmpty(t, linesWith(errOut, "level=DEBUG", "Starting entry location index compaction", "path="+s.locations[0]), errOut)
}

// TestRebuildLog: both engines of a rebuild log through its logger: the
// ledgers index's (a torn WAL tail at open is a WARN naming it) and the new
// locations index's (its ingestion, at info).
func TestRebuildLog(t *testing.T) {
	confPath, locations, ledgers := oneDirSetup(t)
	serveWhile(t, []string{"--conf", confPath}, func(base string) {
		for e := 0; e < 20; e++ {
			code, body := request(t, http.MethodPut, fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=3&entryId=%d", base, e), "payload", "")
			require.Equal(t, http.StatusOK, code, body)
		}
		code, body := request(t, http.MethodPut, base+"/api/v1/bookie/checkpoint", "", "")
		require.Equal(t, http.StatusOK, code, body)
	})
	f, err := os.OpenFile(newestFile(t, ledgers, ".log"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{0xa5, 0x5a, 0xa5})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	code, _, errOut := runCmd("rebuild", "--conf", confPath)
	require.Equal(t, 0, code, errOut)
	require.NotEmpty(t, linesWith(errOut, "level=WARN", "WAL", "db="+ledgers), errOut)
	require.Contains(t, errOut, "20 entries of 1 ledgers")
	require.NotContains(t, errOut, "level=INFO")
	// The new locations index's engine: its ingestion of the rebuilt
	// tables, at info.
	code, _, errOut = runCmd("rebuild", "--conf", confPath, "--log-level", "info")
	require.Equal(t, 0, code, errOut)
	require.NotEmpty(t, linesWith(errOut, "level=INFO", "lsm: ingested tables", "db="+locations), errOut)
}

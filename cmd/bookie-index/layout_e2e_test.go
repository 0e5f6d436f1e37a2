package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// startServeIn runs serve in-process with args and returns its base URL
// and its stop function (which returns serve's error); or, if serve
// returns before it listens, its error.
func startServeIn(t *testing.T, args ...string) (string, func() error, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, nil, args, &stderr, func(addr string) { addrs <- addr }) }()
	select {
	case addr := <-addrs:
		return "http://" + addr, func() error { cancel(); return <-done }, nil
	case err := <-done:
		cancel()
		return "", nil, err
	}
}

// TestServeDirectoryAdded is the probe from outside: entries
// written through serve with one ledger directory; a second directory
// added without allowStorageExpansion makes serve refuse, naming both and
// the key; with it every entry reads back and new ledgers use both; a
// restart without the key keeps working.
func TestServeDirectoryAdded(t *testing.T) {
	root := t.TempDir()
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"httpServerPort=0", "flushInterval=100", "dbStorage_rocksDB_writeBufferSizeMB=4",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
	}, "\n")+"\n"), 0o600))
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	one := []string{"--conf", confPath, "--set", "ledgerDirectories=" + a}
	two := []string{"--conf", confPath, "--set", "ledgerDirectories=" + a + "," + b}
	put := func(base string, l int64) {
		code, body := request(t, http.MethodPut, fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=0", base, l), fmt.Sprintf("entry of %d", l), "")
		require.Equal(t, http.StatusOK, code, body)
	}
	get := func(base string, l int64) {
		code, body := request(t, http.MethodGet, fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=0", base, l), "", "")
		require.Equal(t, http.StatusOK, code, "ledger %d: %s", l, body)
		require.Equal(t, fmt.Sprintf("entry of %d", l), body)
	}

	base, stop, err := startServeIn(t, one...)
	require.NoError(t, err)
	for l := int64(0); l < 10; l++ {
		put(base, l)
	}
	require.NoError(t, stop())

	_, _, err = startServeIn(t, two...)
	require.ErrorContains(t, err, "the directories changed: ["+a+"] were recorded at the first start, ["+a+", "+b+"] are configured")
	require.ErrorContains(t, err, "allowStorageExpansion=true")

	base, stop, err = startServeIn(t, append(two, "--set", "allowStorageExpansion=true")...)
	require.NoError(t, err)
	for l := int64(0); l < 10; l++ {
		get(base, l)
	}
	for l := int64(10); l < 20; l++ {
		put(base, l)
	}
	require.NoError(t, stop())
	logs, err := filepath.Glob(filepath.Join(b, "current", "*.log"))
	require.NoError(t, err)
	var written int64
	for _, l := range logs {
		st, err := os.Stat(l)
		require.NoError(t, err)
		written += st.Size() - 1024 // past the header
	}
	require.Positive(t, written, "new ledgers use the new directory")

	base, stop, err = startServeIn(t, two...)
	require.NoError(t, err)
	for l := int64(0); l < 20; l++ {
		get(base, l)
	}
	require.NoError(t, stop())
}

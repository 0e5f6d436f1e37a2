package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/stretchr/testify/require"
)

// checkSetup is a closed storage of two ledger directories (with separate
// index directories) and a bk_server.conf naming them.
type checkSetup struct {
	root, confPath string
	ledgerDirs     []string
	indexDirs      []string
}

func newCheckSetup(t *testing.T) checkSetup {
	t.Helper()
	root := t.TempDir()
	s := checkSetup{root: root, confPath: filepath.Join(root, "bk_server.conf")}
	for _, d := range []string{"l1", "l2"} {
		s.ledgerDirs = append(s.ledgerDirs, filepath.Join(root, d))
	}
	for _, d := range []string{"i1", "i2"} {
		s.indexDirs = append(s.indexDirs, filepath.Join(root, d))
	}
	st, err := bookie.Open(&bookie.Options{LedgerDirs: s.ledgerDirs, IndexDirs: s.indexDirs, FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20})
	require.NoError(t, err)
	for l := int64(0); l < 6; l++ {
		for e := int64(0); e < 50; e++ {
			require.NoError(t, st.AddEntry(l, e, []byte(strings.Repeat("x", int(e)))))
		}
	}
	require.NoError(t, st.Close())
	lines := []string{
		"ledgerDirectories=" + strings.Join(s.ledgerDirs, ","),
		"indexDirectories=" + strings.Join(s.indexDirs, ","),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
		"dbStorage_writeCacheMaxSizeMb=4",
		"dbStorage_readAheadCacheMaxSizeMb=1",
	}
	require.NoError(t, os.WriteFile(s.confPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return s
}

func TestCheckCommand(t *testing.T) {
	s := newCheckSetup(t)
	code, out, errOut := runCmd("check", "--conf", s.confPath)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "check [1/2] "+s.ledgerDirs[0]+" (index "+filepath.Join(s.indexDirs[0], "current", "locations")+"): 1 entry log (")
	require.Contains(t, out, "150 locations verified: OK")
	require.Equal(t, 2, strings.Count(out, ": OK in "))

	// A flipped byte in a record of the second directory's log.
	logPath := filepath.Join(s.ledgerDirs[1], "current", entrylog.LogFileName(0))
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	data[len(data)/2] ^= 0x10
	require.NoError(t, os.WriteFile(logPath, data, 0o644))
	code, out, errOut = runCmd("check", "--conf", s.confPath)
	require.Equal(t, 1, code, "%s%s", out, errOut)
	require.Contains(t, out, "check [2/2] "+s.ledgerDirs[1]+": problem: damaged entry-log record: entrylog: "+logPath)
	require.Contains(t, out, "check [2/2] "+s.ledgerDirs[1]+": problem: location naming a damaged record: entrylog: entry ")
	require.Contains(t, out, "1 damaged entry-log record, 1 location naming a damaged record: 2 problems")
	require.Contains(t, errOut, "problems found in 1 of 2 directories")
	require.Equal(t, 1, strings.Count(out, ": OK in "), "the first directory is clean")

	// Bad usage.
	code, _, errOut = runCmd("check", "--conf", s.confPath, "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unexpected argument "extra"`)
	code, _, _ = runCmd("check", "-h")
	require.Equal(t, 0, code)
}

// TestCheckCommandRefusesServe: check refuses the directories a running
// serve holds, saying so, and checks them once it is stopped.
func TestCheckCommandRefusesServe(t *testing.T) {
	s := newCheckSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, []string{"--conf", s.confPath}, &stderr, func(addr string) { addrs <- addr })
	}()
	select {
	case <-addrs:
	case err := <-done:
		t.Fatalf("serve returned %v\n%s", err, stderr.String())
	}
	code, out, errOut := runCmd("check", "--conf", s.confPath)
	require.Equal(t, 1, code, "%s%s", out, errOut)
	require.Contains(t, errOut, "check [1/2] "+s.ledgerDirs[0]+": bookie: check: "+filepath.Join(s.indexDirs[0], "current", "locations")+
		" is in use: stop the storage (bookie-index serve) first")
	require.Contains(t, errOut, "2 of 2 directories could not be checked")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	code, out, errOut = runCmd("check", "--conf", s.confPath)
	require.Equal(t, 0, code, "%s%s", out, errOut)
}

// TestCheckCommandLayout: check refuses, as serve does, a configuration
// whose directory list is not the one the LAYOUT copies record (here the
// two directories swapped), naming the rule; each directory's own files
// are still checked.
func TestCheckCommandLayout(t *testing.T) {
	s := newCheckSetup(t)
	swapped := filepath.Join(s.root, "swapped.conf")
	conf, err := os.ReadFile(s.confPath)
	require.NoError(t, err)
	text := strings.Replace(string(conf), "ledgerDirectories="+strings.Join(s.ledgerDirs, ","), "ledgerDirectories="+s.ledgerDirs[1]+","+s.ledgerDirs[0], 1)
	text = strings.Replace(text, "indexDirectories="+strings.Join(s.indexDirs, ","), "indexDirectories="+s.indexDirs[1]+","+s.indexDirs[0], 1)
	require.NoError(t, os.WriteFile(swapped, []byte(text), 0o600))
	code, out, errOut := runCmd("check", "--conf", swapped)
	require.Equal(t, 1, code, "%s%s", out, errOut)
	require.Contains(t, out, "check: problem: directory layout: bookie: refusing to open")
	require.Equal(t, 2, strings.Count(out, ": OK in "), "each directory's files are intact")
	require.Contains(t, errOut, "serve refuses the directory layout")
}

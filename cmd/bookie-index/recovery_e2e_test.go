package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newestNonEmpty returns the path of the newest file of dir whose name ends
// in suffix (or starts with it) and that holds bytes.
func newestNonEmpty(t *testing.T, dir, suffix string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Size() > 0 &&
			(strings.HasSuffix(e.Name(), suffix) || strings.HasPrefix(e.Name(), suffix)) {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(t, names, "no %s in %s", suffix, dir)
	sort.Strings(names)
	return filepath.Join(dir, names[len(names)-1])
}

func flipFileByte(t *testing.T, path string, fromEnd int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[len(data)-fromEnd] ^= 0x01
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// TestServeRefusesSyncedDamage is the probe from outside: after
// acknowledged checkpoints and a SIGKILL, one byte flipped 12 bytes before
// the end of the newest non-empty WAL of the locations index, of the
// ledgers index, or of the manifest makes serve refuse to start, naming the
// file, and `db check` agrees; flipped back, every entry is served.
func TestServeRefusesSyncedDamage(t *testing.T) {
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
		"ledgerDirectories=" + filepath.Join(root, "l1"),
		"indexDirectories=" + filepath.Join(root, "i1"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"flushInterval=100",
	}, "\n") + "\n"
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o600))

	const ledgers, entries = 6, 60
	entryURL := func(base string, l, e int) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l, e)
	}
	p := startServe(t, bin, confPath)
	put := func(from, to int) {
		for l := from; l <= to; l++ {
			for e := range entries {
				code, body := request(t, http.MethodPut, entryURL(p.base, l, e), fmt.Sprintf("l%d e%d", l, e), "")
				require.Equal(t, http.StatusOK, code, body)
			}
			code, body := request(t, http.MethodPut, p.base+"/api/v1/bookie/checkpoint", "", "")
			require.Equal(t, http.StatusOK, code, body)
		}
	}
	put(1, 4)
	// A compaction flushes the locations index: its manifest then names a
	// table, which a dropped edit would orphan.
	code, body := request(t, http.MethodPut, p.base+"/api/v1/bookie/entry_location_compact", `{"entryLocationRocksDBCompact":true}`, "")
	require.Equal(t, http.StatusOK, code, body)
	waitUntil(t, "the compaction", 20*time.Second, func() bool {
		return metricSum(t, p.base, "bookie_index_entry_location_compactions_total", `result="completed"`) >= 1
	})
	put(5, ledgers)
	require.Error(t, p.stop(t, syscall.SIGKILL), "killed")
	tables, err := filepath.Glob(filepath.Join(root, "i1", "current", "locations", "*.sst"))
	require.NoError(t, err)
	require.NotEmpty(t, tables)

	current := filepath.Join(root, "i1", "current")
	// The ledgers index first: a refused open of the locations index
	// happens after the ledgers index recovered (and absorbed its WAL).
	for _, target := range []struct{ name, dir, kind string }{
		{"ledgers WAL", "ledgers", ".log"},
		{"locations WAL", "locations", ".log"},
		{"locations manifest", "locations", "MANIFEST-"},
	} {
		target := struct{ name, path string }{target.name, newestNonEmpty(t, filepath.Join(current, target.dir), target.kind)}
		flipFileByte(t, target.path, 12)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		serveOut, err := exec.CommandContext(ctx, bin, "serve", "--conf", confPath).CombinedOutput()
		cancel()
		require.Error(t, err, "%s: serve must refuse to start:\n%s", target.name, serveOut)
		require.Contains(t, string(serveOut), target.path, target.name)
		require.Contains(t, string(serveOut), "offset", target.name)
		code, _, errOut := runCmd("db", "check", filepath.Dir(target.path))
		require.Equal(t, 1, code, target.name)
		require.Contains(t, errOut, target.path, target.name)
		for _, table := range tables {
			_, err := os.Stat(table)
			require.NoError(t, err, "%s: a table vanished", target.name)
		}
		flipFileByte(t, target.path, 12) // repaired
	}

	p = startServe(t, bin, confPath)
	for l := 1; l <= ledgers; l++ {
		for e := range entries {
			code, body := request(t, http.MethodGet, entryURL(p.base, l, e), "", "")
			require.Equal(t, http.StatusOK, code, "ledger %d entry %d: %s", l, e, body)
			require.Equal(t, fmt.Sprintf("l%d e%d", l, e), body)
		}
	}
	require.NoError(t, p.stop(t, syscall.SIGTERM), p.log.String())
}

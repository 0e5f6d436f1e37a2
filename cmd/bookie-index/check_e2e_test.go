package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestCheckFindsWhatServeRefuses is the probe from outside, on the
// built binary: entries written through serve (ledger 1, then ledger 2,
// deleted, then ledger 3) over several entry logs, serve stopped, the
// location index compacted into tables; then one byte flipped at a time
// makes `check` exit 1 naming the file and the offset: in the middle of a
// rotated entry log where only the deleted ledger's records follow (no
// location reaches them), with the log's ledgers map and without it (a
// crash loses the maps, which are written lazily); in a LAYOUT copy
// (serve refuses to start); in a filter block of a location table (serve
// answers 500 for reads of absent entries). Flipped back, check exits 0.
func TestCheckFindsWhatServeRefuses(t *testing.T) {
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
	ledgerDir, indexDir := filepath.Join(root, "l1"), filepath.Join(root, "i1")
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + ledgerDir,
		"indexDirectories=" + indexDir,
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"logSizeLimit=16384",
		"dbStorage_writeCacheMaxSizeMb=4",
		"dbStorage_readAheadCacheMaxSizeMb=1",
	}, "\n")+"\n"), 0o600))

	p := startServe(t, bin, confPath)
	payload := strings.Repeat("p", 300)
	for _, w := range []struct{ ledger, entries int }{{1, 40}, {2, 80}, {3, 40}} {
		for e := range w.entries {
			code, body := request(t, http.MethodPut, fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", p.base, w.ledger, e), payload, "")
			require.Equal(t, http.StatusOK, code, body)
		}
		code, body := request(t, http.MethodPut, p.base+"/api/v1/bookie/checkpoint", "", "")
		require.Equal(t, http.StatusOK, code, body)
	}
	code, body := request(t, http.MethodDelete, p.base+"/api/v1/ledger?ledgerId=2", "", "")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, p.stop(t, syscall.SIGTERM))
	compact := exec.Command(bin, "compact", "--conf", confPath)
	out, err = compact.CombinedOutput()
	require.NoError(t, err, "%s", out)

	check := func() (int, string) {
		t.Helper()
		cmd := exec.Command(bin, "check", "--conf", confPath)
		out, err := cmd.CombinedOutput()
		t.Logf("check: %v\n%s", err, out)
		if err != nil {
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", out)
			return exit.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	flip := func(path string, at int64) func() {
		t.Helper()
		good, err := os.ReadFile(path)
		require.NoError(t, err)
		bad := append([]byte(nil), good...)
		bad[at] ^= 0x10
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		return func() { require.NoError(t, os.WriteFile(path, good, 0o644)) }
	}
	code, outText := check()
	require.Equal(t, 0, code, outText)
	require.Contains(t, outText, "80 locations verified: OK", "ledgers 1 and 3")

	// A record of ledger 2 in the middle of a log that is not the newest,
	// with only ledger 2's records after it.
	logDir := filepath.Join(ledgerDir, "current")
	ids, err := entrylog.ListLogs(vfs.Default, logDir)
	require.NoError(t, err)
	require.Greater(t, len(ids), 3)
	var logPath string
	var at int64
	for _, id := range ids[:len(ids)-1] {
		path := filepath.Join(logDir, entrylog.LogFileName(id))
		var ledgers, offsets []int64
		_, err := entrylog.Scan(vfs.Default, path, func(r *entrylog.Record) error {
			ledgers = append(ledgers, r.LedgerID)
			offsets = append(offsets, entrylog.LocationOffset(r.Location)-entrylog.SizeFieldSize)
			return nil
		})
		require.NoError(t, err)
		if n := len(ledgers); n > 4 && ledgers[0] == 1 && ledgers[n-1] == 2 {
			for i := n - 3; i > 0 && ledgers[i] == 2; i-- {
				at = offsets[i]
			}
			logPath = path
			break
		}
	}
	require.NotEmpty(t, logPath, "a log holding ledger 1 and then ledger 2")
	restore := flip(logPath, at+entrylog.RecordOverhead+100)
	code, outText = check()
	require.Equal(t, 1, code, outText)
	require.Contains(t, outText, fmt.Sprintf("problem: damaged entry-log record: entrylog: %s: ", logPath))
	require.Contains(t, outText, fmt.Sprintf("at offset %d: record checksum", at))
	require.Contains(t, outText, "says it was written whole up to offset")
	maps, err := filepath.Glob(filepath.Join(logDir, "*.ledgers"))
	require.NoError(t, err)
	require.NotEmpty(t, maps)
	for _, m := range maps {
		require.NoError(t, os.Rename(m, m+".away"))
	}
	code, outText = check()
	require.Equal(t, 1, code, outText)
	require.Contains(t, outText, fmt.Sprintf("at offset %d: record checksum", at))
	require.Contains(t, outText, "not the newest log, and the record at offset")
	for _, m := range maps {
		require.NoError(t, os.Rename(m+".away", m))
	}
	restore()

	// A byte of LAYOUT.
	layout := filepath.Join(ledgerDir, "current", ondisk.LayoutFileName)
	restore = flip(layout, 12)
	code, outText = check()
	require.Equal(t, 1, code, outText)
	require.Contains(t, outText, "problem: unreadable directory layout: bookie: directory layout "+layout+": offset ")
	require.Contains(t, outText, "check: problem: directory layout: bookie: refusing to open")
	restore()

	// A byte of a filter block of a location table.
	tables, err := filepath.Glob(filepath.Join(indexDir, "current", "locations", "*.sst"))
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	tb, err := lsm.OpenTable(vfs.Default, tables[0])
	require.NoError(t, err)
	blocks, err := tb.Blocks()
	require.NoError(t, err)
	require.NoError(t, tb.Close())
	var filter *lsm.TableBlock
	for i := range blocks {
		if blocks[i].Kind == "filter" {
			filter = &blocks[i]
			break
		}
	}
	require.NotNil(t, filter, "%v", blocks)
	restore = flip(tables[0], int64(filter.Offset+filter.Length/2))
	code, outText = check()
	require.Equal(t, 1, code, outText)
	require.Contains(t, outText, "problem: damaged index file: ")
	require.Contains(t, outText, fmt.Sprintf("%s: filter block at offset %d", tables[0], filter.Offset))
	restore()

	code, outText = check()
	require.Equal(t, 0, code, outText)
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/stretchr/testify/require"
)

// TestHelpEverywhere: -h, -help and --help (and help in a group) at every
// level print the usage on stdout and exit 0, with nothing on stderr.
func TestHelpEverywhere(t *testing.T) {
	var lines [][]string
	for _, h := range []string{"-h", "-help", "--help", "help"} {
		lines = append(lines, []string{h}, []string{"db", h}, []string{"sst", h})
	}
	for _, c := range []string{"serve", "compact", "rebuild", "check", "check-ledgers-index", "migrate", "gc", "relocate", "bench"} {
		lines = append(lines, []string{c, "-h"}, []string{c, "--help"})
	}
	for _, s := range dbCommands() {
		lines = append(lines, []string{"db", s.name, "-h"}, []string{"db", s.name, "--help"})
	}
	for _, s := range sstCommands() {
		lines = append(lines, []string{"sst", s.name, "-h"})
	}
	// Help after other arguments, as the go command takes it.
	lines = append(lines, []string{"db", "get", "DIR", "1", "-h"}, []string{"compact", "--dir", "x", "-h"})
	for _, args := range lines {
		code, out, errOut := runCmd(args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Empty(t, errOut, "%v", args)
		require.True(t, strings.HasPrefix(out, "usage: bookie-index"), "%v:\n%s", args, out)
		require.NotContains(t, out, "help requested", "%v", args)
	}
	_, out, _ := runCmd("db", "get", "-h")
	require.Contains(t, out, "usage: bookie-index db get DIR LEDGER ENTRY | DIR KEY")
	_, out, _ = runCmd("db", "scan", "-h")
	require.Contains(t, out, "-limit", "the flags are listed")
	_, out, _ = runCmd("db", "-h")
	for _, s := range dbCommands() {
		require.Contains(t, out, "  "+s.name+" ", "db -h lists %s", s.name)
	}
	_, out, _ = runCmd("compact", "-h")
	require.Contains(t, out, "[--dir DIR]")
	require.Contains(t, out, "-conf")
	_, out, _ = runCmd("bench", "-h")
	require.Contains(t, out, "docs/benchmarks.md")
}

// TestUsageErrorsOneLine: a usage error is one line on stderr naming the
// command and its -h, exit 2.
func TestUsageErrorsOneLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	buildDB(t, dir, 2, 10)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate" (run 'bookie-index -h' for usage)`},
		{[]string{"db"}, "bookie-index db: missing subcommand (run 'bookie-index db -h' for usage)"},
		{[]string{"db", "zap"}, `bookie-index db: unknown subcommand "zap" (run 'bookie-index db -h' for usage)`},
		{[]string{"db", "props", dir, "--bogus"}, "bookie-index db props: flag provided but not defined: -bogus (run 'bookie-index db props -h' for usage)"},
		{[]string{"db", "scan", dir, "--limit"}, "bookie-index db scan: flag needs an argument: -limit"},
		{[]string{"db", "get", dir}, "bookie-index db get: takes 2 or 3 argument(s), not 1"},
		{[]string{"sst", "props"}, "bookie-index sst props: props takes one table file"},
		{[]string{"serve", "--nope"}, "bookie-index serve: flag provided but not defined: -nope (run 'bookie-index serve -h' for usage)"},
		{[]string{"serve", "--conf", "a.conf", "--conf", "b.conf"}, `invalid value "b.conf" for flag -conf: given twice (a.conf and b.conf)`},
		{[]string{"compact", "--dir"}, "flag needs an argument: -dir"},
		{[]string{"version", "extra"}, `unexpected argument "extra"`},
	} {
		code, out, errOut := runCmd(tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Empty(t, out, "%v", tc.args)
		require.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line:\n%s", tc.args, errOut)
		require.Contains(t, errOut, tc.msg, "%v", tc.args)
	}
}

// TestVersion: --version and version print the module version, the commit
// and the Go version.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		code, out, errOut := runCmd(args...)
		require.Equal(t, 0, code, errOut)
		require.True(t, strings.HasPrefix(out, "bookie-index "), out)
		require.True(t, strings.Contains(out, ", commit ") || strings.Contains(out, ", built without VCS information"), out)
		require.Contains(t, out, runtime.Version())
		require.Equal(t, 1, strings.Count(out, "\n"))
	}
}

// TestVersionWithoutVCS: a binary built with -buildvcs=false (CI's
// setting) says so and how to record the commit, or names the commit
// given with -ldflags -X main.commit.
func TestVersionWithoutVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, `built without VCS information (-buildvcs=false, or no .git): build with -ldflags "-X main.commit=$(git rev-parse HEAD)" to record the commit`},
		{[]string{"-ldflags", "-X main.commit=0123abcd"}, "commit 0123abcd (from -ldflags)"},
	} {
		bin := filepath.Join(dir, "bookie-index")
		args := append(append([]string{"build", "-buildvcs=false"}, tc.flags...), "-o", bin, ".")
		out, err := exec.Command(goTool, args...).CombinedOutput()
		require.NoError(t, err, "go build: %s", out)
		out, err = exec.Command(bin, "--version").Output()
		require.NoError(t, err)
		require.Contains(t, string(out), tc.want)
		require.NotContains(t, string(out), "unknown")
	}
}

// TestPositionalArguments: a negative number is an argument, not a flag;
// "--" ends the flags; flags go anywhere; keys are LEDGER:ENTRY or hex.
func TestPositionalArguments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	buildDB(t, dir, 4, 10)
	code, _, errOut := runCmd("db", "get", dir, "2", "-1")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "entry -1 of ledger 2: not found")
	require.NotContains(t, errOut, "flag")
	code, _, errOut = runCmd("db", "floor", dir, "-5")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "LEDGER -5 is negative")

	const want = "8589935620 (log: 2, pos: 1028)\n"
	require.Equal(t, want, mustRun(t, "db", "get", "--", dir, "2", "4"))
	require.Equal(t, want, mustRun(t, "db", "get", dir, "2:4"))
	require.Equal(t, want, mustRun(t, "db", "get", dir, "00000000000000020000000000000004"))
	require.Equal(t, want, mustRun(t, "db", "get", dir, "0x00000000000000020000000000000004"))
	// A failure names the subcommand too.
	code, _, errOut = runCmd("db", "wal", filepath.Join(dir, "nope"))
	require.Equal(t, 1, code)
	require.Equal(t, "bookie-index db wal: "+filepath.Join(dir, "nope")+": no such database directory\n", errOut)
	require.Contains(t, mustRun(t, "db", "props", dir, "--hex"), "keys 00000000000000000000000000000000 .. ")

	code, _, errOut = runCmd("db", "get", dir, "zz")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `KEY "zz" is neither LEDGER:ENTRY nor a key in hex`)

	// Flags before, between and after; the value of a flag may be negative.
	scan := "2:1 8589935617\n2:2 8589935618\n"
	require.Equal(t, scan, mustRun(t, "db", "scan", "--from", "2:1", dir, "--to", "2:3"))
	require.Equal(t, scan, mustRun(t, "db", "scan", "--from=0x00000000000000020000000000000001", "--to", "2:3", dir))
	require.Equal(t, 30, strings.Count(mustRun(t, "db", "scan", dir, "--limit", "-1"), "\n"), "a negative limit is no limit (ledger 3 is deleted)")
	require.Equal(t, "00000000000000020000000000000001 0000000200000401\n",
		mustRun(t, "db", "scan", dir, "--hex", "--from", "2:1", "--limit", "1"))
	// After "--" everything is positional, even what looks like a flag.
	code, _, errOut = runCmd("db", "get", "--", dir, "2", "--hex")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `ENTRY "--hex" is not an integer`)
}

// TestDBDumps: db manifest and db wal dump the edits and batches; db
// ledgers decodes the ledgers index.
func TestDBDumps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	buildDB(t, dir, 4, 10)
	out := mustRun(t, "db", "manifest", dir)
	require.Contains(t, out, "edit 0 at offset 0: ")
	require.Regexp(t, `\+ L\d \d{6}\.sst \d+ bytes, 40 entries \(0 range deletions\), keys 0:0 \.\. 3:9, seqnums 1\.\.40`, out)
	require.Contains(t, out, "MANIFEST-")
	require.Contains(t, mustRun(t, "db", "manifest", dir, "--hex"), "keys 00000000000000000000000000000000 .. 00000000000000030000000000000009")

	// buildDB's last batch, the range deletion of ledger 3, is in the WAL.
	out = mustRun(t, "db", "wal", dir)
	require.Contains(t, out, "batch at offset 0: seqnum 41, 1 operations\n    41 RANGEDEL [3:0, 3:9223372036854775807)\n", out)
	require.Contains(t, out, ".log: ")
	require.NotContains(t, mustRun(t, "db", "wal", dir, "--ops=false"), "RANGEDEL")

	// The ledgers index of a storage.
	root := t.TempDir()
	st, err := bookie.Open(&bookie.Options{LedgerDirs: []string{filepath.Join(root, "l")}, IndexDirs: []string{filepath.Join(root, "i")},
		FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 1 << 20, ReadCacheSize: 1 << 20})
	require.NoError(t, err)
	require.NoError(t, st.SetMasterKey(7, []byte{0xab, 0xcd}))
	require.NoError(t, st.AddEntry(7, 0, []byte("x")))
	_, err = st.SetFenced(7)
	require.NoError(t, err)
	require.NoError(t, st.SetExplicitLAC(7, []byte{1, 2, 3}))
	require.NoError(t, st.AddEntry(9, 0, []byte("y")))
	require.NoError(t, st.Close())
	ledgers := filepath.Join(root, "i", "current", "ledgers")
	out = mustRun(t, "db", "ledgers", ledgers)
	require.Contains(t, out, "ledger 7: exists true, fenced true, purge pending false, floor 0, master key abcd, explicit LAC 3 bytes 010203\n")
	require.Contains(t, out, "ledger 9: exists true, fenced false, purge pending false, floor 0, master key none, explicit LAC none\n")
	require.Contains(t, out, ": 2 ledgers\n")
	require.Contains(t, mustRun(t, "db", "ledgers", ledgers, "--json"), `{"ledger":7,"exists":true,"fenced":true,"purge_pending":false,"floor":0,"master_key":"abcd","explicit_lac":"010203","has_explicit_lac":true}`)
	// An entry location index is no ledgers index.
	code, _, errOut := runCmd("db", "ledgers", dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is this a ledgers index?")
}

// TestDBCheckpointCommand: db checkpoint copies a closed database (its
// unflushed WAL too) into a new directory that reads the same, and
// refuses one a writer holds or an existing target.
func TestDBCheckpointCommand(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "db")
	buildDB(t, dir, 6, 500)
	out := filepath.Join(root, "backup")
	line := mustRun(t, "db", "checkpoint", dir, out)
	require.Regexp(t, `checkpoint of .*: \d+ tables \(\d+ hard-linked, 0 copied\), .*, 1 WALs copied, last seqnum 3001`, line)
	require.Equal(t, mustRun(t, "db", "scan", dir), mustRun(t, "db", "scan", out))
	require.Contains(t, mustRun(t, "db", "check", out), "OK")
	code, _, errOut := runCmd("db", "checkpoint", dir, out)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "exists (a checkpoint goes into a new directory)")

	// Restore: the checkpoint replaces the lost original and reads.
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.Rename(out, dir))
	require.True(t, strings.HasPrefix(mustRun(t, "db", "floor", dir, "5"), "499 "))
}

// TestCompactDir: compact --dir compacts one index directory.
func TestCompactDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locations")
	buildDB(t, dir, 6, 500)
	code, _, errOut := runCmd("compact", "--dir", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "compact [1/1] "+dir+": compacting ")
	require.Contains(t, errOut, "compact [1/1] "+dir+": done in ")
	require.Contains(t, errOut, "-> 1 tables")
}

// TestPlainProgress: into a pipe, redrawn status lines become plain lines,
// at most one per interval, and no escape code passes.
func TestPlainProgress(t *testing.T) {
	var buf bytes.Buffer
	w := progressOutput(&buf, time.Hour)
	for _, s := range []string{"\rload 10%\x1b[K", "\rload 20%\x1b[K", "\r\x1b[K", "row 1\n", "\rget 5%\x1b[K"} {
		_, err := w.Write([]byte(s))
		require.NoError(t, err)
	}
	require.Equal(t, "load 10%\nrow 1\n", buf.String())
}

// TestDBWALTornTail: a WAL cut short dumps its whole records and says
// where they end and what follows.
func TestDBWALTornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	buildDB(t, dir, 4, 10)
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	st, err := os.Stat(logs[0])
	require.NoError(t, err)
	require.NoError(t, os.Truncate(logs[0], st.Size()-3))
	out := mustRun(t, "db", "wal", dir)
	require.NotContains(t, out, "RANGEDEL", "the cut batch is not dumped")
	require.Contains(t, out, "records end at 0: ")
}

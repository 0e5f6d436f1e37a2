package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runCmd runs a command line in-process and returns exit code and output.
func runCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCmd(args...)
	require.Equal(t, 0, code, "%v: %s", args, errOut)
	return out
}

func props(t *testing.T, path string) propsJSON {
	var p propsJSON
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "sst", "props", path, "--json")), &p))
	return p
}

// TestSSTCommonPrefixCheck is the acceptance check at a smaller
// scale in CI: common prefix on vs off, identical scans, smaller index.
func TestSSTCommonPrefixCheck(t *testing.T) {
	dir := t.TempDir()
	on, off := filepath.Join(dir, "on.sst"), filepath.Join(dir, "off.sst")
	mustRun(t, "sst", "build", "--out", on, "--ledgers", "200", "--entries", "5000")
	mustRun(t, "sst", "build", "--out", off, "--ledgers", "200", "--entries", "5000", "--common-prefix", "off")
	pOn, pOff := props(t, on), props(t, off)
	require.Equal(t, uint64(1000000), pOn.Entries)
	require.Equal(t, uint64(1), pOn.FormatVersion)
	require.Greater(t, pOn.IndexPartitions, uint64(0))
	require.Greater(t, pOn.FilterPartitions, uint64(1))
	require.LessOrEqual(t, pOn.MaxFilterBlockBytes, uint64(4200), "filter partitions are about 4 KiB")
	idxOn := pOn.BytesByTier.Index + pOn.BytesByTier.TopIndex
	idxOff := pOff.BytesByTier.Index + pOff.BytesByTier.TopIndex
	t.Logf("index %d -> %d, data %d -> %d", idxOff, idxOn, pOff.BytesByTier.Data, pOn.BytesByTier.Data)
	require.LessOrEqual(t, float64(idxOn), 0.75*float64(idxOff))
	require.LessOrEqual(t, float64(pOn.BytesByTier.Data), 0.95*float64(pOff.BytesByTier.Data))
	require.Less(t, float64(pOn.FileBytes)/float64(pOn.Entries), 6.0, "at most 6 bytes per entry on disk")
	scanOn := mustRun(t, "sst", "scan", on, "--hex")
	require.Equal(t, scanOn, mustRun(t, "sst", "scan", off, "--hex"))
	require.Equal(t, 1000000, strings.Count(scanOn, "\n"))
	require.True(t, strings.HasPrefix(mustRun(t, "sst", "scan", on), "0:0 4294968324\n0:1 4294968424\n"))
}

// TestSSTVerifyFindsFlippedBytes flips one byte inside a data block, an
// index partition and a filter partition: verify must fail naming the kind
// and offset of the block, and pass the original.
func TestSSTVerifyFindsFlippedBytes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sst")
	mustRun(t, "sst", "build", "--out", path, "--ledgers", "50", "--entries", "2000", "--block-size", "4096", "--metadata-block-size", "512")
	require.Contains(t, mustRun(t, "sst", "verify", path), "OK")
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	layout := mustRun(t, "sst", "layout", path)
	for _, kind := range []string{"data", "index", "filter"} {
		var offset, length int
		for _, line := range strings.Split(layout, "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == kind {
				offset, _ = strconv.Atoi(f[1])
				length, _ = strconv.Atoi(f[2])
				break
			}
		}
		require.Greater(t, length, 0, kind)
		bad := append([]byte(nil), good...)
		bad[offset+length/2] ^= 0x40
		badPath := filepath.Join(dir, kind+".sst")
		require.NoError(t, os.WriteFile(badPath, bad, 0o644))
		code, _, errOut := runCmd("sst", "verify", badPath)
		require.Equal(t, 1, code, kind)
		require.Contains(t, errOut, "bad "+kind+" block at offset "+strconv.Itoa(offset), kind)
		require.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
	}
}

func TestSSTErrors(t *testing.T) {
	dir := t.TempDir()
	notTable := filepath.Join(dir, "not.sst")
	require.NoError(t, os.WriteFile(notTable, bytes.Repeat([]byte("x"), 500), 0o644))
	good := filepath.Join(dir, "good.sst")
	mustRun(t, "sst", "build", "--out", good, "--ledgers", "3", "--entries", "100")
	b, err := os.ReadFile(good)
	require.NoError(t, err)
	truncated := filepath.Join(dir, "trunc.sst")
	require.NoError(t, os.WriteFile(truncated, b[:len(b)-20], 0o644))
	empty := filepath.Join(dir, "empty.sst")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"sst", "props", filepath.Join(dir, "missing.sst")}, 1, "no such file"},
		{[]string{"sst", "verify", notTable}, 1, "not a bookie-index table"},
		{[]string{"sst", "scan", truncated}, 1, "not a bookie-index table"},
		{[]string{"sst", "props", empty}, 1, "too short"},
		{[]string{"sst", "props"}, 2, "takes one table file"},
		{[]string{"sst", "build", "--ledgers", "1"}, 2, "--out FILE is required"},
		{[]string{"sst", "build", "--out", filepath.Join(dir, "x"), "--layout", "bogus"}, 2, "accepted: partitioned, full"},
		{[]string{"sst", "build", "--out", filepath.Join(dir, "x"), "--common-prefix", "maybe"}, 2, "on or off"},
		{[]string{"sst", "build", "--out", filepath.Join(dir, "x"), "--block-size", "3"}, 2, "BlockSize"},
		{[]string{"sst", "frobnicate"}, 2, "unknown subcommand"},
		{[]string{"frobnicate"}, 2, "unknown command"},
	} {
		code, _, errOut := runCmd(tc.args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.msg, "%v", tc.args)
	}
}

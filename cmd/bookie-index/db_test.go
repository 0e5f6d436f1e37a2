package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// buildDB writes ledgers × entries entry locations (location = ledger<<32 |
// (entry+1024)) and ledger 3 deleted, then closes the DB.
func buildDB(t *testing.T, dir string, ledgers, entries int64) {
	d, err := lsm.Open(dir, &lsm.Options{WriteBufferSize: 256 << 10, TargetFileSizeBase: 128 << 10})
	require.NoError(t, err)
	var b lsm.Batch
	var v [8]byte
	for l := int64(0); l < ledgers; l++ {
		b.Reset()
		for e := int64(0); e < entries; e++ {
			binary.BigEndian.PutUint64(v[:], uint64(l)<<32|uint64(e+1024))
			b.Set(encodeKey(l, e), v[:])
		}
		require.NoError(t, d.Apply(&b, lsm.Sync))
	}
	require.NoError(t, d.Flush())
	b.Reset()
	b.DeleteRange(encodeKey(3, 0), encodeKey(3, 1<<63-1))
	require.NoError(t, d.Apply(&b, lsm.Sync))
	require.NoError(t, d.Close())
}

func TestDBTool(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locations")
	buildDB(t, dir, 10, 2000)

	var p dbPropsJSON
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "db", "props", dir, "--json")), &p))
	require.Greater(t, p.Tables, 0)
	require.Equal(t, uint64(20000), p.Entries)
	require.Greater(t, p.BytesByTier.Data, uint64(0))
	require.Contains(t, mustRun(t, "db", "props", dir), "level")

	require.Equal(t, "8589935620 (log: 2, pos: 1028)\n", mustRun(t, "db", "get", dir, "2", "4"))
	code, _, errOut := runCmd("db", "get", dir, "3", "4")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "not found")
	require.True(t, strings.HasPrefix(mustRun(t, "db", "floor", dir, "5"), "1999 "))
	code, _, errOut = runCmd("db", "floor", dir, "3")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no entries")
	scan := mustRun(t, "db", "scan", dir, "--from", "2:10", "--to", "2:13")
	require.Equal(t, "2:10 8589935626\n2:11 8589935627\n2:12 8589935628\n", scan)
	require.Equal(t, 1, strings.Count(mustRun(t, "db", "scan", dir, "--limit", "1", "--hex"), "\n"))
	require.Contains(t, mustRun(t, "db", "check", dir), "OK")

	// One flipped byte in a table: check fails naming it.
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	var table string
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".sst") {
			table = filepath.Join(dir, n.Name())
			break
		}
	}
	data, err := os.ReadFile(table)
	require.NoError(t, err)
	data[len(data)/3] ^= 0x20
	require.NoError(t, os.WriteFile(table, data, 0o644))
	code, _, errOut = runCmd("db", "check", dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, table)

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"db", "props", filepath.Join(dir, "nope")}, 1, "no such database directory"},
		{[]string{"db", "get", dir, "x", "1"}, 2, "not an integer"},
		{[]string{"db", "get", dir}, 2, "takes 2 or 3 argument(s), not 1"},
		{[]string{"db", "scan", dir, "--from", "a:b"}, 2, "not an integer"},
		{[]string{"db", "zap"}, 2, "unknown subcommand"},
	} {
		code, _, errOut := runCmd(tc.args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.msg, "%v", tc.args)
	}
}

// TestDBCheckSeesRecoveryDamage: `db check` on a database whose process
// died reports a byte flipped in the last, synced WAL record (file, offset,
// within synced bytes) and an orphan table, exiting 1.
func TestDBCheckSeesRecoveryDamage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locations")
	buildDB(t, dir, 2, 100)
	d, err := lsm.Open(dir, nil)
	require.NoError(t, err)
	defer d.Close() // the "killed" process; check runs while it is still open
	var b lsm.Batch
	for i := range 5 {
		b.Reset()
		b.Set(encodeKey(7, int64(i)), []byte("location"))
		require.NoError(t, d.Apply(&b, lsm.Sync))
	}
	// What a SIGKILL leaves: the files as they are, the lock released
	// (db refuses a directory a live process holds).
	dir = copyKilledDir(t, dir)
	require.Contains(t, mustRun(t, "db", "check", dir), "OK")

	var wal string
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".log") {
			wal = filepath.Join(dir, n.Name()) // the newest sorts last
		}
	}
	data, err := os.ReadFile(wal)
	require.NoError(t, err)
	data[len(data)-12] ^= 0x01
	require.NoError(t, os.WriteFile(wal, data, 0o644))
	code, _, errOut := runCmd("db", "check", dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, wal)
	require.Contains(t, errOut, "offset")
	require.Contains(t, errOut, "within the")
	data[len(data)-12] ^= 0x01
	require.NoError(t, os.WriteFile(wal, data, 0o644))

	orphan := filepath.Join(dir, "999999.sst")
	require.NoError(t, os.WriteFile(orphan, []byte("an unfinished flush"), 0o644))
	code, _, errOut = runCmd("db", "check", dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "orphan table "+orphan)
}

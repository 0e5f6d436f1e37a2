package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDBRocksDB reads a RocksDB fixture with db --rocksdb: the scan is
// ldb's, and after a migration the same commands on the new index and
// on the backup print the same lines for the ledgers kept.
func TestDBRocksDB(t *testing.T) {
	fixture := filepath.Join("..", "..", "lsm", "rocksdb", "testdata", "bk-fv5-partitioned")
	scan, err := os.ReadFile(fixture + ".scan.txt")
	require.NoError(t, err)
	var want strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(scan)), "\n") {
		k, v, _ := strings.Cut(line, " : ")
		want.WriteString(strings.ToLower(strings.TrimPrefix(k, "0x")) + " " + strings.ToLower(strings.TrimPrefix(v, "0x")) + "\n")
	}
	require.Equal(t, want.String(), mustRun(t, "db", "scan", "--rocksdb", fixture, "--hex"))
	require.Equal(t, "7:98 4294978127\n7:99 4294978227\n", mustRun(t, "db", "scan", "--rocksdb", fixture, "--from", "7:98", "--limit", "2"))
	require.Equal(t, "149 4294983227 (log: 1, pos: 15931)\n", mustRun(t, "db", "floor", "--rocksdb", fixture, "7"))
	require.Equal(t, "4294968421 (log: 1, pos: 1125)\n", mustRun(t, "db", "get", "--rocksdb="+fixture, "1", "1"))
	props := mustRun(t, "db", "props", "--rocksdb", fixture)
	require.Contains(t, props, "RocksDB, 4 tables")
	require.Contains(t, props, "format_version 5, LZ4, xxHash, two-level index (7 partitions)")
	// RocksDB 10's format_version 7 with XXH3; a table ldb rewrote.
	jni := filepath.Join("..", "..", "lsm", "rocksdb", "testdata", "rocksdbjni", "loc-v10-fv7-xxh3-lz4")
	require.Contains(t, mustRun(t, "db", "props", "--rocksdb", jni), "format_version 7, LZ4, XXH3, binary search index")
	ldb := filepath.Join("..", "..", "lsm", "rocksdb", "testdata", "ldb", "ldb-compact-loc")
	require.Contains(t, mustRun(t, "db", "props", "--rocksdb", ldb), "format_version 5, Snappy, XXH3, binary search index, merge operator StringAppendOperator")
	require.Contains(t, mustRun(t, "db", "props", "--rocksdb", fixture, "--json"), `"Comparator":"leveldb.BytewiseComparator"`)

	code, _, errOut := runCmd("db", "get", "--rocksdb", fixture, "10", "1000")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "entry 1000 of ledger 10: not found")
	require.Equal(t, "4294968421 (log: 1, pos: 1125)\n", mustRun(t, "db", "get", "--rocksdb", fixture, "1:1"))
	code, _, errOut = runCmd("db", "get", "--rocksdb", fixture)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "with --rocksdb DIR, takes 1 or 2 more argument(s), not 0")
	code, _, errOut = runCmd("db", "scan", "--rocksdb", filepath.Join(t.TempDir(), "none"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no such database directory")

	// Before and after a migration.
	confPath, _, indexDirs := bookKeeperSetup(t)
	mustRun(t, "migrate", "--conf", confPath, "--clear-limbo")
	cur := filepath.Join(indexDirs[1], "current")
	newIdx, backup := filepath.Join(cur, "locations"), filepath.Join(cur, "locations.rocksdb-backup")
	for _, args := range [][]string{{"scan", "--from", "1", "--to", "10"}, {"floor", "9"}, {"get", "5", "3"}} {
		ours := mustRun(t, append([]string{"db", args[0], newIdx}, args[1:]...)...)
		rocks := mustRun(t, append([]string{"db", args[0], "--rocksdb", backup}, args[1:]...)...)
		require.Equal(t, rocks, ours, "%v", args)
		require.NotEmpty(t, ours)
	}
	// Ledger 10 is gone from the ledgers database: purged by the migration.
	require.NotEmpty(t, mustRun(t, "db", "scan", "--rocksdb", backup, "--from", "10", "--to", "11"))
	require.Empty(t, mustRun(t, "db", "scan", newIdx, "--from", "10", "--to", "11"))
}

// TestDBRocksDBWithoutFlag: our commands on a RocksDB directory say to use
// --rocksdb (our engine would misread its MANIFEST: "unknown tag 108"), and
// leave the directory as it was (its LOCK file is not touched).
func TestDBRocksDBWithoutFlag(t *testing.T) {
	fixture := filepath.Join("..", "..", "lsm", "rocksdb", "testdata", "bk-fv5-partitioned")
	lock, err := os.Stat(filepath.Join(fixture, "LOCK"))
	require.NoError(t, err)
	for _, args := range [][]string{{"props"}, {"scan"}, {"get", "1", "1"}, {"floor", "7"}, {"check"}, {"ledgers"}, {"manifest"}, {"wal"}} {
		code, out, errOut := runCmd(append([]string{"db", args[0], fixture}, args[1:]...)...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.Empty(t, out, "%v", args)
		require.Contains(t, errOut, fixture+" holds a RocksDB database (BookKeeper's), not one of ours: "+
			"db props, get, floor and scan read it with --rocksdb "+fixture, "%v", args)
		require.NotContains(t, errOut, "unknown tag", "%v", args)
	}
	after, err := os.Stat(filepath.Join(fixture, "LOCK"))
	require.NoError(t, err)
	require.Equal(t, lock.ModTime(), after.ModTime())
	require.Equal(t, lock.Size(), after.Size())

	_, out, _ := runCmd("db", "get", "-h")
	require.Contains(t, out, "-rocksdb", "the flag is listed")
}

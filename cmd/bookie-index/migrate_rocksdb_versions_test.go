package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/stretchr/testify/require"
)

// TestMigrateCommandRocksDBVersions runs `bookie-index migrate` on a bookie
// whose three index directories hold databases RocksDB 10 wrote with
// format_version 7 and XXH3, RocksDB 9 (BookKeeper 4.18.2's) with its
// defaults (format_version 6, XXH3), and ldb 7.8.3 rewrote (every table
// naming StringAppendOperator): each migrates, the new index answers as
// the RocksDB backup does, and the storage opens it with the ledgers'
// metadata.
func TestMigrateCommandRocksDBVersions(t *testing.T) {
	root := t.TempDir()
	layouts := [][2]string{
		{"rocksdbjni/loc-v10-fv7-xxh3-lz4", "rocksdbjni/ledgers-v10-fv7-xxh3-snappy"},
		{"rocksdbjni/loc-v9-fv6-xxh3-lz4", "rocksdbjni/ledgers-v9-fv6-xxh3-snappy"},
		{"ldb/ldb-compact-loc", "ldb/ldb-compact-ledgers"},
	}
	var ledgerDirs, indexDirs []string
	for i, l := range layouts {
		ld, ix := filepath.Join(root, fmt.Sprint("l", i)), filepath.Join(root, fmt.Sprint("i", i))
		require.NoError(t, os.MkdirAll(filepath.Join(ld, "current"), 0o755))
		copyRocksFixture(t, l[0], filepath.Join(ix, "current", "locations"))
		copyRocksFixture(t, l[1], filepath.Join(ix, "current", "ledgers"))
		ledgerDirs, indexDirs = append(ledgerDirs, ld), append(indexDirs, ix)
	}
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + strings.Join(ledgerDirs, ","),
		"indexDirectories=" + strings.Join(indexDirs, ","),
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
	}, "\n")+"\n"), 0o600))

	code, out, errOut := runCmd("migrate", "--conf", confPath)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	for i, d := range indexDirs {
		require.Contains(t, out, fmt.Sprintf("migrate [%d/3] %s: done in ", i+1, d))
		cur := filepath.Join(d, "current")
		newIdx, backup := filepath.Join(cur, "locations"), filepath.Join(cur, "locations.rocksdb-backup")
		// Ledgers 0, 1 and 2 are held (21 too, past the range); 13 is not.
		for _, args := range [][]string{{"scan", "--from", "0", "--to", "3"}, {"floor", "2"}, {"get", "1", "4"}} {
			ours := mustRun(t, append([]string{"db", args[0], newIdx}, args[1:]...)...)
			rocks := mustRun(t, append([]string{"db", args[0], "--rocksdb", backup}, args[1:]...)...)
			require.Equal(t, rocks, ours, "%s: %v", d, args)
			require.NotEmpty(t, ours)
		}
		require.NotEmpty(t, mustRun(t, "db", "scan", "--rocksdb", backup, "--from", "13", "--to", "14"))
		require.Empty(t, mustRun(t, "db", "scan", newIdx, "--from", "13", "--to", "14"))

		st, err := bookie.Open(&bookie.Options{LedgerDirs: ledgerDirs[i : i+1], IndexDirs: indexDirs[i : i+1], FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20})
		require.NoError(t, err)
		info, ok, err := st.LedgerInfo(21)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "bookie-master-key", string(info.MasterKey))
		require.Equal(t, []byte{7, 1, 2, 3}, info.ExplicitLAC) // ledger 21 is the 7th of the writer's loop
		require.False(t, info.Fenced)
		info, ok, err = st.LedgerInfo(0)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, info.Fenced)
		require.Empty(t, info.ExplicitLAC)
		require.NoError(t, st.Close())
	}
}

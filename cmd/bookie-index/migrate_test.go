package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// copyRocksFixture copies the RocksDB database lsm/rocksdb/testdata/name
// (written by real RocksDB; never modified) to dst.
func copyRocksFixture(t *testing.T, name, dst string) {
	t.Helper()
	src := filepath.Join("..", "..", "lsm", "rocksdb", "testdata", name)
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dst, 0o755))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
}

// bookKeeperSetup lays out two stopped BookKeeper directories (RocksDB
// indexes from the fixtures, one per layout) and a bk_server.conf.
func bookKeeperSetup(t *testing.T) (confPath string, ledgerDirs, indexDirs []string) {
	root := t.TempDir()
	for i, fx := range []string{"bk-fv5", "bk-fv5-partitioned"} {
		l, ix := filepath.Join(root, "l"+string(rune('1'+i))), filepath.Join(root, "i"+string(rune('1'+i)))
		require.NoError(t, os.MkdirAll(filepath.Join(l, "current"), 0o755))
		copyRocksFixture(t, fx, filepath.Join(ix, "current", "locations"))
		copyRocksFixture(t, "ledgers-fv5", filepath.Join(ix, "current", "ledgers"))
		ledgerDirs, indexDirs = append(ledgerDirs, l), append(indexDirs, ix)
	}
	confPath = filepath.Join(root, "bk_server.conf")
	lines := []string{
		"ledgerDirectories=" + strings.Join(ledgerDirs, ","),
		"indexDirectories=" + strings.Join(indexDirs, ","),
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
	}
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return confPath, ledgerDirs, indexDirs
}

func TestMigrateCommand(t *testing.T) {
	confPath, ledgerDirs, indexDirs := bookKeeperSetup(t)

	// Ledgers in limbo: refused, named, nothing changed.
	code, out, errOut := runCmd("migrate", "--conf", confPath)
	require.Equal(t, 1, code, "%s%s", out, errOut)
	require.Contains(t, errOut, "migrate [1/2] "+indexDirs[0]+": bookie: migrate: "+filepath.Join(indexDirs[0], "current", "ledgers")+": 17 ledgers in limbo (8, 22, ")
	require.Contains(t, errOut, "--clear-limbo")
	require.Contains(t, errOut, "2 of 2 directories failed")

	code, out, errOut = runCmd("migrate", "--conf", confPath, "--clear-limbo")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	for i, d := range indexDirs {
		require.Contains(t, out, "migrate ["+string(rune('1'+i))+"/2] "+d+": done in ")
		require.Contains(t, out, ": 289 ledgers (0 deleted dropped), 3028 locations in 1 tables, 301 locations of 3 ledgers no longer held purged, 0 skipped, 1000 verified by lookup; RocksDB databases at "+
			filepath.Join(d, "current", "locations.rocksdb-backup")+" and "+filepath.Join(d, "current", "ledgers.rocksdb-backup"))
	}
	require.Contains(t, out, "warning: 17 ledgers in limbo migrated as ordinary ledgers")
	require.Contains(t, errOut, "reading the ledgers database")
	require.Contains(t, errOut, "switching to the new indexes")

	// Idempotent.
	code, out, errOut = runCmd("migrate", "--conf", confPath)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "migrate [1/2] "+indexDirs[0]+": nothing to do: already converted; the RocksDB databases are at ")
	require.Contains(t, out, "migrate [2/2] "+indexDirs[1]+": nothing to do: already converted")

	// The storage opens the migrated directory and answers from it.
	st, err := bookie.Open(&bookie.Options{LedgerDirs: ledgerDirs[:1], IndexDirs: indexDirs[:1], FlushInterval: -1, GCWaitTime: -1, WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20})
	require.NoError(t, err)
	info, ok, err := st.LedgerInfo(5)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "master-key-5", string(info.MasterKey))
	require.Equal(t, "lac-5"+strings.Repeat("x", 20), string(info.ExplicitLAC))
	require.False(t, info.Fenced)
	for _, gone := range []int64{10, 11, 20} {
		exists, err := st.LedgerExists(gone)
		require.NoError(t, err)
		require.False(t, exists)
	}
	loc, err := st.Dirs()[0].LocationIndex().GetLocation(1, 1)
	require.NoError(t, err)
	require.Equal(t, int64(0x0000000100000465), loc)
	// While it runs, migrate refuses the directory.
	code, _, errOut = runCmd("migrate", "--conf", confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is in use: stop the bookie")
	require.NoError(t, st.Close())
}

func TestMigrateCommandUsage(t *testing.T) {
	code, out, errOut := runCmd("migrate", "-h")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "usage: bookie-index migrate [--conf FILE]")
	require.Contains(t, out, "[--clear-limbo] [--samples N] [--roll-back [--force]]")
	require.Contains(t, out, "-clear-limbo")
	require.Contains(t, out, "-roll-back")
	code, _, errOut = runCmd("migrate", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unexpected argument "extra"`)
	confPath, _, _ := bookKeeperSetup(t)
	code, _, errOut = runCmd("migrate", "--conf", confPath, "--force")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--force goes with --roll-back")
}

// TestMigrateRollBackCommand: migrate --roll-back after a migration.
// The fixtures' locations name entry logs the directories do not hold, so
// the check refuses (exit 1, naming them, nothing changed); --force rolls
// back, the RocksDB databases are BookKeeper's again, and a second run has
// nothing to do. (interop/bookkeeper rolls back what BookKeeper wrote and
// has it read every entry.)
func TestMigrateRollBackCommand(t *testing.T) {
	confPath, _, indexDirs := bookKeeperSetup(t)
	code, out, errOut := runCmd("migrate", "--conf", confPath, "--clear-limbo")
	require.Equal(t, 0, code, "%s%s", out, errOut)

	code, out, errOut = runCmd("migrate", "--roll-back", "--conf", confPath)
	require.Equal(t, 1, code, "%s%s", out, errOut)
	require.Contains(t, errOut, "migrate --roll-back [1/2] "+indexDirs[0]+": bookie: migrate: roll back of "+filepath.Join(indexDirs[0], "current")+
		": entry logs BookKeeper's index names are gone from ")
	require.Contains(t, errOut, "(--force rolls back all the same): roll back would lose data for BookKeeper")
	require.Contains(t, errOut, "2 of 2 directories failed (the journal directories were left alone)")
	for _, d := range indexDirs {
		k, err := ondisk.KindOf(vfs.Default, filepath.Join(d, "current", "locations"))
		require.NoError(t, err)
		require.Equal(t, ondisk.DirOurs, k)
	}

	code, out, errOut = runCmd("migrate", "--roll-back", "--force", "--conf", confPath)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "migrate --roll-back [1/2] "+indexDirs[0]+": warning: rolled back all the same (--force): entry logs")
	require.Contains(t, out, "migrate --roll-back [2/2] "+indexDirs[1]+": rolled back in ")
	require.Contains(t, out, "restored nothing (BookKeeper had no lastId or lastMark here)")
	require.Contains(t, out, ": 0 files of this storage's moved aside; start BookKeeper")
	for _, d := range indexDirs {
		for _, name := range []string{"locations", "ledgers"} {
			k, err := ondisk.KindOf(vfs.Default, filepath.Join(d, "current", name))
			require.NoError(t, err)
			require.Equal(t, ondisk.DirRocksDB, k, "%s %s", d, name)
		}
	}
	code, out, errOut = runCmd("migrate", "--roll-back", "--conf", confPath)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "nothing to do: BookKeeper's RocksDB indexes are in place")
}

package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// BookKeeper's files of the test bookie: lastId, the journal's last log
// mark (file 0x1a2, offset 512) and that journal file.
var (
	bkLastID   = []byte("7\n")
	bkLastMark = []byte{0, 0, 0, 0, 0, 0, 0x01, 0xa2, 0, 0, 0, 0, 0, 0, 0x02, 0}
)

// bookKeeperBookie lays out a stopped BookKeeper bookie: the index
// directory /idx (its RocksDB databases from the fixtures), lastId and
// lastMark in its current/, and the journal /j with the file the mark
// names.
func bookKeeperBookie(t testing.TB, fs vfs.FS) {
	t.Helper()
	bookKeeperDir(t, fs, "/idx", "bk-fv5")
	writeFile(t, fs, "/idx/current/lastId", bkLastID)
	writeFile(t, fs, "/idx/current/lastMark", bkLastMark)
	writeFile(t, fs, "/j/current/1a2.txn", []byte("BKLG journal of BookKeeper's"))
}

func writeFile(t testing.TB, fs vfs.FS, path string, data []byte) {
	t.Helper()
	require.NoError(t, fs.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, vfs.ReplaceFile(fs, path, path+".tmp", data))
	require.NoError(t, vfs.SyncDir(fs, filepath.Dir(filepath.Dir(path))))
}

func readFileBytes(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
	require.NoError(t, err)
	return b
}

// serveAfterMigration does to the migrated bookie what a run of serve
// does: an entry log of this storage's (lastId advanced), LAYOUT, its
// journal's last log mark, and a journal file of its own.
func serveAfterMigration(t testing.TB, fs vfs.FS) {
	t.Helper()
	l, err := entrylog.Open("/idx/current", &entrylog.Options{FS: fs})
	require.NoError(t, err)
	_, err = l.AddEntry(1, 999, []byte("written through serve"))
	require.NoError(t, err)
	require.NoError(t, l.Flush())
	require.NoError(t, l.Close())
	writeFile(t, fs, "/idx/current/LAYOUT", []byte("layout"))
	writeFile(t, fs, "/idx/current/lastMark", []byte{0, 0, 0, 0, 0, 0, 0x01, 0xa3, 0, 0, 0, 0, 0, 0, 0x02, 0})
	writeFile(t, fs, "/j/current/1a3.txn", []byte("BKLG journal of serve's"))
	writeFile(t, fs, "/j/current/1a3.synced", []byte("lengths"))
}

// tree is every file under root: path → SHA-256 of its bytes.
func tree(t testing.TB, fs vfs.FS, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		names, err := fs.List(dir)
		require.NoError(t, err)
		for _, n := range names {
			p := filepath.Join(dir, n)
			info, err := fs.Stat(p)
			require.NoError(t, err)
			if info.IsDir() {
				walk(p)
				continue
			}
			if n == "LOCK" {
				continue // a lock names its last holder
			}
			sum := sha256.Sum256(readFileBytes(t, fs, p))
			m[p] = hex.EncodeToString(sum[:8])
		}
	}
	walk(root)
	return m
}

// expectRolledBack checks /idx is as bookKeeperBookie left it, but for
// the roll back's aside directory, and that the journal holds only
// BookKeeper's file.
func expectRolledBack(t testing.TB, fs vfs.FS, want map[string]string) {
	t.Helper()
	got := tree(t, fs, "/idx")
	for p := range got {
		if strings.Contains(p, "/"+ondisk.RolledBackDir+"/") || strings.Contains(p, ondisk.RolledBackSuffix+"/") {
			delete(got, p)
		}
	}
	require.Equal(t, want, got)
	for _, d := range []struct{ dir, fixture string }{{"locations", "bk-fv5"}, {"ledgers", "ledgers-fv5"}} {
		db, err := rocksdb.Open(fs, filepath.Join("/idx/current", d.dir))
		require.NoError(t, err)
		n := 0
		require.NoError(t, db.Scan(func(k, v []byte) error { n++; return nil }))
		require.NoError(t, db.Close())
		keys, _ := scanFile(t, d.fixture)
		require.Equal(t, len(keys), n, d.dir)
	}
}

// TestRollBack migrates a bookie, does to it what serve does, and rolls it
// back: BookKeeper's indexes, lastId and lastMark are as they were, this
// storage's indexes, entry log and LAYOUT are in bookie-index.rolled-back,
// and RollBackJournals moves its journal file aside. The checks refuse it
// first (the fixtures' locations name no entry log), Force goes on.
func TestRollBack(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperBookie(t, fs)
	before := tree(t, fs, "/idx")
	res, err := FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	require.Equal(t, []string{"lastId", "lastMark"}, res.BookKeeperFiles)
	require.Equal(t, bkLastMark, readFileBytes(t, fs, "/idx/current/lastMark"+LastMarkBackupSuffix))
	require.Equal(t, bkLastID, readFileBytes(t, fs, "/idx/current/lastId"+LastMarkBackupSuffix))
	serveAfterMigration(t, fs)

	opts := RollBackOptions{IndexDir: "/idx", JournalDirs: []string{"/j"}, FS: fs}
	served := tree(t, fs, "/idx")
	_, err = RollBack(opts)
	require.ErrorIs(t, err, ErrRollBackUnsafe)
	require.ErrorContains(t, err, "entry logs BookKeeper's index names are gone from /idx/current")
	require.ErrorContains(t, err, "1.log (")
	require.Equal(t, served, tree(t, fs, "/idx"), "a refused roll back changes nothing")

	opts.Force = true
	rb, err := RollBack(opts)
	require.NoError(t, err)
	require.False(t, rb.NothingToDo)
	require.Len(t, rb.Problems, 1)
	require.Equal(t, []string{"lastId", "lastMark"}, rb.Restored)
	require.Equal(t, "/idx/current/"+ondisk.RolledBackDir, rb.Aside)
	names, err := fs.List(rb.Aside)
	require.NoError(t, err)
	require.Equal(t, []string{"8.log", "LAYOUT"}, filterOut(names, ".ledgers"))
	expectRolledBack(t, fs, before)

	moved, err := RollBackJournals(fs, []string{"/j", "/absent"})
	require.NoError(t, err)
	require.Equal(t, []string{"/j/current/1a3.txn", "/j/current/1a3.synced"}, moved)
	names, err = fs.List("/j/current")
	require.NoError(t, err)
	require.Equal(t, []string{"1a2.txn", ondisk.RolledBackDir}, names)

	// Again: nothing to do. A new migration, and another roll back
	// refused until the first one's aside directory is moved away.
	rb, err = RollBack(opts)
	require.NoError(t, err)
	require.True(t, rb.NothingToDo, rb.Reason)
	_, err = FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	_, err = RollBack(opts)
	require.ErrorContains(t, err, "/idx/current/"+ondisk.RolledBackDir+" exists (an earlier roll back's): move it away first")
	for _, p := range []string{ondisk.RolledBackDir, "locations" + ondisk.RolledBackSuffix, "ledgers" + ondisk.RolledBackSuffix} {
		require.NoError(t, fs.RemoveAll("/idx/current/"+p))
	}
	_, err = RollBack(opts)
	require.NoError(t, err)
	expectRolledBack(t, fs, before)
}

// filterOut keeps the names without suffix.
func filterOut(names []string, suffix string) []string {
	var out []string
	for _, n := range names {
		if !strings.HasSuffix(n, suffix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// TestRollBackChecks: what a roll back refuses, changing nothing.
func TestRollBackChecks(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperBookie(t, fs)

	// Not migrated: nothing to do.
	rb, err := RollBack(RollBackOptions{IndexDir: "/idx", FS: fs})
	require.NoError(t, err)
	require.True(t, rb.NothingToDo)
	require.Contains(t, rb.Reason, "BookKeeper's RocksDB indexes are in place")

	_, err = FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	serveAfterMigration(t, fs)

	// BookKeeper's journal file gone: its entries after the mark would
	// be lost.
	require.NoError(t, fs.Remove("/j/current/1a2.txn"))
	_, err = RollBack(RollBackOptions{IndexDir: "/idx", JournalDirs: []string{"/j"}, FS: fs})
	require.ErrorIs(t, err, ErrRollBackUnsafe)
	require.ErrorContains(t, err, "BookKeeper's last log mark (lastMark) names journal file /j/current/1a2.txn, which is gone")

	served := tree(t, fs, "/idx")
	// The backups: one missing, both missing.
	require.NoError(t, fs.Rename("/idx/current/ledgers.rocksdb-backup", "/ledgers-away"))
	_, err = RollBack(RollBackOptions{IndexDir: "/idx", FS: fs, Force: true})
	require.ErrorContains(t, err, "the RocksDB backups are not both there (locations.rocksdb-backup is a RocksDB database, ledgers.rocksdb-backup is missing)")
	require.NoError(t, fs.Rename("/idx/current/locations.rocksdb-backup", "/locations-away"))
	_, err = RollBack(RollBackOptions{IndexDir: "/idx", FS: fs, Force: true})
	require.ErrorContains(t, err, "has no RocksDB backups")
	got := tree(t, fs, "/idx")
	for p := range served {
		if strings.Contains(p, ondisk.RocksDBBackupSuffix) {
			delete(served, p)
		}
	}
	require.Equal(t, served, got, "refused roll backs change nothing")
}

// TestRollBackCrash crashes a roll back before each of its file-creating,
// renaming, removing and syncing operations: the storage refuses the
// crashed directory while the roll back is unfinished (or it is as it
// was), and a rerun finishes it, leaving BookKeeper's files as they were.
func TestRollBackCrash(t *testing.T) {
	base := vfs.NewMem()
	bookKeeperBookie(t, base)
	before := tree(t, base, "/idx")
	_, err := FromRocksDB(Options{IndexDir: "/idx", FS: base, ClearLimbo: true, Samples: 10})
	require.NoError(t, err)
	serveAfterMigration(t, base)
	opts := func(fs vfs.FS) RollBackOptions {
		return RollBackOptions{IndexDir: "/idx", JournalDirs: []string{"/j"}, FS: fs, Force: true, Samples: 10}
	}
	count := &crashFS{mem: base.CrashClone(vfs.CrashOptions{}), at: -1}
	_, err = RollBack(opts(vfs.NewErrorFS(count.mem, count)))
	require.NoError(t, err)
	t.Logf("%d crash points", count.n)
	require.Greater(t, count.n, 10)
	states := map[string]int{}
	for at := 0; at < count.n; at++ {
		c := &crashFS{mem: base.CrashClone(vfs.CrashOptions{}), at: at}
		_, err := RollBack(opts(vfs.NewErrorFS(c.mem, c)))
		require.True(t, errors.Is(err, vfs.ErrInjected), "crash point %d (%s): %v", at, c.op, err)
		crashed := c.clone
		started, err := exists(crashed, "/idx/current/"+ondisk.RollBackMarker)
		require.NoError(t, err)
		if started {
			states["started"]++
			require.ErrorIs(t, ondisk.CheckNoMigrationInProgress(crashed, "/idx"), ondisk.ErrMigrationInProgress, "crash point %d", at)
		} else {
			// The migrated state, whole (the storage opens it), or the
			// rolled-back one (a crash while the copies of BookKeeper's
			// files went).
			require.NoError(t, ondisk.CheckNoMigrationInProgress(crashed, "/idx"), "crash point %d", at)
			k, err := ondisk.KindOf(crashed, "/idx/current/locations")
			require.NoError(t, err)
			if k == ondisk.DirOurs {
				states["not started"]++
			} else {
				states["done"]++
				require.Equal(t, ondisk.DirRocksDB, k, "crash point %d", at)
			}
		}
		res, err := RollBack(opts(crashed))
		require.NoError(t, err, "crash point %d (%s)", at, c.op)
		require.Equal(t, started, res.Resumed, "crash point %d", at)
		expectRolledBack(t, crashed, before)
	}
	t.Logf("states after a crash: %v", states)
	require.Positive(t, states["started"])
	require.Positive(t, states["not started"])
}

// TestMigrateKeepsBookKeeperFiles: with index directories of their own,
// the copies of lastId and lastMark are made in the ledger directory,
// where BookKeeper keeps them, and the roll back restores them there; a
// lastId and a lastMark BookKeeper did not have are moved aside.
func TestMigrateKeepsBookKeeperFiles(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperDir(t, fs, "/idx", "bk-fv5")
	writeFile(t, fs, "/led/current/lastMark", bkLastMark)
	writeFile(t, fs, "/led/current/lastMark.x", []byte("not BookKeeper's"))
	writeFile(t, fs, "/led/current/lastMark.1"+LastMarkBackupSuffix, []byte("an earlier migration's copy"))
	res, err := FromRocksDB(Options{IndexDir: "/idx", LedgerDir: "/led", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	require.Equal(t, []string{"lastMark"}, res.BookKeeperFiles)
	names, err := fs.List("/led/current")
	require.NoError(t, err)
	require.Equal(t, []string{"lastMark", "lastMark.bookkeeper", "lastMark.x"}, names, "a copy of a file BookKeeper no longer has is removed")
	// serve writes lastId (BookKeeper had none) and new marks.
	writeFile(t, fs, "/led/current/lastId", []byte("1\n"))
	writeFile(t, fs, "/led/current/lastMark", []byte("sixteen bytes!!!"))
	writeFile(t, fs, "/led/current/lastMark.1", []byte("sixteen bytes!!!"))
	writeFile(t, fs, "/idx/current/LAYOUT", []byte("layout"))
	rb, err := RollBack(RollBackOptions{IndexDir: "/idx", LedgerDir: "/led", FS: fs, Force: true})
	require.NoError(t, err)
	require.Equal(t, []string{"lastMark"}, rb.Restored)
	require.Contains(t, rb.MovedAside, "/led/current/lastMark.1")
	require.Contains(t, rb.MovedAside, "/led/current/lastId")
	require.Contains(t, rb.MovedAside, "/idx/current/LAYOUT")
	require.Equal(t, bkLastMark, readFileBytes(t, fs, "/led/current/lastMark"))
	names, err = fs.List("/led/current")
	require.NoError(t, err)
	require.Equal(t, []string{ondisk.RolledBackDir, "lastMark", "lastMark.x"}, names)
	names, err = fs.List("/idx/current")
	require.NoError(t, err)
	require.Equal(t, []string{ondisk.RolledBackDir, "ledgers", "ledgers" + ondisk.RolledBackSuffix, "locations", "locations" + ondisk.RolledBackSuffix}, names)
}

func TestIsBookKeeperFile(t *testing.T) {
	for name, want := range map[string]bool{"lastId": true, "lastMark": true, "lastMark.0": true, "lastMark.12": true,
		"lastMark.": false, "lastMark.x": false, "lastMark.1.tmp": false, "lastId.tmp": false, "LAYOUT": false} {
		require.Equal(t, want, ondisk.IsBookKeeperFile(name), name)
	}
}

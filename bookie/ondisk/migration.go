package ondisk

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Names of a migration's files in <indexDir>/current (docs/migration.md;
// package migrate writes them, the storage's Open refuses a directory a
// migration left half switched).
const (
	// MigrateTempDir holds the tables being written, until they are
	// ingested.
	MigrateTempDir = "migrate.tmp"
	// MigrateNewSuffix names the indexes being built, beside the RocksDB
	// databases: locations.migrating, ledgers.migrating. Every rename of
	// the switch stays within one directory, so one directory sync makes
	// it atomic.
	MigrateNewSuffix = ".migrating"
	// MigrateMarker is the marker file: once it holds MigrateReadyContent,
	// the indexes being built are complete and verified and the switch
	// may run.
	MigrateMarker = "migrate.READY"
	// MigrateReadyContent is the marker's text.
	MigrateReadyContent = "bookie-index migrate: the indexes in this directory are complete and verified\n"
	// RocksDBBackupSuffix names where the RocksDB databases are kept:
	// locations.rocksdb-backup, ledgers.rocksdb-backup.
	RocksDBBackupSuffix = ".rocksdb-backup"
	// RollBackMarker, in <indexDir>/current, says a roll back to
	// BookKeeper has started (its checks passed) and not finished: the
	// storage refuses the directory, and `bookie-index migrate
	// --roll-back` finishes it.
	RollBackMarker = "rollback.STARTED"
	// RolledBackDir, in <ledgerDir>/current (and <indexDir>/current),
	// receives what a roll back moves out of BookKeeper's way: this
	// storage's entry logs, ledgers maps, LAYOUT, and lastId or lastMark
	// files BookKeeper had not written.
	RolledBackDir = "bookie-index.rolled-back"
	// RolledBackSuffix names where a roll back keeps this storage's
	// indexes, beside BookKeeper's: locations.rolled-back,
	// ledgers.rolled-back (a rename within the directory, atomic).
	RolledBackSuffix = ".rolled-back"
)

// IsBookKeeperFile reports whether name, in a ledger directory's
// current/, is one of BookKeeper's files this storage rewrites: lastId
// (the last entry log id) and the journal's last log marks (lastMark,
// lastMark.<i>).
func IsBookKeeperFile(name string) bool {
	return name == "lastId" || IsLastMarkName(name)
}

// IsLastMarkName reports whether name is a journal's last log mark file:
// "lastMark" or "lastMark.<digits>" (journal.LastMarkFileName).
func IsLastMarkName(name string) bool {
	if name == "lastMark" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "lastMark.")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// DirKind classifies a database directory.
type DirKind int

const (
	// DirMissing: there is no directory.
	DirMissing DirKind = iota
	// DirRocksDB: a RocksDB database (BookKeeper's index).
	DirRocksDB
	// DirOurs: this storage's engine's (or an empty directory).
	DirOurs
)

// String names the kind, as migrate's errors do.
func (k DirKind) String() string {
	switch k {
	case DirRocksDB:
		return "a RocksDB database"
	case DirOurs:
		return "a bookie-index index"
	}
	return "missing"
}

// IsRocksDBDir reports whether dir holds a RocksDB database: RocksDB
// writes an IDENTITY file and OPTIONS-NNNNNN files, this engine neither
// (both write CURRENT, MANIFEST-NNNNNN and NNNNNN.sst, so those tell
// nothing). A missing directory is not one.
func IsRocksDBDir(fs vfs.FS, dir string) (bool, error) {
	k, err := KindOf(fs, dir)
	return k == DirRocksDB, err
}

// KindOf classifies dir (see IsRocksDBDir).
func KindOf(fs vfs.FS, dir string) (DirKind, error) {
	names, err := fs.List(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return DirMissing, nil
		}
		return 0, errors.Wrapf(err, "bookie: migrate: reading %s", dir)
	}
	for _, n := range names {
		if n == "IDENTITY" || strings.HasPrefix(n, "OPTIONS-") {
			return DirRocksDB, nil
		}
	}
	return DirOurs, nil
}

// MigrationPending reports whether indexDir/current holds the verified
// indexes of a migration that has not finished its switch (a crash
// during it): the directory must not be served until `migrate` is run
// again.
func MigrationPending(fs vfs.FS, indexDir string) (bool, error) {
	if fs == nil {
		fs = vfs.Default
	}
	return ReadyMarker(fs, filepath.Join(indexDir, "current"))
}

// ReadyMarker reports whether current (an index directory's current/)
// holds a migration's marker with its whole text.
func ReadyMarker(fs vfs.FS, current string) (bool, error) {
	p := filepath.Join(current, MigrateMarker)
	f, err := fs.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, errors.Wrapf(err, "bookie: migrate: reading %s", p)
	}
	defer f.Close()
	buf := make([]byte, len(MigrateReadyContent)+1)
	n, err := f.ReadAt(buf, 0)
	if err != nil && n == 0 && !errors.Is(err, os.ErrClosed) {
		// io.EOF on an empty file: not ready.
		return false, nil
	}
	// A marker whose bytes were lost in a crash is no marker: the build
	// it would vouch for is redone.
	return string(buf[:n]) == MigrateReadyContent, nil
}

// CheckNoMigrationInProgress refuses to open an index directory that a
// migration or a roll back left half done: the migration's marker or the
// roll back's is there, or an index is missing while its build
// (X.migrating) or its RocksDB backup (X.rocksdb-backup) is. Opening would create an empty index in its place
// and answer "no ledger" for ledgers that exist, and the next GC cycle
// would remove their entry logs. `bookie-index migrate` finishes the
// switch. The refusals match ErrMigrationInProgress.
func CheckNoMigrationInProgress(fs vfs.FS, indexDir string) error {
	current := filepath.Join(indexDir, "current")
	pending, err := ReadyMarker(fs, current)
	if err != nil {
		return err
	}
	rollingBack, err := pathExists(fs, filepath.Join(current, RollBackMarker))
	if err != nil {
		return err
	}
	if rollingBack {
		return errors.Wrapf(ErrMigrationInProgress, "bookie: refusing to open %s: a roll back to BookKeeper is half done (%s exists): "+
			"run `bookie-index migrate --roll-back --conf FILE` again to finish it", current, filepath.Join(current, RollBackMarker))
	}
	if pending {
		return errors.Wrapf(ErrMigrationInProgress, "bookie: refusing to open %s: a migration from BookKeeper's RocksDB indexes is half done (%s exists): "+
			"run `bookie-index migrate --conf FILE` again to finish it", current, filepath.Join(current, MigrateMarker))
	}
	for _, name := range []string{"locations", "ledgers"} {
		path := filepath.Join(current, name)
		if exists, err := pathExists(fs, path); err != nil || exists {
			if err != nil {
				return err
			}
			continue
		}
		for _, left := range []string{path + MigrateNewSuffix, path + RocksDBBackupSuffix} {
			exists, err := pathExists(fs, left)
			if err != nil {
				return err
			}
			if exists {
				return errors.Wrapf(ErrMigrationInProgress, "bookie: refusing to open %s: %s is missing but %s exists (an interrupted migration): "+
					"run `bookie-index migrate --conf FILE` to finish it, or restore %s", current, path, left, path)
			}
		}
	}
	return nil
}

func pathExists(fs vfs.FS, path string) (bool, error) {
	if _, err := fs.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, errors.Wrapf(err, "bookie: %s", path)
	}
	return true, nil
}

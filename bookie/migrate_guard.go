package bookie

import (
	"os"
	"path/filepath"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// checkNoMigrationInProgress refuses to open an index directory that a
// migration left half switched: its marker is there, or an index is
// missing while its build (X.migrating) or its RocksDB backup
// (X.rocksdb-backup) is. Opening would create an empty index in its place
// and answer "no ledger" for ledgers that exist, and the next GC cycle
// would remove their entry logs. `bookie-index migrate` finishes the
// switch.
func checkNoMigrationInProgress(fs vfs.FS, indexDir string) error {
	current := filepath.Join(indexDir, "current")
	pending, err := readyMarker(fs, current)
	if err != nil {
		return err
	}
	if pending {
		return errors.Newf("bookie: refusing to open %s: a migration from BookKeeper's RocksDB indexes is half done (%s exists): "+
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
				return errors.Newf("bookie: refusing to open %s: %s is missing but %s exists (an interrupted migration): "+
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

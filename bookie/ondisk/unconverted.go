package ondisk

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// ErrUnconverted: a directory holds a BookKeeper bookie's data that this
// storage has not converted (its RocksDB indexes, or BookKeeper entry logs
// without indexes). The storage's Open refuses it rather than answer from
// half the data: "bookie-index migrate" converts it.
var ErrUnconverted = errors.New("directory not converted from BookKeeper")

// MigrateCommand is what an operator runs to convert a BookKeeper bookie's
// directories; FILE is its bk_server.conf.
const MigrateCommand = "bookie-index migrate --conf FILE"

// indexNames are the indexes of a directory's <indexDir>/current, named as
// upstream's DbLedgerStorage names its RocksDB databases.
var indexNames = []string{"locations", "ledgers"}

// CheckConverted refuses a directory pair holding BookKeeper data not yet
// converted, before anything is created or written there. ledgerDir and
// indexDir are as configured ("current" is added). The error matches
// ErrUnconverted and names the directory, what was found and the migrate
// command.
func CheckConverted(fs vfs.FS, ledgerDir, indexDir string) error {
	current := filepath.Join(indexDir, "current")
	var rocks, missing []string
	for _, name := range indexNames {
		path := filepath.Join(current, name)
		ok, err := IsRocksDBDir(fs, path)
		if err != nil {
			return err
		}
		if ok {
			rocks = append(rocks, path)
			continue
		}
		if _, err := fs.Stat(path); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, path)
		} else if err != nil {
			return errors.Wrapf(err, "bookie: examining %s", path)
		}
	}
	if len(rocks) > 0 {
		return errors.Wrapf(ErrUnconverted,
			"bookie: refusing to open %s: %s %s BookKeeper's RocksDB, not this storage's index; stop the bookie and convert the directory with `%s`",
			indexDir, strings.Join(rocks, " and "), choose(len(rocks), "is", "are"), MigrateCommand)
	}
	if len(missing) == 0 {
		return nil
	}
	// An index is missing: a new directory, unless BookKeeper's entry logs
	// are there (a bookie whose RocksDB directories were removed).
	logs, err := BookKeeperLogs(fs, filepath.Join(ledgerDir, "current"))
	if err != nil || len(logs) == 0 {
		return err
	}
	return errors.Wrapf(ErrUnconverted,
		"bookie: refusing to open %s: it holds %d BookKeeper entry %s (%s) but no %s; put BookKeeper's index directories back and convert with `%s` (if they are lost, `bookie-index rebuild` rebuilds the indexes from the logs)",
		ledgerDir, len(logs), choose(len(logs), "log", "logs"), summarize(logs), strings.Join(missing, " or "), MigrateCommand)
}

// BookKeeperLogs returns the paths of the BookKeeper-format (BKLO) entry
// logs in logDir (a ledger directory's "current"), ascending by id. A log
// whose header is neither format counts as not BookKeeper's: the reads and
// scans report it.
func BookKeeperLogs(fs vfs.FS, logDir string) ([]string, error) {
	ids, err := entrylog.ListLogs(fs, logDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		path := filepath.Join(logDir, entrylog.LogFileName(id))
		if f, err := entrylog.DetectFormat(fs, path); err == nil && f == entrylog.FormatBKLO {
			out = append(out, path)
		}
	}
	return out, nil
}

// summarize names the first and last of paths.
func summarize(paths []string) string {
	switch len(paths) {
	case 1:
		return paths[0]
	case 2:
		return paths[0] + ", " + paths[1]
	}
	return paths[0] + " ... " + paths[len(paths)-1]
}

func choose(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

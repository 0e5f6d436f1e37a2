package migrate

import (
	"os"
	"path/filepath"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// LastMarkBackupSuffix ends the copy BackupLastMarks keeps of each of a
// BookKeeper bookie's lastMark files: "lastMark.bookkeeper",
// "lastMark.0.bookkeeper", ...
const LastMarkBackupSuffix = ".bookkeeper"

// BackupLastMarks copies each lastMark file of the ledger directories'
// "current" (lastMark, lastMark.<i>: the journals' last log marks, which
// BookKeeper wrote) to the same name + LastMarkBackupSuffix, synced,
// unless that copy exists already (FromRocksDB makes it when it converts
// the directory; a second run keeps the first one's). The storage's
// journal replay then moves the marks; a roll back to BookKeeper puts the
// copies back, and BookKeeper replays its journal from where it had left
// it (docs/migration.md). It returns the copies, made now or before.
func BackupLastMarks(fs vfs.FS, ledgerDirs []string) ([]string, error) {
	if fs == nil {
		fs = vfs.Default
	}
	var made []string
	for _, dir := range ledgerDirs {
		cur := filepath.Join(dir, "current")
		names, err := fs.List(cur)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return made, errors.Wrapf(err, "migrate: listing %s", cur)
		}
		for _, name := range names {
			if !ondisk.IsLastMarkName(name) {
				continue
			}
			src, dst := filepath.Join(cur, name), filepath.Join(cur, name+LastMarkBackupSuffix)
			if _, err := fs.Stat(dst); err == nil {
				made = append(made, dst)
				continue
			} else if !errors.Is(err, os.ErrNotExist) {
				return made, errors.Wrapf(err, "migrate: %s", dst)
			}
			data, err := vfs.ReadFile(fs, src, maxBookKeeperFileSize)
			if err != nil {
				return made, errors.Wrapf(err, "migrate: reading %s", src)
			}
			if err := vfs.ReplaceFile(fs, dst, dst+".tmp", data); err != nil {
				return made, errors.Wrapf(err, "migrate: backing up %s", src)
			}
			made = append(made, dst)
		}
	}
	return made, nil
}

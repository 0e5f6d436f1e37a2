package migrate

import (
	"io"
	"os"
	"path/filepath"
	"strings"

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
			if !isLastMarkName(name) {
				continue
			}
			src, dst := filepath.Join(cur, name), filepath.Join(cur, name+LastMarkBackupSuffix)
			if _, err := fs.Stat(dst); err == nil {
				made = append(made, dst)
				continue
			} else if !errors.Is(err, os.ErrNotExist) {
				return made, errors.Wrapf(err, "migrate: %s", dst)
			}
			data, err := readFile(fs, src)
			if err != nil {
				return made, err
			}
			if err := vfs.ReplaceFile(fs, dst, dst+".tmp", data); err != nil {
				return made, errors.Wrapf(err, "migrate: backing up %s", src)
			}
			made = append(made, dst)
		}
	}
	return made, nil
}

// isLastMarkName reports whether name is a journal's lastMark file:
// "lastMark" or "lastMark.<digits>".
func isLastMarkName(name string) bool {
	if name == "lastMark" {
		return true
	}
	i, ok := strings.CutPrefix(name, "lastMark.")
	if !ok || i == "" {
		return false
	}
	for _, c := range i {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func readFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "migrate: opening %s", path)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, errors.Wrapf(err, "migrate: %s", path)
	}
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); n < len(data) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, errors.Wrapf(err, "migrate: reading %s", path)
	}
	return data, nil
}

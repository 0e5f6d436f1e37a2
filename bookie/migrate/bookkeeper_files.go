package migrate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// backupBookKeeperFiles copies the files of BookKeeper's in current (a
// ledger directory's current/) that this storage rewrites once it runs —
// lastId when it creates an entry log, lastMark and lastMark.<i> when its
// journal checkpoints (it replays BookKeeper's journal from BookKeeper's
// mark, then records its own) — to the same name + LastMarkBackupSuffix
// ("lastId.bookkeeper", "lastMark.bookkeeper", ...), so that a roll back
// puts them back and BookKeeper replays its journal from its own mark
// again. The RocksDB databases are still BookKeeper's when it runs, so
// the files are as BookKeeper left them: a copy an earlier run left is
// replaced, and one whose file is gone removed (a copy exists exactly
// for the files BookKeeper has). It returns the names copied.
func backupBookKeeperFiles(fs vfs.FS, current string) ([]string, error) {
	names, err := fs.List(current)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: migrate: listing %s", current)
	}
	var copied []string
	for _, name := range names {
		if orig, ok := strings.CutSuffix(name, LastMarkBackupSuffix); ok && ondisk.IsBookKeeperFile(orig) && !slices.Contains(names, orig) {
			if err := fs.Remove(filepath.Join(current, name)); err != nil {
				return nil, errors.Wrap(err, "bookie: migrate")
			}
			continue
		}
		if !ondisk.IsBookKeeperFile(name) {
			continue
		}
		src := filepath.Join(current, name)
		data, err := vfs.ReadFile(fs, src, maxBookKeeperFileSize)
		if err != nil {
			return nil, errors.Wrapf(err, "bookie: migrate: keeping a copy of BookKeeper's %s", src)
		}
		dst := src + LastMarkBackupSuffix
		if err := vfs.ReplaceFile(fs, dst, dst+".tmp", data); err != nil {
			return nil, errors.Wrapf(err, "bookie: migrate: keeping a copy of BookKeeper's %s", src)
		}
		copied = append(copied, name)
	}
	return copied, errors.Wrap(vfs.SyncDir(fs, current), "bookie: migrate")
}

// maxBookKeeperFileSize bounds what migrate reads of a file of
// BookKeeper's it copies (lastId, lastMark): a few bytes, but never
// whatever a damaged one claims.
const maxBookKeeperFileSize = 4096

// restoreBookKeeperFiles puts the copies the migration kept (name +
// LastMarkBackupSuffix) back in current: each replaces the file of its
// name (a copy, atomically renamed into place; the kept copy stays, so a
// rerun after a crash does it again). A lastId or lastMark file without
// a copy was written by this storage (BookKeeper had none) and is moved
// into aside, so that the directory holds only what BookKeeper wrote:
// without lastId, BookKeeper numbers its next entry log after the
// largest .log it finds in the directory (this storage's logs are aside
// by then). It returns the names restored and moved.
func restoreBookKeeperFiles(fs vfs.FS, current, aside string) (restored, moved []string, err error) {
	names, err := fs.List(current)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "bookie: migrate: listing %s", current)
	}
	for _, name := range names {
		if ondisk.IsBookKeeperFile(name) && !slices.Contains(names, name+LastMarkBackupSuffix) {
			moved = append(moved, name)
		}
	}
	if err := moveInto(fs, current, aside, moved); err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		orig, ok := strings.CutSuffix(name, LastMarkBackupSuffix)
		if !ok || !ondisk.IsBookKeeperFile(orig) {
			continue
		}
		data, err := vfs.ReadFile(fs, filepath.Join(current, name), maxBookKeeperFileSize)
		if err != nil {
			return nil, nil, errors.Wrap(err, "bookie: migrate: roll back")
		}
		dst := filepath.Join(current, orig)
		if err := vfs.ReplaceFile(fs, dst, dst+".tmp", data); err != nil {
			return nil, nil, errors.Wrapf(err, "bookie: migrate: roll back: restoring %s", dst)
		}
		restored = append(restored, orig)
	}
	return restored, moved, nil
}

// removeBookKeeperCopies removes the copies restoreBookKeeperFiles put
// back, once the roll back is done (a copy left by a crash is harmless:
// BookKeeper does not read it, and the next migration replaces it).
func removeBookKeeperCopies(fs vfs.FS, current string) error {
	names, err := fs.List(current)
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: listing %s", current)
	}
	for _, name := range names {
		if orig, ok := strings.CutSuffix(name, LastMarkBackupSuffix); ok && ondisk.IsBookKeeperFile(orig) {
			if err := fs.Remove(filepath.Join(current, name)); err != nil {
				return errors.Wrap(err, "bookie: migrate: roll back")
			}
		}
	}
	return errors.Wrap(vfs.SyncDir(fs, current), "bookie: migrate: roll back")
}

// exists reports whether path exists.
func exists(fs vfs.FS, path string) (bool, error) {
	if _, err := fs.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, errors.Wrap(err, "bookie: migrate")
	}
	return true, nil
}

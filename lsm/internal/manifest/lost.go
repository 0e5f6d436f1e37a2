package manifest

import (
	"os"
	"path/filepath"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// LostDir is the folder inside a database directory that keeps files the
// engine no longer uses but cannot prove useless: tables no version
// references that the manifest does not prove obsolete, and WALs that did
// not replay to their end. Nothing reads it; an operator inspects it and
// removes it (docs/operations.md).
const LostDir = "lost"

// LostPath returns the path in dir's lost/ folder of a file named name.
func LostPath(dir, name string) string { return filepath.Join(dir, LostDir, name) }

// KeepInLost puts the files of dir named names into dir/lost/, durably:
// with link=false they are moved (renamed), with link=true a second name is
// made there and the original stays (the caller still needs it, and
// deletes it later as usual). A name already in lost/ is left as it is,
// so a crash and a retry do no harm; a name missing from dir is skipped. Both directories are synced before
// it returns, so the files survive a power loss in their new place.
func KeepInLost(fs vfs.FS, dir string, names []string, link bool) error {
	if len(names) == 0 {
		return nil
	}
	lost := filepath.Join(dir, LostDir)
	if err := fs.MkdirAll(lost, 0o755); err != nil {
		return errors.Wrapf(err, "manifest: creating %s", lost)
	}
	for _, name := range names {
		from, to := filepath.Join(dir, name), filepath.Join(lost, name)
		_, fromErr := fs.Stat(from)
		if _, err := fs.Stat(to); err == nil {
			if !link {
				// Already kept by an earlier attempt that crashed before
				// removing the original: the two are the same file.
				if err := fs.Remove(from); err != nil && !errors.Is(err, os.ErrNotExist) {
					return errors.Wrapf(err, "manifest: removing %s (kept as %s)", from, to)
				}
			}
			continue
		}
		if errors.Is(fromErr, os.ErrNotExist) {
			continue // e.g. the synced-length file of a WAL that has none
		}
		var err error
		if link {
			err = fs.Link(from, to)
		} else {
			err = fs.Rename(from, to)
		}
		if err != nil {
			return errors.Wrapf(err, "manifest: keeping %s in %s", from, lost)
		}
	}
	if err := vfs.SyncDir(fs, lost); err != nil {
		return errors.Wrap(err, "manifest")
	}
	return errors.Wrap(vfs.SyncDir(fs, dir), "manifest")
}

// ListLost returns the names of the files in dir/lost/ (none if it does
// not exist).
func ListLost(fs vfs.FS, dir string) ([]string, error) {
	lost := filepath.Join(dir, LostDir)
	if _, err := fs.Stat(lost); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	names, err := fs.List(lost)
	return names, errors.Wrapf(err, "manifest: listing %s", lost)
}

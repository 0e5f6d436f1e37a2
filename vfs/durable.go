package vfs

import (
	"path/filepath"

	"github.com/cockroachdb/errors"
)

// SyncDir makes the creations, renames and removals of names in dir
// durable: it opens dir, syncs it and closes it.
//
// Only the sync's error counts. Closing a directory opened for reading
// cannot lose anything, and once the sync returned the changes are
// durable: reporting them as failed would mislead a caller that acts on
// the answer (a manifest that took a new CURRENT for unwritten would go on
// writing the old manifest, which CURRENT no longer names).
func SyncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return errors.Wrapf(err, "syncing directory %s", dir)
	}
	err = d.Sync()
	_ = d.Close()
	return errors.Wrapf(err, "syncing directory %s", dir)
}

// ReplaceFile replaces name with a file holding data, atomically and
// durably: it writes data to tmp, syncs and closes it, renames it over name
// and syncs the directory holding name. A crash at any point leaves either
// the old file or the new one under name (and perhaps tmp, which the
// caller's recovery removes or overwrites). If the rename did not happen,
// tmp is removed before the error is returned, so that retries on a full
// disk leave no garbage. tmp must be in name's directory.
//
// The error names the step that failed (the file system's errors name
// their paths); callers wrap it with what they were writing.
func ReplaceFile(fs FS, name, tmp string, data []byte) error {
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err != nil {
		_ = fs.Remove(tmp) // the error that matters is err
		return err
	}
	return SyncDir(fs, filepath.Dir(name))
}

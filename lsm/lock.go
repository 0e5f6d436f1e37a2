package lsm

import (
	"io"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// LockDir takes the exclusive lock that a writable Open takes on the DB in
// dir, and returns it; Close releases it. While it is held, Open of dir
// (not ReadOnly) fails, and LockDir fails while a writable DB is open
// there, in this process or another. A ReadOnly Open takes no lock: a tool
// that must not read a DB under a running writer takes this one first.
// fs nil means the operating system's.
func LockDir(fs FS, dir string) (io.Closer, error) {
	if fs == nil {
		fs = vfs.Default
	}
	path := manifest.FilePath(dir, manifest.FileKindLock, 0)
	if _, err := fs.Stat(dir); err != nil {
		return nil, errors.Wrapf(err, "lsm: locking %s", dir)
	}
	lock, err := fs.Lock(path)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: locking %s (is a process using the database?)", dir)
	}
	return lock, nil
}

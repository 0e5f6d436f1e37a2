package lsm

import (
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/vfs"
)

// LockPath returns the path of the lock file a DB in dir holds while it is
// open for writing (LOCK). Tools that read a DB without opening it for
// writing take it too, so that they never read one a live process is
// changing; a holder's vfs.LockHeldError names its process.
func LockPath(dir string) string {
	return manifest.FilePath(dir, manifest.FileKindLock, 0)
}

// Exists reports whether dir on fs holds a DB (its CURRENT file), without
// opening it: Open without ReadOnly would create an empty one.
func Exists(fs vfs.FS, dir string) bool {
	if fs == nil {
		fs = vfs.Default
	}
	_, err := fs.Stat(manifest.FilePath(dir, manifest.FileKindCurrent, 0))
	return err == nil
}

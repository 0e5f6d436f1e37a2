package lsm

import "github.com/bookie-index/bookie-index/lsm/internal/manifest"

// LockPath returns the path of the lock file a DB in dir holds while it is
// open for writing (LOCK). Tools that read a DB without opening it for
// writing take it too, so that they never read one a live process is
// changing; a holder's vfs.LockHeldError names its process.
func LockPath(dir string) string {
	return manifest.FilePath(dir, manifest.FileKindLock, 0)
}

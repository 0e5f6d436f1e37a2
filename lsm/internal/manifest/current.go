package manifest

import "github.com/bookie-index/bookie-index/vfs"

// CurrentManifest returns the number of the manifest CURRENT names in dir,
// for tools that read a manifest without recovering it. Its errors are
// Recover's for CURRENT.
func CurrentManifest(fs vfs.FS, dir string) (uint64, error) { return readCurrent(fs, dir) }

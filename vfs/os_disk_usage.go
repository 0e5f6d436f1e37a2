package vfs

import (
	"syscall"

	"github.com/cockroachdb/errors"
)

// DiskUsage implements FS with statfs(2).
func (osFS) DiskUsage(path string) (DiskUsage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return DiskUsage{}, errors.Wrapf(err, "statfs %s", path)
	}
	bs := uint64(st.Bsize)
	return DiskUsage{ID: fileSystemID(path, &st), Total: uint64(st.Blocks) * bs, Usable: uint64(st.Bavail) * bs}, nil
}

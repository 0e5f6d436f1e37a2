//go:build !linux

package vfs

import (
	"os"
	"syscall"

	"github.com/cockroachdb/errors"
)

// DiskUsage implements FS with statfs(2); the file system's ID is the
// device number stat(2) reports.
func (osFS) DiskUsage(path string) (DiskUsage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return DiskUsage{}, errors.Wrapf(err, "statfs %s", path)
	}
	var id uint64
	if fi, err := os.Stat(path); err == nil {
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			id = uint64(sys.Dev)
		}
	}
	bs := uint64(st.Bsize)
	return DiskUsage{ID: id, Total: uint64(st.Blocks) * bs, Usable: uint64(st.Bavail) * bs}, nil
}

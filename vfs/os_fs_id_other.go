//go:build !linux

package vfs

import (
	"os"
	"syscall"
)

// fileSystemID is the device number stat(2) reports of path (0 if it
// cannot tell).
func fileSystemID(path string, _ *syscall.Statfs_t) uint64 {
	if fi, err := os.Stat(path); err == nil {
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			return uint64(sys.Dev)
		}
	}
	return 0
}

//go:build unix

package bookie

import (
	"syscall"

	"github.com/cockroachdb/errors"
)

// osDiskUsage returns the used fraction of the file system holding dir,
// as upstream's DiskChecker computes it (1 - usable / total).
func osDiskUsage(dir string) (float64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, errors.Wrapf(err, "bookie: statfs %s", dir)
	}
	if st.Blocks == 0 {
		return 0, nil
	}
	return 1 - float64(st.Bavail)/float64(st.Blocks), nil
}

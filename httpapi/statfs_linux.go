package httpapi

import (
	"syscall"

	"github.com/cockroachdb/errors"
)

// statDir returns the space of the file system holding dir: free is what
// an unprivileged writer may use (f_bavail), as Java's
// File.getUsableSpace, which upstream reads.
func statDir(dir string) (dirSpace, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return dirSpace{}, errors.Wrapf(err, "statfs %s", dir)
	}
	bsize := int64(st.Bsize)
	return dirSpace{
		fsID: uint64(uint32(st.Fsid.X__val[0]))<<32 | uint64(uint32(st.Fsid.X__val[1])),
		free: int64(st.Bavail) * bsize,
		size: int64(st.Blocks) * bsize,
	}, nil
}

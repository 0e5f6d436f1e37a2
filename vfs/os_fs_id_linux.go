package vfs

import "syscall"

// fileSystemID is statfs's f_fsid.
func fileSystemID(_ string, st *syscall.Statfs_t) uint64 {
	return uint64(uint32(st.Fsid.X__val[0]))<<32 | uint64(uint32(st.Fsid.X__val[1]))
}

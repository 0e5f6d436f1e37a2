package vfs

import (
	"os"
	"syscall"
)

// Datasync implements File with fdatasync(2).
func (f osFile) Datasync() error {
	for {
		err := syscall.Fdatasync(int(f.File.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.File.Name(), Err: err}
			}
			return nil
		}
	}
}

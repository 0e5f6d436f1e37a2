//go:build !linux

package httpapi

import "github.com/cockroachdb/errors"

// statDir is only implemented on Linux.
func statDir(dir string) (dirSpace, error) {
	return dirSpace{}, errors.Newf("free space of %s: not supported on this system", dir)
}

package vfs

import (
	"fmt"
	"io"

	"github.com/cockroachdb/errors"
)

// ErrFileTooLarge matches (errors.Is) ReadFile's error for a file larger
// than the caller's limit: a *FileTooLargeError.
var ErrFileTooLarge = errors.New("file larger than its limit")

// FileTooLargeError is ReadFile's error for a file that holds more bytes
// than the caller's limit allows.
type FileTooLargeError struct {
	// Path is the file.
	Path string
	// Size is its length.
	Size int64
	// Limit is the most the caller reads.
	Limit int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s holds %d bytes, more than %d", e.Path, e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrFileTooLarge) true.
func (e *FileTooLargeError) Is(target error) bool { return target == ErrFileTooLarge }

// ReadFile reads the whole of name, a small file that holds at most limit
// bytes (a CURRENT, a LAYOUT, a ledgers map). The limit is checked before
// anything is allocated, so that a damaged file cannot make its reader
// allocate whatever it claims to hold; a larger file is an error matching
// ErrFileTooLarge, which a caller reports as damage in its own terms.
//
// The error of the open is returned as it is (errors.Is(err,
// os.ErrNotExist) tells a missing file); a file that is shorter when read
// than its size said is io.ErrUnexpectedEOF.
func ReadFile(fs FS, name string, limit int64) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	size, err := f.Size()
	if err != nil {
		return nil, errors.Wrapf(err, "reading %s", name)
	}
	if size > limit {
		return nil, &FileTooLargeError{Path: name, Size: size, Limit: limit}
	}
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); n < len(data) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, errors.Wrapf(err, "reading %s", name)
	}
	return data, nil
}

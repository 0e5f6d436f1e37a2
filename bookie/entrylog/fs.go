package entrylog

import (
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/errors"
)

// File is an open log file. Writes append; reads use ReadAt so that one
// file serves concurrent readers.
type File interface {
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes everything written so far durable.
	Sync() error
}

// FS is the small set of file operations the entry logs need, so that
// tests can put the logs on an in-memory file system that simulates
// crashes and injects errors (MemFS). Names are paths as the os package
// understands them.
type FS interface {
	// Create creates a new file for writing and reading; it fails if the
	// file exists, so that a log is never overwritten.
	Create(name string) (File, error)
	// Open opens an existing file for reading.
	Open(name string) (File, error)
	// Size returns the size of a file.
	Size(name string) (int64, error)
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string) error
	// SyncDir makes the creations, renames and removals in dir durable.
	SyncDir(dir string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// Remove removes a file.
	Remove(name string) error
}

// OSFS is the operating system's file system.
var OSFS FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}

func (osFS) Open(name string) (File, error) { return os.Open(name) }

func (osFS) Size(name string) (int64, error) {
	st, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	slices.Sort(names)
	return names, nil
}

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.CombineErrors(err, d.Close())
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

// writeFileAtomically replaces name with data durably: a temporary file,
// synced, renamed over name, and the directory synced.
func writeFileAtomically(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	if err := fs.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err == nil {
		err = fs.SyncDir(filepath.Dir(name))
	}
	return err
}

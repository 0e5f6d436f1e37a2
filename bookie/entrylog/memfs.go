package entrylog

import (
	"io"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cockroachdb/errors"
)

// MemFS is an in-memory FS for tests. It keeps, besides each file's
// bytes, how many of them were synced, and, besides each directory's
// entries, the entries of its last SyncDir, so that CrashClone can build
// what a machine would find after losing power. SetFault injects errors.
// Directories are durable as soon as they are created.
type MemFS struct {
	mu    sync.Mutex
	dirs  map[string]*memDir
	fault func(op Op) error
}

// Op is an operation MemFS asks its fault function about.
type Op struct {
	Kind OpKind
	Name string
}

// OpKind names an operation.
type OpKind string

// The operations SetFault's function sees. A failed OpWrite writes half
// of its bytes first (a short write), as a full disk would.
const (
	OpCreate  OpKind = "create"
	OpOpen    OpKind = "open"
	OpRead    OpKind = "read"
	OpWrite   OpKind = "write"
	OpSync    OpKind = "sync"
	OpSyncDir OpKind = "syncdir"
	OpRename  OpKind = "rename"
	OpRemove  OpKind = "remove"
	OpList    OpKind = "list"
	OpSize    OpKind = "size"
)

type memDir struct {
	entries map[string]*memNode
	synced  map[string]*memNode
}

type memNode struct {
	data   []byte
	synced int // bytes synced; files only grow
}

// NewMemFS returns an empty in-memory file system with a root directory.
func NewMemFS() *MemFS {
	fs := &MemFS{dirs: map[string]*memDir{}}
	fs.dirs[string(filepath.Separator)] = newMemDir()
	return fs
}

func newMemDir() *memDir {
	return &memDir{entries: map[string]*memNode{}, synced: map[string]*memNode{}}
}

// SetFault sets the function asked before every operation; an error it
// returns fails the operation. Nil removes it.
func (fs *MemFS) SetFault(fault func(op Op) error) {
	fs.mu.Lock()
	fs.fault = fault
	fs.mu.Unlock()
}

// checkLocked asks the fault function about an operation.
func (fs *MemFS) checkLocked(kind OpKind, name string) error {
	if fs.fault == nil {
		return nil
	}
	if err := fs.fault(Op{Kind: kind, Name: name}); err != nil {
		return errors.Wrapf(err, "injected %s fault on %s", kind, name)
	}
	return nil
}

// split returns the clean directory and base name of a path.
func split(name string) (string, string) {
	name = filepath.Clean(name)
	return filepath.Dir(name), filepath.Base(name)
}

func (fs *MemFS) lookupLocked(name string) (*memNode, error) {
	dir, base := split(name)
	d, ok := fs.dirs[dir]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	n, ok := d.entries[base]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return n, nil
}

// Create implements FS.
func (fs *MemFS) Create(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkLocked(OpCreate, name); err != nil {
		return nil, err
	}
	dir, base := split(name)
	d, ok := fs.dirs[dir]
	if !ok {
		return nil, &os.PathError{Op: "create", Path: name, Err: os.ErrNotExist}
	}
	if _, exists := d.entries[base]; exists {
		return nil, &os.PathError{Op: "create", Path: name, Err: os.ErrExist}
	}
	n := &memNode{}
	d.entries[base] = n
	return &memFile{fs: fs, node: n, name: name, writable: true}, nil
}

// Open implements FS.
func (fs *MemFS) Open(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkLocked(OpOpen, name); err != nil {
		return nil, err
	}
	n, err := fs.lookupLocked(name)
	if err != nil {
		return nil, err
	}
	return &memFile{fs: fs, node: n, name: name}, nil
}

// Size implements FS.
func (fs *MemFS) Size(name string) (int64, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkLocked(OpSize, name); err != nil {
		return 0, err
	}
	n, err := fs.lookupLocked(name)
	if err != nil {
		return 0, err
	}
	return int64(len(n.data)), nil
}

// List implements FS.
func (fs *MemFS) List(dir string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkLocked(OpList, dir); err != nil {
		return nil, err
	}
	d, ok := fs.dirs[filepath.Clean(dir)]
	if !ok {
		return nil, &os.PathError{Op: "list", Path: dir, Err: os.ErrNotExist}
	}
	var names []string
	for name := range d.entries {
		names = append(names, name)
	}
	for path := range fs.dirs {
		if parent, base := split(path); parent == filepath.Clean(dir) && path != parent {
			names = append(names, base)
		}
	}
	slices.Sort(names)
	return names, nil
}

// MkdirAll implements FS.
func (fs *MemFS) MkdirAll(dir string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, ok := fs.dirs[p]; !ok {
			fs.dirs[p] = newMemDir()
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// SyncDir implements FS.
func (fs *MemFS) SyncDir(dir string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkLocked(OpSyncDir, dir); err != nil {
		return err
	}
	d, ok := fs.dirs[filepath.Clean(dir)]
	if !ok {
		return &os.PathError{Op: "syncdir", Path: dir, Err: os.ErrNotExist}
	}
	d.synced = make(map[string]*memNode, len(d.entries))
	for name, n := range d.entries {
		d.synced[name] = n
	}
	return nil
}

// Rename implements FS.
func (fs *MemFS) Rename(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkLocked(OpRename, oldname); err != nil {
		return err
	}
	n, err := fs.lookupLocked(oldname)
	if err != nil {
		return err
	}
	newDir, newBase := split(newname)
	nd, ok := fs.dirs[newDir]
	if !ok {
		return &os.PathError{Op: "rename", Path: newname, Err: os.ErrNotExist}
	}
	oldDir, oldBase := split(oldname)
	delete(fs.dirs[oldDir].entries, oldBase)
	nd.entries[newBase] = n
	return nil
}

// Remove implements FS.
func (fs *MemFS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.checkLocked(OpRemove, name); err != nil {
		return err
	}
	if _, err := fs.lookupLocked(name); err != nil {
		return err
	}
	dir, base := split(name)
	delete(fs.dirs[dir].entries, base)
	return nil
}

// CrashClone returns a new MemFS holding what a machine would find after
// losing power now: each directory the entries of its last SyncDir, each
// file its synced bytes. With rng set, each file also keeps a random
// prefix of its unsynced bytes, as a torn write may. Open files keep
// working on fs only.
func (fs *MemFS) CrashClone(rng *rand.Rand) *MemFS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	clone := &MemFS{dirs: map[string]*memDir{}}
	copies := map[*memNode]*memNode{}
	for _, path := range slices.Sorted(maps.Keys(fs.dirs)) {
		d := fs.dirs[path]
		cd := newMemDir()
		for _, name := range slices.Sorted(maps.Keys(d.synced)) {
			n := d.synced[name]
			c, ok := copies[n]
			if !ok {
				keep := n.synced
				if rng != nil && len(n.data) > keep {
					keep += rng.Intn(len(n.data) - keep + 1)
				}
				c = &memNode{data: slices.Clone(n.data[:keep])}
				c.synced = len(c.data)
				copies[n] = c
			}
			cd.entries[name] = c
			cd.synced[name] = c
		}
		clone.dirs[path] = cd
	}
	return clone
}

// Corrupt overwrites the bytes of name at offset with data, in place (a
// test's disk fault). It fails if the range is not inside the file.
func (fs *MemFS) Corrupt(name string, offset int64, data []byte) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookupLocked(name)
	if err != nil {
		return err
	}
	if offset < 0 || offset+int64(len(data)) > int64(len(n.data)) {
		return errors.Newf("memfs: corrupt %s [%d, %d): outside the file's %d bytes", name, offset, offset+int64(len(data)), len(n.data))
	}
	copy(n.data[offset:], data)
	return nil
}

type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	writable bool
	closed   bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if err := f.fs.checkLocked(OpRead, f.name); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, errors.Newf("memfs: negative offset %d", off)
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if !f.writable {
		return 0, errors.Newf("memfs: %s is open read-only", f.name)
	}
	if err := f.fs.checkLocked(OpWrite, f.name); err != nil {
		f.node.data = append(f.node.data, p[:len(p)/2]...)
		return len(p) / 2, err
	}
	f.node.data = append(f.node.data, p...)
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if err := f.fs.checkLocked(OpSync, f.name); err != nil {
		return err
	}
	f.node.synced = len(f.node.data)
	return nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	f.closed = true
	return nil
}

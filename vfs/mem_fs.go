package vfs

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
)

// MemFS is an in-memory FS for tests that can simulate a power loss.
//
// It is modelled on inodes and directories. A file keeps two versions of its
// bytes: the current ones, which reads see, and the ones captured by its last
// File.Sync. A directory keeps its current entries and the entries captured
// by its last sync (OpenDir, then File.Sync), so creating, renaming or
// removing a name only becomes durable once the directory holding it is
// synced, as on Linux file systems. CrashClone builds the file system a
// machine would find after losing power.
//
// Simplifications:
//   - directories that MkdirAll creates are durable at once;
//   - every path is resolved from the MemFS root, with or without a leading
//     separator; "." is the root and ".." may not climb above it;
//   - there are no permissions, modification times or hard links.
//
// Its disk is unbounded unless SetCapacity gives it a size: then a Write
// that would pass the capacity writes what fits and fails with ENOSPC, as
// on a full disk, and DiskUsage reports the capacity and the bytes of the
// files (those with a name, and those still open without one, as on a
// POSIX file system whose removed files keep their blocks until closed).
//
// It is slightly stricter than the OS where the OS is lax: OpenDir of a
// regular file fails with ENOTDIR. Errors are *os.PathError (or
// *os.LinkError for Rename) around syscall errnos, so errors.Is(err,
// os.ErrNotExist) and friends work as they do on the OS.
//
// A MemFS is safe for concurrent use: one mutex guards the tree and every
// file's bytes, which is plenty for tests.
type MemFS struct {
	mu struct {
		sync.Mutex
		root *memNode
		// locks holds the cleaned paths of the locks Lock handed out.
		locks map[string]bool
		// open counts the open Files of each inode: a file removed while
		// open keeps its bytes on the disk until closed.
		open map[*memNode]int
		// capacity is the disk's size in bytes, 0 for unbounded.
		capacity int64
		// used is the bytes of the files that hold space, valid unless
		// usedStale (a removal, rename or close may have freed an inode;
		// usedLocked recounts then).
		used      int64
		usedStale bool
	}
}

var _ FS = (*MemFS)(nil)

// memNode is an inode: a file or a directory.
type memNode struct {
	isDir bool

	// Files. Until the first WriteAt over synced bytes, data only ever
	// grows by appending or is replaced wholesale (Create truncates), so
	// syncedData may share data's backing array. From then on syncedData
	// is a copy of its own (ownSynced), and Sync copies into it the bytes
	// written since the last sync at offsets it holds ([dirtyLo, dirtyHi))
	// and the bytes past its end.
	data       []byte
	syncedData []byte
	ownSynced  bool
	dirtyLo    int64
	dirtyHi    int64

	// Directories: the entries now, and as of the last directory sync.
	entries       map[string]*memNode
	syncedEntries map[string]*memNode
}

func newDirNode() *memNode {
	return &memNode{
		isDir:         true,
		entries:       map[string]*memNode{},
		syncedEntries: map[string]*memNode{},
	}
}

// NewMem returns an empty in-memory file system holding only its root
// directory.
func NewMem() *MemFS {
	fs := &MemFS{}
	fs.mu.root = newDirNode()
	fs.mu.locks = map[string]bool{}
	fs.mu.open = map[*memNode]int{}
	return fs
}

// unboundedCapacity is the size DiskUsage reports of a MemFS without a
// capacity: a disk that never fills.
const unboundedCapacity = 1 << 62

// SetCapacity gives the file system a size in bytes: writes past it fail
// with ENOSPC, and DiskUsage reports it. Zero or negative makes it
// unbounded again. A capacity below what the files already hold fails
// every write until enough is removed.
func (fs *MemFS) SetCapacity(bytes int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.mu.capacity = max(bytes, 0)
}

// DiskUsage implements FS: the capacity (SetCapacity; unbounded reports
// 2^62 bytes), and as usable what the files leave of it. Every path of a
// MemFS is on one disk; path must exist, as for statfs(2).
func (fs *MemFS) DiskUsage(path string) (DiskUsage, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, err := fs.lookupLocked(path); err != nil {
		return DiskUsage{}, pathErr("statfs", path, err)
	}
	total := uint64(unboundedCapacity)
	if fs.mu.capacity > 0 {
		total = uint64(fs.mu.capacity)
	}
	used := uint64(fs.usedLocked())
	return DiskUsage{Total: total, Usable: total - min(used, total)}, nil
}

// usedLocked returns the bytes of the files that hold space: every inode a
// name reaches, and every open one.
func (fs *MemFS) usedLocked() int64 {
	if !fs.mu.usedStale {
		return fs.mu.used
	}
	seen := map[*memNode]bool{}
	var used int64
	var walk func(n *memNode)
	walk = func(n *memNode) {
		if seen[n] {
			return
		}
		seen[n] = true
		used += int64(len(n.data))
		for _, child := range n.entries {
			walk(child)
		}
	}
	walk(fs.mu.root)
	for n := range fs.mu.open {
		walk(n)
	}
	fs.mu.used, fs.mu.usedStale = used, false
	return used
}

// newFileLocked returns an open File of n.
func (fs *MemFS) newFileLocked(n *memNode, name string, readOnly bool) *memFile {
	fs.mu.open[n]++
	return &memFile{fs: fs, node: n, name: name, readOnly: readOnly}
}

var (
	errOutsideRoot = errors.New("path climbs above the root of the MemFS")
	errIsRoot      = errors.New("operation not allowed on the root directory")
	errReadOnly    = errors.New("file is open for reading only")
	errNegativeOff = errors.New("negative offset")
)

func pathErr(op, name string, err error) error {
	return &os.PathError{Op: op, Path: name, Err: err}
}

// splitPath returns the components of name below the root; the root itself
// has none.
func splitPath(name string) ([]string, error) {
	clean := strings.TrimLeft(filepath.Clean(name), string(filepath.Separator))
	if clean == "" || clean == "." {
		return nil, nil
	}
	parts := strings.Split(clean, string(filepath.Separator))
	if parts[0] == ".." {
		return nil, errOutsideRoot
	}
	return parts, nil
}

// walkLocked returns the node at the given components.
func (fs *MemFS) walkLocked(parts []string) (*memNode, error) {
	n := fs.mu.root
	for _, p := range parts {
		if !n.isDir {
			return nil, syscall.ENOTDIR
		}
		child, ok := n.entries[p]
		if !ok {
			return nil, syscall.ENOENT
		}
		n = child
	}
	return n, nil
}

// lookupLocked returns the node name refers to.
func (fs *MemFS) lookupLocked(name string) (*memNode, error) {
	parts, err := splitPath(name)
	if err != nil {
		return nil, err
	}
	return fs.walkLocked(parts)
}

// lookupParentLocked returns the directory that holds name's last component,
// and that component.
func (fs *MemFS) lookupParentLocked(name string) (dir *memNode, base string, err error) {
	parts, err := splitPath(name)
	if err != nil {
		return nil, "", err
	}
	if len(parts) == 0 {
		return nil, "", errIsRoot
	}
	dir, err = fs.walkLocked(parts[:len(parts)-1])
	if err == nil && !dir.isDir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, "", err
	}
	return dir, parts[len(parts)-1], nil
}

// Create implements FS. Truncating an existing file is, like every other
// change to its bytes, durable only once the file is synced.
func (fs *MemFS) Create(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.lookupParentLocked(name)
	if err != nil {
		return nil, pathErr("create", name, err)
	}
	n := dir.entries[base]
	switch {
	case n == nil:
		n = &memNode{}
		dir.entries[base] = n
	case n.isDir:
		return nil, pathErr("create", name, syscall.EISDIR)
	default:
		fs.mu.used -= int64(len(n.data))
		n.data = nil
	}
	return fs.newFileLocked(n, name, false), nil
}

// CreateExclusive implements FS. Like O_EXCL it fails if name exists, as a
// file or as a directory. The new name, like every creation, is durable
// only once its directory is synced.
func (fs *MemFS) CreateExclusive(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.lookupParentLocked(name)
	if err != nil {
		return nil, pathErr("create", name, err)
	}
	if dir.entries[base] != nil {
		return nil, pathErr("create", name, syscall.EEXIST)
	}
	n := &memNode{}
	dir.entries[base] = n
	return fs.newFileLocked(n, name, false), nil
}

// Open implements FS. Like os.Open it also opens directories.
func (fs *MemFS) Open(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookupLocked(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return fs.newFileLocked(n, name, true), nil
}

// OpenDir implements FS.
func (fs *MemFS) OpenDir(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookupLocked(name)
	if err == nil && !n.isDir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, pathErr("opendir", name, err)
	}
	return fs.newFileLocked(n, name, true), nil
}

// Remove implements FS.
func (fs *MemFS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.lookupParentLocked(name)
	if err != nil {
		return pathErr("remove", name, err)
	}
	n, ok := dir.entries[base]
	switch {
	case !ok:
		return pathErr("remove", name, syscall.ENOENT)
	case n.isDir && len(n.entries) > 0:
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(dir.entries, base)
	fs.mu.usedStale = true
	return nil
}

// RemoveAll implements FS. Like os.RemoveAll it succeeds if name is absent.
func (fs *MemFS) RemoveAll(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.lookupParentLocked(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return pathErr("removeall", name, err)
	}
	delete(dir.entries, base)
	fs.mu.usedStale = true
	return nil
}

// Rename implements FS. As os.Rename does on Unix, it refuses to replace an
// existing directory.
func (fs *MemFS) Rename(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.renameLocked(oldname, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// Link makes newname a second name of the file oldname.
func (fs *MemFS) Link(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	oldDir, oldBase, err := fs.lookupParentLocked(oldname)
	if err == nil {
		var newDir *memNode
		var newBase string
		newDir, newBase, err = fs.lookupParentLocked(newname)
		if err == nil {
			n, ok := oldDir.entries[oldBase]
			switch {
			case !ok:
				err = syscall.ENOENT
			case n.isDir:
				err = syscall.EPERM
			case newDir.entries[newBase] != nil:
				err = syscall.EEXIST
			default:
				newDir.entries[newBase] = n
			}
		}
	}
	if err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	return nil
}

func (fs *MemFS) renameLocked(oldname, newname string) error {
	// Resolve both parents before either last component, as Linux does, so
	// that the same error comes back as from os.Rename.
	oldDir, oldBase, err := fs.lookupParentLocked(oldname)
	if err != nil {
		return err
	}
	newDir, newBase, err := fs.lookupParentLocked(newname)
	if err != nil {
		return err
	}
	n, ok := oldDir.entries[oldBase]
	if !ok {
		return syscall.ENOENT
	}
	target := newDir.entries[newBase]
	switch {
	case target != nil && target.isDir:
		return syscall.EEXIST
	case target == n:
		return nil
	case n.isDir && target != nil:
		return syscall.ENOTDIR
	case n.isDir && containsDir(n, newDir, map[*memNode]bool{}):
		return syscall.EINVAL
	}
	delete(oldDir.entries, oldBase)
	newDir.entries[newBase] = n
	fs.mu.usedStale = true // target's inode may be gone
	return nil
}

// containsDir reports whether dir is tree or lies below it.
func containsDir(tree, dir *memNode, seen map[*memNode]bool) bool {
	if tree == dir {
		return true
	}
	seen[tree] = true
	for _, child := range tree.entries {
		if child.isDir && !seen[child] && containsDir(child, dir, seen) {
			return true
		}
	}
	return false
}

// MkdirAll implements FS. The directories it creates are durable at once,
// without a sync of their parents: a simplification, since engines create
// their directory once, before any file that matters.
func (fs *MemFS) MkdirAll(dir string, _ os.FileMode) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	parts, err := splitPath(dir)
	if err != nil {
		return pathErr("mkdir", dir, err)
	}
	n := fs.mu.root
	for i, p := range parts {
		child, ok := n.entries[p]
		switch {
		case !ok:
			child = newDirNode()
			n.entries[p] = child
			n.syncedEntries[p] = child
		case !child.isDir:
			return pathErr("mkdir", filepath.Join(parts[:i+1]...), syscall.ENOTDIR)
		}
		n = child
	}
	return nil
}

// List implements FS.
func (fs *MemFS) List(dir string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookupLocked(dir)
	if err == nil && !n.isDir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, pathErr("open", dir, err)
	}
	// Never nil, like the OS version's result.
	names := slices.AppendSeq(make([]string, 0, len(n.entries)), maps.Keys(n.entries))
	slices.Sort(names)
	return names, nil
}

// Stat implements FS.
func (fs *MemFS) Stat(name string) (os.FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, err := fs.lookupLocked(name)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	return memFileInfo{name: filepath.Base(name), size: int64(len(n.data)), isDir: n.isDir}, nil
}

// Lock implements FS. The lock is exclusive within this MemFS: a second Lock
// of the same name fails until the first is closed. Like the OS version it
// creates the file if it is missing.
func (fs *MemFS) Lock(name string) (io.Closer, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.lookupParentLocked(name)
	if err != nil {
		return nil, pathErr("lock", name, err)
	}
	lockKey := strings.TrimLeft(filepath.Clean(name), string(filepath.Separator))
	if fs.mu.locks[lockKey] {
		return nil, &LockHeldError{Path: name}
	}
	n := dir.entries[base]
	switch {
	case n == nil:
		dir.entries[base] = &memNode{}
	case n.isDir:
		return nil, pathErr("lock", name, syscall.EISDIR)
	}
	fs.mu.locks[lockKey] = true
	return &memLock{fs: fs, name: name, key: lockKey}, nil
}

type memLock struct {
	fs     *MemFS
	name   string
	key    string
	closed bool // guarded by fs.mu
}

func (l *memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	if l.closed {
		return pathErr("unlock", l.name, os.ErrClosed)
	}
	l.closed = true
	delete(l.fs.mu.locks, l.key)
	return nil
}

// memFile is an open file or directory of a MemFS. It keeps working after its
// name is removed or renamed, like a POSIX file descriptor.
type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	readOnly bool
	closed   bool // guarded by fs.mu
}

func (f *memFile) checkOpenLocked(op string) error {
	if f.closed {
		return pathErr(op, f.name, os.ErrClosed)
	}
	return nil
}

// ReadAt follows os.File: fewer than len(p) bytes come with io.EOF.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkOpenLocked("read"); err != nil {
		return 0, err
	}
	switch {
	case f.node.isDir:
		return 0, pathErr("read", f.name, syscall.EISDIR)
	case off < 0:
		return 0, pathErr("read", f.name, errNegativeOff)
	}
	n := 0
	if off < int64(len(f.node.data)) {
		n = copy(p, f.node.data[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkOpenLocked("write"); err != nil {
		return 0, err
	}
	if f.readOnly {
		return 0, pathErr("write", f.name, errReadOnly)
	}
	n := len(p)
	if c := f.fs.mu.capacity; c > 0 {
		n = int(min(int64(n), max(c-f.fs.usedLocked(), 0)))
	}
	f.node.markDirty(int64(len(f.node.data)), int64(n))
	f.node.data = append(f.node.data, p[:n]...)
	f.fs.mu.used += int64(n)
	if n < len(p) {
		return n, pathErr("write", f.name, syscall.ENOSPC)
	}
	return n, nil
}

// WriteAt implements File. Bytes written over synced ones are, like
// appended bytes, lost at a crash until the next Sync (CrashClone keeps
// the synced version). A write past the end fills the gap with zeros; on
// a file system with a capacity, the gap and the bytes that grow the file
// count, and a write that would pass the capacity writes what fits, as
// Write does.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkOpenLocked("write"); err != nil {
		return 0, err
	}
	switch {
	case f.readOnly:
		return 0, pathErr("write", f.name, errReadOnly)
	case f.node.isDir:
		return 0, pathErr("write", f.name, syscall.EISDIR)
	case off < 0:
		return 0, pathErr("write", f.name, errNegativeOff)
	}
	nd := f.node
	n := len(p)
	size := int64(len(nd.data))
	if c := f.fs.mu.capacity; c > 0 && off+int64(n) > size {
		room := max(c-f.fs.usedLocked(), 0)
		switch {
		case off > size+room:
			return 0, pathErr("write", f.name, syscall.ENOSPC)
		case off+int64(n) > size+room:
			n = int(size + room - off)
		}
	}
	if n == 0 {
		if n < len(p) {
			return 0, pathErr("write", f.name, syscall.ENOSPC)
		}
		return 0, nil
	}
	if off < int64(len(nd.syncedData)) && !nd.ownSynced {
		// The write changes bytes the last sync captured, which may
		// share data's array: give the synced version its own.
		nd.syncedData = slices.Clone(nd.syncedData)
		nd.ownSynced = true
	}
	nd.markDirty(off, int64(n))
	if end := off + int64(n); end > size {
		// The zeros of a gap, then room for the write.
		nd.data = append(nd.data, make([]byte, end-size)...)
		f.fs.mu.used += end - size
	}
	copy(nd.data[off:], p[:n])
	if n < len(p) {
		return n, pathErr("write", f.name, syscall.ENOSPC)
	}
	return n, nil
}

// markDirty records that n bytes at off changed since the last sync, for a
// node whose synced bytes are a copy of their own.
func (nd *memNode) markDirty(off, n int64) {
	if !nd.ownSynced || n == 0 {
		return
	}
	if nd.dirtyHi == 0 {
		nd.dirtyLo, nd.dirtyHi = off, off+n
		return
	}
	nd.dirtyLo, nd.dirtyHi = min(nd.dirtyLo, off), max(nd.dirtyHi, off+n)
}

// syncData captures a file's bytes as its synced version.
func (nd *memNode) syncData() {
	if !nd.ownSynced {
		// Capping the capacity keeps later appends to data from growing
		// syncedData; they never overwrite its bytes (see memNode).
		nd.syncedData = nd.data[:len(nd.data):len(nd.data)]
		return
	}
	old := int64(len(nd.syncedData))
	size := int64(len(nd.data))
	if size <= old {
		nd.syncedData = nd.syncedData[:size]
	} else {
		nd.syncedData = append(nd.syncedData, nd.data[old:]...)
	}
	if lo, hi := nd.dirtyLo, min(nd.dirtyHi, old, size); lo < hi {
		copy(nd.syncedData[lo:hi], nd.data[lo:hi])
	}
	nd.dirtyLo, nd.dirtyHi = 0, 0
}

// Sync snapshots a file's bytes, or a directory's entries.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkOpenLocked("sync"); err != nil {
		return err
	}
	n := f.node
	if n.isDir {
		n.syncedEntries = maps.Clone(n.entries)
	} else {
		n.syncData()
	}
	return nil
}

// Datasync implements File: in memory there is no metadata to spare, so
// it is Sync. (MemFS makes a grown length durable with the bytes, as
// fdatasync(2) does.)
func (f *memFile) Datasync() error { return f.Sync() }

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkOpenLocked("size"); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkOpenLocked("close"); err != nil {
		return err
	}
	f.closed = true
	if f.fs.mu.open[f.node]--; f.fs.mu.open[f.node] == 0 {
		delete(f.fs.mu.open, f.node)
		f.fs.mu.usedStale = true
	}
	return nil
}

type memFileInfo struct {
	name  string
	size  int64
	isDir bool
}

func (fi memFileInfo) Name() string       { return fi.name }
func (fi memFileInfo) Size() int64        { return fi.size }
func (fi memFileInfo) ModTime() time.Time { return time.Time{} }
func (fi memFileInfo) IsDir() bool        { return fi.isDir }
func (fi memFileInfo) Sys() any           { return nil }

func (fi memFileInfo) Mode() os.FileMode {
	if fi.isDir {
		return os.ModeDir | 0o755
	}
	return 0o644
}

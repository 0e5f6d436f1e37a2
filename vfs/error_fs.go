package vfs

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/errors"
)

// OpKind names an FS or File operation that an Injector may fail.
type OpKind int

// The operations an ErrorFS asks its Injector about. OpRead is File.ReadAt;
// OpWrite covers File.Write and File.WriteAt; OpSync covers File.Sync and
// File.Datasync; OpClose covers File.Close and the release of a Lock.
const (
	OpCreate OpKind = iota
	OpOpen
	OpOpenDir
	OpRemove
	OpRemoveAll
	OpRename
	OpMkdirAll
	OpList
	OpStat
	OpLock
	OpRead
	OpWrite
	OpSync
	OpClose
	OpSize
	OpLink
	OpCreateExclusive
	OpDiskUsage
	numOpKinds
)

var opKindNames = [numOpKinds]string{
	"create", "open", "open-dir", "remove", "remove-all", "rename", "mkdir-all",
	"list", "stat", "lock", "read", "write", "sync", "close", "size", "link",
	"create-exclusive", "disk-usage",
}

// String returns the kind's name as it appears in injected errors.
func (k OpKind) String() string {
	if k >= 0 && k < numOpKinds {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Op describes one operation for an Injector.
type Op struct {
	Kind OpKind
	// Path is the name the operation was called with; for File operations,
	// the name the file was opened with; for Rename, the old name.
	Path string
	// NewPath is the new name of a Rename or Link, and empty for every other kind.
	NewPath string
}

// String names the operation and its path(s), as injected errors do.
func (op Op) String() string {
	if op.NewPath != "" {
		return fmt.Sprintf("%s %q -> %q", op.Kind, op.Path, op.NewPath)
	}
	return fmt.Sprintf("%s %q", op.Kind, op.Path)
}

// Injector decides which operations fail. MaybeError is called before each
// operation, possibly from several goroutines at once; a non-nil result fails
// the operation without running it.
type Injector interface {
	MaybeError(op Op) error
}

// ErrInjected matches every error an ErrorFS injects: errors.Is(err,
// ErrInjected), from the standard library or cockroachdb/errors, tells an
// injected failure from a real one. The error's message names the operation
// and its path, and it wraps whatever the Injector returned.
var ErrInjected = errors.New("vfs: injected error")

// ErrShortWrite, returned by an Injector for an OpWrite (or wrapped in what
// it returns), makes the Write hand the first half of its bytes to the
// inner file before failing, as a write that runs out of space part-way
// does: the file is left with a torn tail that the writer did not account
// for. Any other injected error fails a Write without writing anything.
var ErrShortWrite = errors.New("vfs: short write")

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(op Op) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// OnOp fails every operation of the given kind whose path (or, for Rename,
// either path) contains pathContains; "" matches every path.
func OnOp(kind OpKind, pathContains string) Injector {
	return InjectorFunc(func(op Op) error {
		if op.Kind != kind {
			return nil
		}
		if strings.Contains(op.Path, pathContains) ||
			(op.NewPath != "" && strings.Contains(op.NewPath, pathContains)) {
			return ErrInjected
		}
		return nil
	})
}

// IndexInjector fails exactly one operation: the one with a given index,
// counting every operation of the ErrorFS from 0. Running a workload once
// with a negative index counts its operations (Ops); running it again with
// each index in turn fails every operation once.
type IndexInjector struct {
	index int64
	ops   atomic.Int64
}

// OnIndex returns an injector that fails operation number n (from 0) and
// no other. A negative n fails nothing.
func OnIndex(n int64) *IndexInjector {
	return &IndexInjector{index: n}
}

// MaybeError implements Injector.
func (ii *IndexInjector) MaybeError(Op) error {
	if ii.ops.Add(1)-1 == ii.index {
		return ErrInjected
	}
	return nil
}

// Ops returns how many operations the injector has been asked about,
// including the failed one.
func (ii *IndexInjector) Ops() int64 { return ii.ops.Load() }

// Toggle wraps an Injector so that it can be switched on and off while the
// file system is in use. While off, the inner injector is not consulted, so
// an IndexInjector inside does not count.
type Toggle struct {
	inner Injector
	on    atomic.Bool
}

// NewToggle wraps inner in a Toggle that starts switched off.
func NewToggle(inner Injector) *Toggle {
	return &Toggle{inner: inner}
}

// On makes the toggle consult its inner injector.
func (t *Toggle) On() { t.on.Store(true) }

// Off makes every operation succeed.
func (t *Toggle) Off() { t.on.Store(false) }

// MaybeError implements Injector.
func (t *Toggle) MaybeError(op Op) error {
	if !t.on.Load() {
		return nil
	}
	return t.inner.MaybeError(op)
}

// ErrorFS wraps an FS, and the Files and locks it returns, asking an
// Injector before each operation whether it should fail. A failed operation
// never reaches the inner FS, so a failed Write writes nothing, with two
// exceptions: a failed Close still closes the inner file, as close(2) frees
// the descriptor even when it reports an error, and a Write failed with
// ErrShortWrite writes half of its bytes.
type ErrorFS struct {
	inner FS
	inj   Injector
}

var _ FS = (*ErrorFS)(nil)

// NewErrorFS wraps inner so that the operations inj chooses fail.
func NewErrorFS(inner FS, inj Injector) *ErrorFS {
	return &ErrorFS{inner: inner, inj: inj}
}

// check asks the injector about op and returns the error to report.
func (fs *ErrorFS) check(op Op) error {
	if err := fs.inj.MaybeError(op); err != nil {
		return &injectedError{op: op, err: err}
	}
	return nil
}

// injectedError names the failed operation and wraps the injector's error.
// It matches ErrInjected through an Is method rather than errors.Mark so
// that the standard library's errors.Is recognises it too.
type injectedError struct {
	op  Op
	err error
}

func (e *injectedError) Error() string        { return fmt.Sprintf("%s: %v", e.op, e.err) }
func (e *injectedError) Unwrap() error        { return e.err }
func (e *injectedError) Is(target error) bool { return target == ErrInjected }

// open runs one of the inner FS's open functions and wraps the file.
func (fs *ErrorFS) open(kind OpKind, name string, open func(string) (File, error)) (File, error) {
	if err := fs.check(Op{Kind: kind, Path: name}); err != nil {
		return nil, err
	}
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{fs: fs, name: name, inner: f}, nil
}

// close closes c even if the injector fails the close.
func (fs *ErrorFS) close(name string, c io.Closer) error {
	injected := fs.check(Op{Kind: OpClose, Path: name})
	if err := c.Close(); injected == nil {
		return err
	}
	return injected
}

// Create implements FS.
func (fs *ErrorFS) Create(name string) (File, error) { return fs.open(OpCreate, name, fs.inner.Create) }

// CreateExclusive implements FS.
func (fs *ErrorFS) CreateExclusive(name string) (File, error) {
	return fs.open(OpCreateExclusive, name, fs.inner.CreateExclusive)
}

// Open implements FS.
func (fs *ErrorFS) Open(name string) (File, error) { return fs.open(OpOpen, name, fs.inner.Open) }

// OpenDir implements FS.
func (fs *ErrorFS) OpenDir(name string) (File, error) {
	return fs.open(OpOpenDir, name, fs.inner.OpenDir)
}

// Remove implements FS.
func (fs *ErrorFS) Remove(name string) error {
	if err := fs.check(Op{Kind: OpRemove, Path: name}); err != nil {
		return err
	}
	return fs.inner.Remove(name)
}

// RemoveAll implements FS.
func (fs *ErrorFS) RemoveAll(name string) error {
	if err := fs.check(Op{Kind: OpRemoveAll, Path: name}); err != nil {
		return err
	}
	return fs.inner.RemoveAll(name)
}

// Rename implements FS.
func (fs *ErrorFS) Rename(oldname, newname string) error {
	if err := fs.check(Op{Kind: OpRename, Path: oldname, NewPath: newname}); err != nil {
		return err
	}
	return fs.inner.Rename(oldname, newname)
}

// Link implements FS.
func (fs *ErrorFS) Link(oldname, newname string) error {
	if err := fs.check(Op{Kind: OpLink, Path: oldname, NewPath: newname}); err != nil {
		return err
	}
	return fs.inner.Link(oldname, newname)
}

// MkdirAll implements FS.
func (fs *ErrorFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := fs.check(Op{Kind: OpMkdirAll, Path: dir}); err != nil {
		return err
	}
	return fs.inner.MkdirAll(dir, perm)
}

// List implements FS.
func (fs *ErrorFS) List(dir string) ([]string, error) {
	if err := fs.check(Op{Kind: OpList, Path: dir}); err != nil {
		return nil, err
	}
	return fs.inner.List(dir)
}

// Stat implements FS.
func (fs *ErrorFS) Stat(name string) (os.FileInfo, error) {
	if err := fs.check(Op{Kind: OpStat, Path: name}); err != nil {
		return nil, err
	}
	return fs.inner.Stat(name)
}

// Lock implements FS. Releasing the lock is an OpClose on name.
func (fs *ErrorFS) Lock(name string) (io.Closer, error) {
	if err := fs.check(Op{Kind: OpLock, Path: name}); err != nil {
		return nil, err
	}
	l, err := fs.inner.Lock(name)
	if err != nil {
		return nil, err
	}
	return &errorCloser{fs: fs, name: name, inner: l}, nil
}

// DiskUsage implements FS.
func (fs *ErrorFS) DiskUsage(path string) (DiskUsage, error) {
	if err := fs.check(Op{Kind: OpDiskUsage, Path: path}); err != nil {
		return DiskUsage{}, err
	}
	return fs.inner.DiskUsage(path)
}

type errorCloser struct {
	fs    *ErrorFS
	name  string
	inner io.Closer
}

func (c *errorCloser) Close() error { return c.fs.close(c.name, c.inner) }

type errorFile struct {
	fs    *ErrorFS
	name  string
	inner File
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(Op{Kind: OpRead, Path: f.name}); err != nil {
		return 0, err
	}
	return f.inner.ReadAt(p, off)
}

func (f *errorFile) Write(p []byte) (int, error) {
	if err := f.fs.check(Op{Kind: OpWrite, Path: f.name}); err != nil {
		if !errors.Is(err, ErrShortWrite) {
			return 0, err
		}
		n, werr := f.inner.Write(p[:len(p)/2])
		if werr != nil {
			return n, werr
		}
		return n, err
	}
	return f.inner.Write(p)
}

// WriteAt is an OpWrite, failed as Write is: with ErrShortWrite it writes
// the first half of p at off.
func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(Op{Kind: OpWrite, Path: f.name}); err != nil {
		if !errors.Is(err, ErrShortWrite) {
			return 0, err
		}
		n, werr := f.inner.WriteAt(p[:len(p)/2], off)
		if werr != nil {
			return n, werr
		}
		return n, err
	}
	return f.inner.WriteAt(p, off)
}

func (f *errorFile) Sync() error {
	if err := f.fs.check(Op{Kind: OpSync, Path: f.name}); err != nil {
		return err
	}
	return f.inner.Sync()
}

// Datasync is an OpSync: an injector that fails a file's syncs fails both
// kinds.
func (f *errorFile) Datasync() error {
	if err := f.fs.check(Op{Kind: OpSync, Path: f.name}); err != nil {
		return err
	}
	return f.inner.Datasync()
}

func (f *errorFile) Size() (int64, error) {
	if err := f.fs.check(Op{Kind: OpSize, Path: f.name}); err != nil {
		return 0, err
	}
	return f.inner.Size()
}

func (f *errorFile) Close() error { return f.fs.close(f.name, f.inner) }

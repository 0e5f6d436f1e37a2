// Package vfs is the file system interface every byte of the storage goes
// through: the engine's tables, WAL and MANIFEST (package lsm), and the
// bookie's entry logs, indexes and rebuild files (package bookie), so that
// tests can swap the operating system for an in-memory file system that
// simulates crashes, or for one that injects errors.
//
// Implementations: Default (the operating system), NewMem (in memory, with
// crash simulation and a settable capacity) and NewErrorFS (wraps another FS
// and fails chosen calls, optionally with a short write). A bookie keeps all of its files on one FS,
// so that one CrashClone of a MemFS is a power loss of the whole storage at
// one instant: the entry logs and the indexes that name their bytes lose
// their unsynced data together, as on a real machine.
//
// The package also owns the file-system facts every store needs, so that
// each is written once: SyncDir (make a directory's changes durable),
// ReplaceFile (replace a small file atomically and durably), ReadFile (read
// a small file whole, never more than a limit), IsNoSpace (is this error a
// full disk) and FS.DiskUsage (how full is the disk), which the in-memory
// FS answers too, so that a full disk can be tested in memory.
package vfs

import (
	"io"
	"os"
)

// File is an open file. Reads use ReadAt so that one file may serve
// concurrent readers; Write appends at the current end, WriteAt writes at
// a position.
type File interface {
	io.ReaderAt
	io.Writer
	// WriteAt writes p at offset off, as pwrite(2): over bytes already in
	// the file, or past its end (the gap reads as zeros). A file that
	// WriteAt grows is written only with WriteAt from then on: on the
	// operating system Write goes on where the last Write ended, not at
	// the new end. A journal writes its records into space it filled with
	// zeros beforehand, so that syncing them changes no metadata (see
	// Datasync).
	io.WriterAt
	io.Closer
	// Sync makes everything written so far durable, with the file's
	// metadata (fsync(2)).
	Sync() error
	// Datasync makes everything written so far durable, and of the
	// metadata only what reading it back needs, such as a grown length
	// (fdatasync(2)); where the system has no such call it is Sync. It is
	// cheaper than Sync for writes that overwrite bytes already in the
	// file, which change no metadata that needs flushing.
	Datasync() error
	// Size returns the current length of the file.
	Size() (int64, error)
}

// FS is the set of file system operations the engine needs. Names are paths
// as the os package understands them; implementations join with filepath.
type FS interface {
	// Create creates or truncates a file for writing (and reading).
	Create(name string) (File, error)
	// CreateExclusive creates a new file for writing (and reading) and
	// fails, with an error matching os.ErrExist, if name exists: for files
	// that must never be overwritten, such as entry logs (O_EXCL).
	CreateExclusive(name string) (File, error)
	// Open opens an existing file for reading.
	Open(name string) (File, error)
	// OpenDir opens a directory so that Sync makes renames, creations and
	// removals in it durable.
	OpenDir(name string) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes a directory tree.
	RemoveAll(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// Link makes newname a second name (a hard link) of the file oldname;
	// newname must not exist. Like a creation, it is durable once the
	// directory is synced.
	Link(oldname, newname string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes a file.
	Stat(name string) (os.FileInfo, error)
	// Lock takes an exclusive advisory lock on name (creating it), so that
	// two processes never open one database. Close releases it. A lock
	// another holder has fails at once with a *LockHeldError (ErrLockHeld),
	// naming the holder's process id where the file system knows it.
	Lock(name string) (io.Closer, error)
	// DiskUsage says how large the file system holding path is and how much
	// of it a writer may still use: statfs(2) on the operating system; a
	// MemFS reports its capacity (SetCapacity) and the bytes of its files.
	DiskUsage(path string) (DiskUsage, error)
}

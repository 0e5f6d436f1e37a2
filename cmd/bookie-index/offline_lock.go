package main

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// The offline tools (db, compact, rebuild) refuse a database that another
// process holds, naming the process, rather than reading it: a live
// process's WAL grows and its memtables are not on disk, so what a
// read-only open showed would be a stale, partial picture ("0 tables, 0
// entries" with exit code 0) that looks like the truth (docs/operations.md,
// "Offline tools and a running serve").

// inUse rewords an error that carries a vfs.LockHeldError: it says that a
// live process holds the directory and what to do.
func inUse(err error) error {
	var held *vfs.LockHeldError
	if !errors.As(err, &held) {
		return err
	}
	who := "another process"
	if held.PID > 0 {
		who = fmt.Sprintf("process %d", held.PID)
	}
	return errors.Newf("%s holds %s (a running 'bookie-index serve' or bookie?): stop it first; "+
		"the offline tools do not touch a live database, whose WAL and memtables they cannot see", who, held.Path)
}

// lockForReading takes the lock of the database in dir for a read-only
// tool and returns its release. A directory without a lock file was never
// opened for writing, so nothing holds it and nothing is created; a lock
// file that cannot be opened for writing (read-only media, another user's
// files) is read without the lock, with a note on stderr.
func lockForReading(dir string, stderr io.Writer) (func(), error) {
	path := lsm.LockPath(dir)
	if _, err := os.Stat(path); err != nil {
		return func() {}, nil
	}
	l, err := vfs.Default.Lock(path)
	if errors.Is(err, vfs.ErrLockHeld) {
		return nil, inUse(err)
	}
	if errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission) {
		fmt.Fprintf(stderr, "note: cannot take %s (%v); reading without it: if a process has the database open, what follows may be stale\n", path, err)
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Close() }, nil
}

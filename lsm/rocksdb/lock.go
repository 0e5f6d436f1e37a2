package rocksdb

import (
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// LockFileName is the file a RocksDB process locks while it has the
// database open.
const LockFileName = "LOCK"

// LockDir takes the lock RocksDB itself takes on a database it opens, so
// that a tool about to change a database's directory (rename it, as a
// migration does) fails while a RocksDB process — a running BookKeeper
// bookie — has it open, and keeps one from opening it meanwhile.
//
// RocksDB's lock (PosixEnv::LockFile) is a POSIX record lock (fcntl
// F_SETLK, a write lock on the whole file) on dir/LOCK, not a BSD flock:
// the two do not exclude each other on Linux, so vfs.FS.Lock, which this
// repository's own databases use, would not see a running bookie. On the
// operating system's file system LockDir takes the record lock; a holder
// makes it fail with a *vfs.LockHeldError naming the holder's process id
// (errors.Is vfs.ErrLockHeld and syscall.EWOULDBLOCK). The file is not
// written: its bytes are RocksDB's (it creates the file, empty, if it is
// missing, as RocksDB would). On any other FS (an in-memory one in tests)
// it is fs.Lock.
//
// A record lock belongs to the process and goes when the process closes
// any descriptor of the file: nothing else of this package opens LOCK.
func LockDir(fs vfs.FS, dir string) (io.Closer, error) {
	if _, err := fs.Stat(dir); err != nil {
		return nil, errors.Wrapf(err, "rocksdb: locking %s", dir)
	}
	path := filepath.Join(dir, LockFileName)
	if fs != vfs.Default {
		l, err := fs.Lock(path)
		return l, errors.Wrapf(err, "rocksdb: locking %s", dir)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errors.Wrapf(err, "rocksdb: locking %s", dir)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		held := &vfs.LockHeldError{Path: path}
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			q := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
			if syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &q) == nil && q.Type != syscall.F_UNLCK {
				held.PID = int(q.Pid)
			}
			_ = f.Close()
			return nil, held
		}
		_ = f.Close()
		return nil, errors.Wrapf(err, "rocksdb: locking %s", path)
	}
	return recordLock{f}, nil
}

// recordLock is a held record lock: closing the file releases it.
type recordLock struct{ f *os.File }

func (l recordLock) Close() error { return l.f.Close() }

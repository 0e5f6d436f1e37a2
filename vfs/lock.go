package vfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/cockroachdb/errors"
)

// ErrLockHeld matches (errors.Is) the error of a Lock that another holder
// has: a *LockHeldError.
var ErrLockHeld = errors.New("lock held by another holder")

// LockHeldError is the error of a Lock that another holder has. The
// operating system's file system writes the holder's process id into the
// lock file when it takes the lock, and reads it back for this error, so
// that an operator learns which process to stop.
type LockHeldError struct {
	// Path is the lock file.
	Path string
	// PID is the holder's process id, 0 if unknown (a MemFS, or a holder
	// that has not written it yet).
	PID int
}

func (e *LockHeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("lock %s is held by process %d", e.Path, e.PID)
	}
	return fmt.Sprintf("lock %s is held by another holder", e.Path)
}

// Is makes errors.Is(err, ErrLockHeld) true, and errors.Is(err,
// syscall.EWOULDBLOCK), the flock error it replaces.
func (e *LockHeldError) Is(target error) bool {
	return target == ErrLockHeld || target == syscall.EWOULDBLOCK
}

// lockFileContents is what a holder writes into its lock file.
func lockFileContents() []byte {
	return []byte(strconv.Itoa(os.Getpid()) + "\n")
}

// parseLockHolder reads the process id a holder wrote, 0 if there is none.
func parseLockHolder(data []byte) int {
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

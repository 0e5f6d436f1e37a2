package vfs

import (
	"errors"
	"syscall"
)

// ErrNoSpace marks errors that a lack of space caused one step removed: a
// store that refuses a write because an earlier one ran out of space (the
// engine's lsm.ErrNoSpace is this error) wraps or matches it, so that
// IsNoSpace recognises the refusal as well as the ENOSPC behind it. Both the
// standard library's and cockroachdb's errors.Is recognise it.
var ErrNoSpace = errors.New("out of space")

// IsNoSpace reports whether err comes from a full file system: ENOSPC,
// EDQUOT (a full quota), or an error matching ErrNoSpace. A caller answers
// it as a condition that clears once space returns (a read-only mode, a
// retry), not as a failing disk.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, ErrNoSpace)
}

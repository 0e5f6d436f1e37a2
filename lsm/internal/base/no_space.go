package base

import "github.com/bookie-index/bookie-index/vfs"

// ErrNoSpace matches every error the engine returns because a file system
// is out of space (ENOSPC, or EDQUOT for a full quota): the background
// work that failed is retried, and writes succeed again once it does. Both
// the standard library's and cockroachdb's errors.Is recognise it. It is
// vfs.ErrNoSpace, so that vfs.IsNoSpace, which every store of ours asks,
// recognises the engine's refusals as well as the file system's ENOSPC.
var ErrNoSpace = vfs.ErrNoSpace

// NoSpaceError wraps cause, an out-of-space failure, with msg; the result
// matches ErrNoSpace and still matches cause (errors.Is(err,
// syscall.ENOSPC) holds).
func NoSpaceError(msg string, cause error) error {
	return &noSpaceError{msg: msg, cause: cause}
}

// noSpaceError matches ErrNoSpace through an Is method rather than a mark
// so that the standard library's errors.Is recognises it too.
type noSpaceError struct {
	msg   string
	cause error
}

func (e *noSpaceError) Error() string        { return e.msg + ": " + e.cause.Error() }
func (e *noSpaceError) Unwrap() error        { return e.cause }
func (e *noSpaceError) Is(target error) bool { return target == ErrNoSpace }

package journal

import (
	"os"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Errors. The package's errors wrap these sentinels (errors.Wrapf) or, when
// they have a cause of their own (a file system error), carry them through
// an Is method, so that the standard library's errors.Is and cockroachdb's
// both match them (docs/design.md, "Errors").
var (
	// ErrCorruption: journal bytes that a completed fsync covered do not
	// decode, or a journal is structurally invalid in a way upstream also
	// refuses (a negative record length, a meta-entry its format version
	// cannot hold). The error names the file and the offset.
	ErrCorruption = errors.New("journal corruption")
	// ErrMissingJournal: the journal file a log mark names is gone, so the
	// records after the mark cannot be replayed (upstream's "Recovery log
	// ... is missing").
	ErrMissingJournal = errors.New("journal named by the last log mark is missing")
	// ErrClosed: an add or a checkpoint on a closed journal.
	ErrClosed = errors.New("journal closed")
	// ErrInvalidArgument: bad options, or an add that the format cannot
	// hold (a record longer than 2^31-1 bytes).
	ErrInvalidArgument = errors.New("journal: invalid argument")
	// ErrNoSpace matches every error caused by a full file system (ENOSPC,
	// EDQUOT), which also still matches its cause, and the refusals of a
	// journal that failed so. It is vfs.ErrNoSpace: vfs.IsNoSpace
	// recognises the journal's errors.
	ErrNoSpace = vfs.ErrNoSpace
)

// markedError is err with a sentinel that errors.Is finds through an Is
// method (not cockroachdb's errors.Mark, which the standard library does
// not see); everything else is found through Unwrap.
type markedError struct {
	msg      string
	cause    error
	sentinel error
}

func (e *markedError) Error() string        { return e.msg + ": " + e.cause.Error() }
func (e *markedError) Unwrap() error        { return e.cause }
func (e *markedError) Is(target error) bool { return target == e.sentinel }

// ioError wraps a file system error with msg; a full file system's error
// also matches ErrNoSpace.
func ioError(err error, msg string) error {
	if err == nil {
		return nil
	}
	if vfs.IsNoSpace(err) {
		return &markedError{msg: msg, cause: err, sentinel: ErrNoSpace}
	}
	return errors.Wrap(err, msg)
}

// isNotExist reports whether err says a file does not exist.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

package base

import "github.com/cockroachdb/errors"

// Error sentinels, here and in every package of the repository, are
// errors.New values that errors.Is matches, the standard library's and
// cockroachdb's alike: an error wraps its sentinel (errors.Wrapf(ErrX, ...))
// or, when it has a cause of its own, is Mark(cause, ErrX). Never
// cockroachdb's errors.Mark, whose marks the standard library does not see.
// docs/design.md ("Errors") has the reasons.

// ErrCorruption marks every error caused by bytes on disk that do not decode:
// bad checksums, truncated blocks, impossible lengths. Test with
// errors.Is(err, ErrCorruption).
var ErrCorruption = errors.New("lsm: corruption")

// ErrNotFound is returned by point lookups of an absent key.
var ErrNotFound = errors.New("lsm: not found")

// ErrClosed is returned by every call on a closed object.
var ErrClosed = errors.New("lsm: closed")

// CorruptionErrorf builds an error matching ErrCorruption.
func CorruptionErrorf(format string, args ...interface{}) error {
	return Mark(errors.Newf(format, args...), ErrCorruption)
}

// MarkCorruption makes err (which may come from a decoder that knows nothing
// of ErrCorruption) match ErrCorruption, keeping its message and cause.
func MarkCorruption(err error) error {
	return Mark(err, ErrCorruption)
}

// Mark returns err, with its message and chain unchanged, made to match
// sentinel under errors.Is (the standard library's and cockroachdb's), or
// nil if err is nil. sentinel must be comparable (an errors.New value).
func Mark(err, sentinel error) error {
	if err == nil {
		return nil
	}
	return &markedError{cause: err, sentinel: sentinel}
}

// markedError is Mark's error: errors.Is finds the sentinel through Is and
// everything else through Unwrap.
type markedError struct {
	cause, sentinel error
}

func (e *markedError) Error() string        { return e.cause.Error() }
func (e *markedError) Unwrap() error        { return e.cause }
func (e *markedError) Is(target error) bool { return target == e.sentinel }

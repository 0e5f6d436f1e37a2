package base

import "github.com/cockroachdb/errors"

// ErrCorruption marks every error caused by bytes on disk that do not decode:
// bad checksums, truncated blocks, impossible lengths. Test with
// errors.Is(err, ErrCorruption).
var ErrCorruption = errors.New("lsm: corruption")

// ErrNotFound is returned by point lookups of an absent key.
var ErrNotFound = errors.New("lsm: not found")

// ErrClosed is returned by every call on a closed object.
var ErrClosed = errors.New("lsm: closed")

// CorruptionErrorf builds an error marked with ErrCorruption.
func CorruptionErrorf(format string, args ...interface{}) error {
	return errors.Mark(errors.Newf(format, args...), ErrCorruption)
}

// MarkCorruption marks err (which may come from a decoder that knows nothing
// of ErrCorruption) as corruption, keeping its message and cause.
func MarkCorruption(err error) error {
	if err == nil {
		return nil
	}
	return errors.Mark(err, ErrCorruption)
}

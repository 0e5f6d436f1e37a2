package entrylog

import (
	"fmt"

	"github.com/cockroachdb/errors"
)

// RecordReadError is a failed ReadEntry: the log file and the location
// read, around the error that says what and why. FileOffset names the
// place, so that the service's log holds back repeats of one damaged
// record read by every request (internal/logging). It adds nothing to the
// message.
type RecordReadError struct {
	Path     string
	Location int64
	Err      error
}

func (e *RecordReadError) Error() string { return e.Err.Error() }

// Unwrap returns the error (errors.Is sees ErrCorruption, ErrBadLocation).
func (e *RecordReadError) Unwrap() error { return e.Err }

// FileOffset returns the log's path and the location's offset in it.
func (e *RecordReadError) FileOffset() (string, int64) { return e.Path, LocationOffset(e.Location) }

// Format prints the error's message chain with %v and its details (stack
// traces) with %+v.
func (e *RecordReadError) Format(s fmt.State, verb rune) { errors.FormatError(e, s, verb) }

// FormatError prints nothing of its own: the error names the location.
func (e *RecordReadError) FormatError(errors.Printer) error { return e.Err }

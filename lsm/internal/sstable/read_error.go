package sstable

import (
	"fmt"

	"github.com/cockroachdb/errors"
)

// BlockReadError is a failed read of one block of a table (an I/O error, a
// checksum mismatch, a block that does not decode): the file, the block's
// kind and offset, and the cause. FileOffset names the place, so that the
// service's log holds back repeats of one damaged block read by every
// request (internal/logging).
type BlockReadError struct {
	File   string
	Kind   string // "data", "index", "filter", "top-level"
	Offset uint64
	Err    error
}

func (e *BlockReadError) Error() string { return fmt.Sprint(e) }

// Unwrap returns the cause (errors.Is sees its corruption mark).
func (e *BlockReadError) Unwrap() error { return e.Err }

// FileOffset returns the table's file and the block's offset.
func (e *BlockReadError) FileOffset() (string, int64) { return e.File, int64(e.Offset) }

// Format prints the message chain with %v, and the cause's details
// (stacks) with %+v, as cockroachdb/errors' own wrappers do.
func (e *BlockReadError) Format(s fmt.State, verb rune) { errors.FormatError(e, s, verb) }

// FormatError prints this layer's message; the cause follows.
func (e *BlockReadError) FormatError(p errors.Printer) error {
	p.Printf("sstable: %s: %s block at offset %d", e.File, e.Kind, e.Offset)
	return e.Err
}

// OpenError is a table that failed to open: its footer, properties or
// top-level blocks did not read. FileOffset names the file as a whole
// (offset -1): the table cache retries the open at each read, and each
// failure is the same one.
type OpenError struct {
	File string
	Err  error
}

func (e *OpenError) Error() string { return fmt.Sprint(e) }

// Unwrap returns the cause.
func (e *OpenError) Unwrap() error { return e.Err }

// FileOffset returns the table's file and -1.
func (e *OpenError) FileOffset() (string, int64) { return e.File, -1 }

// Format is as BlockReadError's.
func (e *OpenError) Format(s fmt.State, verb rune) { errors.FormatError(e, s, verb) }

// FormatError prints this layer's message; the cause follows.
func (e *OpenError) FormatError(p errors.Printer) error {
	p.Printf("sstable: opening %s", e.File)
	return e.Err
}

package rocksdb

import (
	"fmt"

	"github.com/cockroachdb/errors"
)

// ErrCorruption marks every error about bytes that do not decode: a bad
// checksum, a truncated block, an impossible varint. errors.Is(err,
// ErrCorruption) (the standard library's or cockroachdb/errors') tells a
// damaged database from an unsupported one.
var ErrCorruption = errors.New("rocksdb: corruption")

// ErrUnsupported marks errors about valid RocksDB data that this reader does
// not read: another comparator, column families other than the default,
// merge operands, blob files, compression types other than none, Snappy and
// LZ4, and so on.
var ErrUnsupported = errors.New("rocksdb: unsupported")

// ErrNotFound is returned by Get for a key that is not visible.
var ErrNotFound = errors.New("rocksdb: not found")

// markedError is an error of one of the kinds above. Its Is method makes
// the standard library's errors.Is match the kind through any wrapping.
type markedError struct {
	msg  string
	kind error
}

func (e *markedError) Error() string { return e.msg }

func (e *markedError) Is(target error) bool { return target == e.kind }

// corruptf returns an error of kind ErrCorruption. Callers name the file,
// and the block handle and offset where there is one, in the message.
func corruptf(format string, args ...interface{}) error {
	return &markedError{msg: "rocksdb: corruption: " + fmt.Sprintf(format, args...), kind: ErrCorruption}
}

// unsupportedf returns an error of kind ErrUnsupported.
func unsupportedf(format string, args ...interface{}) error {
	return &markedError{msg: "rocksdb: unsupported: " + fmt.Sprintf(format, args...), kind: ErrUnsupported}
}

// errorsIs is errors.Is, for files that import no errors package.
func errorsIs(err, target error) bool { return errors.Is(err, target) }

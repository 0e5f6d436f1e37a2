package rocksdb

import (
	"github.com/bookie-index/bookie-index/lsm/internal/base"
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

// corruptf returns an error matching ErrCorruption (through base.Mark, so
// that the standard library's errors.Is sees it too). Callers name the
// file, and the block handle and offset where there is one, in the message.
func corruptf(format string, args ...interface{}) error {
	return base.Mark(errors.Newf("rocksdb: corruption: "+format, args...), ErrCorruption)
}

// unsupportedf returns an error matching ErrUnsupported.
func unsupportedf(format string, args ...interface{}) error {
	return base.Mark(errors.Newf("rocksdb: unsupported: "+format, args...), ErrUnsupported)
}

// mergeRecordError refuses a merge record (the only kind of record a table
// with a merge operator adds): its value depends on the operator, which this
// reader does not apply. It names the record's key, hex-encoded.
func mergeRecordError(file string, h blockHandle, offset int, key []byte) error {
	return unsupportedf("%s: data %s: entry at offset %d: merge record for key %x (merge operands are not read)", file, h, offset, key)
}

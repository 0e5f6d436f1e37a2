package rocksdb

import (
	"bytes"
	"encoding/binary"
)

// Value types of RocksDB's internal keys (db/dbformat.h) that this reader
// understands. They are also the record tags of a WriteBatch.
const (
	typeDeletion       = 0x0
	typeValue          = 0x1
	typeMerge          = 0x2
	typeSingleDeletion = 0x7
	typeRangeDeletion  = 0xf
)

// maxSequence is RocksDB's kMaxSequenceNumber (56 bits). A table bound with
// this sequence and typeRangeDeletion is a range tombstone's exclusive end.
const maxSequence = 1<<56 - 1

// internalKey is a decoded RocksDB internal key: the user key followed by
// eight little-endian bytes holding seq<<8 | type.
type internalKey struct {
	user []byte
	seq  uint64
	kind uint8
}

// parseInternalKey splits an encoded internal key; ok is false if it is
// shorter than its eight-byte trailer.
func parseInternalKey(b []byte) (internalKey, bool) {
	if len(b) < 8 {
		return internalKey{}, false
	}
	n := len(b) - 8
	t := binary.LittleEndian.Uint64(b[n:])
	return internalKey{user: b[:n:n], seq: t >> 8, kind: uint8(t)}, true
}

// compareInternal orders internal keys as RocksDB's InternalKeyComparator
// with the bytewise comparator does: user key ascending, then sequence
// number descending, then type descending (newest first).
func compareInternal(a, b internalKey) int {
	if c := bytes.Compare(a.user, b.user); c != 0 {
		return c
	}
	switch {
	case a.seq > b.seq:
		return -1
	case a.seq < b.seq:
		return 1
	case a.kind > b.kind:
		return -1
	case a.kind < b.kind:
		return 1
	}
	return 0
}

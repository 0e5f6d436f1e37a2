package batch

import (
	"bytes"
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// Reader walks the operations of an encoded batch in order without
// allocating. The key and value slices it returns alias the encoding.
//
// Get one from Decode (for bytes read from a WAL) or Batch.Reader. The zero
// Reader holds no operations.
type Reader struct {
	// repr is the whole encoding, header included.
	repr []byte
	// offset is where the next operation starts.
	offset int
	// index is the number of operations returned so far.
	index uint32
	// count is the number of operations in the batch.
	count  uint32
	seqNum base.SeqNum
}

// Decode validates an encoded batch, header and every operation (the rules
// are in the package doc), and returns a Reader over it. The error, if any,
// is marked base.ErrCorruption. Validating everything up front means a
// damaged batch is never partly applied. repr must not be modified while the
// Reader is in use.
func Decode(repr []byte) (Reader, error) {
	if len(repr) < HeaderSize {
		return Reader{}, base.CorruptionErrorf("batch: %d bytes, shorter than the %d-byte header",
			len(repr), HeaderSize)
	}
	r := Reader{
		repr:   repr,
		offset: HeaderSize,
		seqNum: base.SeqNum(binary.LittleEndian.Uint64(repr[seqNumOffset:])),
		count:  binary.LittleEndian.Uint32(repr[countOffset:]),
	}
	// Written as a subtraction so that neither side can overflow.
	if r.seqNum > base.SeqNumMax || (r.count > 0 && uint64(r.count-1) > uint64(base.SeqNumMax-r.seqNum)) {
		return Reader{}, base.CorruptionErrorf("batch: seqnum %d with %d operations exceeds the largest seqnum %d",
			r.seqNum, r.count, base.SeqNumMax)
	}
	// Each operation takes at least two bytes (kind and key length), which
	// rejects an absurd count before walking.
	if uint64(r.count) > uint64(len(repr)-HeaderSize)/2 {
		return Reader{}, base.CorruptionErrorf("batch: header counts %d operations but only %d bytes follow it",
			r.count, len(repr)-HeaderSize)
	}
	off := HeaderSize
	for i := uint32(0); i < r.count; i++ {
		var err error
		if _, _, _, off, err = decodeOp(repr, off, i); err != nil {
			return Reader{}, err
		}
	}
	if off != len(repr) {
		return Reader{}, base.CorruptionErrorf("batch: %d bytes after the last of %d operations (offset %d)",
			len(repr)-off, r.count, off)
	}
	return r, nil
}

// SeqNum returns the sequence number of the first operation; operation i
// (counting from 0) has SeqNum()+i.
func (r *Reader) SeqNum() base.SeqNum { return r.seqNum }

// Count returns the number of operations in the batch.
func (r *Reader) Count() int { return int(r.count) }

// Next returns the next operation. ok is false once every operation has been
// returned. A Reader from Decode or Batch.Reader returns no error unless its
// bytes were modified after it was made; errors are marked
// base.ErrCorruption and end the iteration.
func (r *Reader) Next() (kind base.Kind, key, value []byte, ok bool, err error) {
	if r.index >= r.count {
		return 0, nil, nil, false, nil
	}
	kind, key, value, next, err := decodeOp(r.repr, r.offset, r.index)
	if err != nil {
		r.index = r.count
		return 0, nil, nil, false, err
	}
	r.offset = next
	r.index++
	return kind, key, value, true, nil
}

// decodeOp decodes the operation with the given index starting at
// repr[off:] and returns it with the offset just past it. It checks every
// rule of the package doc that concerns a single operation.
func decodeOp(repr []byte, off int, index uint32) (kind base.Kind, key, value []byte, next int, err error) {
	if off >= len(repr) {
		return 0, nil, nil, 0, base.CorruptionErrorf("batch: op %d at offset %d: truncated before its kind byte",
			index, off)
	}
	kind = base.Kind(repr[off])
	switch kind {
	case base.KindSet, base.KindDelete, base.KindRangeDelete, base.KindMerge:
	default:
		return 0, nil, nil, 0, base.CorruptionErrorf("batch: op %d at offset %d: unknown kind %d",
			index, off, repr[off])
	}
	key, next, err = decodeBytes(repr, off+1, MaxKeySize, index, kind, "key")
	if err != nil {
		return 0, nil, nil, 0, err
	}
	if kind == base.KindDelete {
		return kind, key, nil, next, nil
	}
	limit, what := MaxValueSize, "value"
	if kind == base.KindRangeDelete {
		limit, what = MaxKeySize, "range end"
	}
	value, next, err = decodeBytes(repr, next, limit, index, kind, what)
	if err != nil {
		return 0, nil, nil, 0, err
	}
	if kind == base.KindRangeDelete && bytes.Compare(key, value) >= 0 {
		return 0, nil, nil, 0, base.CorruptionErrorf("batch: op %d at offset %d: range deletion start %q is not before end %q",
			index, off, key, value)
	}
	return kind, key, value, next, nil
}

// decodeBytes decodes a uvarint length at repr[off:] and the bytes it
// counts, which must number at most limit. The other arguments name the
// field in errors.
func decodeBytes(
	repr []byte, off int, limit int, index uint32, kind base.Kind, what string,
) (b []byte, next int, err error) {
	// Lengths under 128, one byte, are the engine's (16-byte keys, 8-byte
	// values): read them without the general decoder.
	if off < len(repr) && repr[off] < 0x80 {
		start, end := off+1, off+1+int(repr[off])
		if end <= len(repr) && int(repr[off]) <= limit {
			return repr[start:end:end], end, nil
		}
	}
	n, w := binary.Uvarint(repr[off:])
	switch {
	case w == 0:
		return nil, 0, base.CorruptionErrorf("batch: op %d (%s) at offset %d: %s length truncated",
			index, kind, off, what)
	case w < 0:
		return nil, 0, base.CorruptionErrorf("batch: op %d (%s) at offset %d: %s length overflows 64 bits",
			index, kind, off, what)
	case w > 1 && repr[off+w-1] == 0:
		// A minimal uvarint never ends in a zero group.
		return nil, 0, base.CorruptionErrorf("batch: op %d (%s) at offset %d: %s length is not minimally encoded",
			index, kind, off, what)
	case n > uint64(limit):
		return nil, 0, base.CorruptionErrorf("batch: op %d (%s) at offset %d: %s length %d exceeds the limit %d",
			index, kind, off, what, n, limit)
	}
	start := off + w
	if n > uint64(len(repr)-start) {
		return nil, 0, base.CorruptionErrorf("batch: op %d (%s) at offset %d: %s of %d bytes runs past the end (%d bytes left)",
			index, kind, off, what, n, len(repr)-start)
	}
	end := start + int(n)
	return repr[start:end:end], end, nil
}

package batch

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Persisted limits and sizes (see the package doc). Do not change HeaderSize;
// the two limits may be raised but never lowered.
const (
	// HeaderSize is the size of the batch header: seqnum (8 bytes) and count
	// (4 bytes).
	HeaderSize = 12
	// MaxKeySize is the largest key, and the largest RangeDelete end, a batch
	// accepts. Engine keys are 16 bytes; 64 KiB leaves room for any other use
	// while keeping a single key far below a table block.
	MaxKeySize = 64 << 10
	// MaxValueSize is the largest Set value a batch accepts. Engine values
	// are 8 bytes; the limit exists so that a damaged length cannot claim
	// gigabytes and so that one value never dominates a memtable.
	MaxValueSize = 4 << 20
)

// Offsets of the header fields.
const (
	seqNumOffset = 0
	countOffset  = 8
)

// initialSize is the first allocation of a batch: the header and a few
// dozen 16-byte-key operations, so small batches allocate once.
const initialSize = 1 << 10

// maxRetainedSize bounds the buffer Reset keeps. A batch that once held a
// large import should not pin that memory for the life of a pooled Batch,
// but a checkpoint's batch, committed every 100,000 locations (2.7 MB,
// entrylocation's MaxBatchOps), must keep its buffer: growing it again for
// each commit cost 71 ns of CPU per Set against 18 (1 MiB before; go test
// ./lsm/internal/batch -bench SetReset).
const maxRetainedSize = 8 << 20

// Batch accumulates operations in their encoded form. The zero Batch is an
// empty batch ready for use.
//
// Keys and values are copied in, so callers may reuse their slices as soon
// as a method returns. An operation that breaks a limit (see the package
// doc) is not recorded: the batch keeps the first such error, reported by
// Err, and ignores every later operation until Reset. The committer must
// refuse a batch whose Err is not nil.
type Batch struct {
	// data is the encoding: the header (written by Repr) followed by the
	// operations. It is empty until the first operation or Repr.
	data []byte
	// count is the number of operations in data.
	count uint32
	// seqNum is the sequence number of the first operation.
	seqNum base.SeqNum
	// err is the first invalid operation's error.
	err error
	// merges is the number of Merge operations in data, so that the
	// committer can refuse them without decoding when the DB has no merge
	// operator.
	merges uint32
}

// Set records that key maps to value.
func (b *Batch) Set(key, value []byte) {
	b.addWithValue(base.KindSet, key, value, "value")
}

// Merge records a merge operand for key: the DB's merge operator combines
// it with the older versions of key when the key is read or compacted.
func (b *Batch) Merge(key, operand []byte) {
	if b.addWithValue(base.KindMerge, key, operand, "operand") {
		b.merges++
	}
}

// addWithValue records an operation of a key and a value (Set, Merge),
// checked against MaxKeySize and MaxValueSize, and reports whether it was
// recorded. what names the value argument in the error.
func (b *Batch) addWithValue(kind base.Kind, key, value []byte, what string) bool {
	if !b.checkKey(kind, key, "key") {
		return false
	}
	if len(value) > MaxValueSize {
		b.fail(errors.Newf("batch: %s (op %d): %s of %d bytes exceeds MaxValueSize (%d)",
			errors.Safe(opName(kind)), b.count, errors.Safe(what), len(value), MaxValueSize))
		return false
	}
	b.appendOp(kind, key, value, true /* hasValue */)
	return true
}

// Delete records a point tombstone for key.
func (b *Batch) Delete(key []byte) {
	if !b.checkKey(base.KindDelete, key, "key") {
		return
	}
	b.appendOp(base.KindDelete, key, nil, false /* hasValue */)
}

// DeleteRange records a range tombstone deleting every user key k with
// start <= k < end. An empty range (start == end) deletes nothing and is
// not recorded, as RocksDB and Pebble take it; an end before the start is
// an error.
func (b *Batch) DeleteRange(start, end []byte) {
	if !b.checkKey(base.KindRangeDelete, start, "start") || !b.checkKey(base.KindRangeDelete, end, "end") {
		return
	}
	switch c := bytes.Compare(start, end); {
	case c == 0:
		return
	case c > 0:
		b.fail(errors.Newf("batch: DeleteRange (op %d): end %q is before start %q",
			b.count, end, start))
		return
	}
	b.appendOp(base.KindRangeDelete, start, end, true /* hasValue */)
}

// checkKey reports whether key fits MaxKeySize and the batch can take one
// more operation, recording an error otherwise. what names the argument.
func (b *Batch) checkKey(kind base.Kind, key []byte, what string) bool {
	if b.err != nil {
		return false
	}
	if len(key) > MaxKeySize {
		b.fail(errors.Newf("batch: %s (op %d): %s of %d bytes exceeds MaxKeySize (%d)",
			errors.Safe(opName(kind)), b.count, errors.Safe(what), len(key), MaxKeySize))
		return false
	}
	if b.count == math.MaxUint32 {
		b.fail(errors.Newf("batch: %s: batch already holds %d operations, the most a header can count",
			errors.Safe(opName(kind)), b.count))
		return false
	}
	return true
}

// opName names an operation kind as the Batch method that records it.
func opName(kind base.Kind) string {
	switch kind {
	case base.KindSet:
		return "Set"
	case base.KindDelete:
		return "Delete"
	case base.KindRangeDelete:
		return "DeleteRange"
	case base.KindMerge:
		return "Merge"
	}
	return kind.String()
}

func (b *Batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// appendOp encodes one operation after the existing ones.
func (b *Batch) appendOp(kind base.Kind, key, value []byte, hasValue bool) {
	need := 1 + 2*binary.MaxVarintLen32 + len(key) + len(value)
	if len(b.data) == 0 {
		b.data = b.allocate(HeaderSize + need)
	} else if cap(b.data)-len(b.data) < need {
		// Double: append grows large slices by a quarter, which copied a
		// batch of 1M operations 5.7 times over (BenchmarkSetLarge).
		grown := make([]byte, len(b.data), max(2*cap(b.data), len(b.data)+need))
		copy(grown, b.data)
		b.data = grown
	}
	if len(key) < 0x80 && len(value) < 0x80 {
		// One-byte lengths (every engine key and value): the room is
		// there, so fill it in place.
		n := len(b.data)
		size := 2 + len(key)
		if hasValue {
			size += 1 + len(value)
		}
		b.data = b.data[:n+size]
		d := b.data[n:]
		d[0], d[1] = byte(kind), byte(len(key))
		copy(d[2:], key)
		if hasValue {
			d[2+len(key)] = byte(len(value))
			copy(d[3+len(key):], value)
		}
		b.count++
		return
	}
	b.data = append(b.data, byte(kind))
	b.data = binary.AppendUvarint(b.data, uint64(len(key)))
	b.data = append(b.data, key...)
	if hasValue {
		b.data = binary.AppendUvarint(b.data, uint64(len(value)))
		b.data = append(b.data, value...)
	}
	b.count++
}

// allocate returns a zeroed header with room for at least n bytes, reusing
// the retained buffer when it is large enough.
func (b *Batch) allocate(n int) []byte {
	buf := b.data[:0]
	if cap(buf) < max(n, HeaderSize) {
		buf = make([]byte, 0, max(n, initialSize))
	}
	var header [HeaderSize]byte
	return append(buf, header[:]...)
}

// Count returns the number of operations recorded.
func (b *Batch) Count() int { return int(b.count) }

// HasMerge reports whether the batch holds a Merge operation.
func (b *Batch) HasMerge() bool { return b.merges > 0 }

// Empty reports whether the batch holds no operations.
func (b *Batch) Empty() bool { return b.count == 0 }

// Len returns the size of the encoding in bytes, header included.
func (b *Batch) Len() int { return max(len(b.data), HeaderSize) }

// Err returns the error of the first operation the batch refused, or nil.
func (b *Batch) Err() error { return b.err }

// SetSeqNum assigns the sequence number of the first operation; operation i
// gets seq+i. REQUIRES: seq+Count()-1 <= base.SeqNumMax (Decode rejects a
// batch that breaks it).
func (b *Batch) SetSeqNum(seq base.SeqNum) { b.seqNum = seq }

// SeqNum returns the sequence number of the first operation (0 until
// SetSeqNum).
func (b *Batch) SeqNum() base.SeqNum { return b.seqNum }

// Repr returns the encoding, header included, ready to be written as a WAL
// record. The slice aliases the batch: it is valid until the next call that
// modifies the batch and must not be modified. When Err is not nil the
// encoding holds only the operations recorded before the error.
func (b *Batch) Repr() []byte {
	if len(b.data) == 0 {
		b.data = b.allocate(HeaderSize)
	}
	binary.LittleEndian.PutUint64(b.data[seqNumOffset:], uint64(b.seqNum))
	binary.LittleEndian.PutUint32(b.data[countOffset:], b.count)
	return b.data
}

// Reader returns a Reader over the batch's operations. It skips the
// validation Decode does, since the Batch methods enforce the same rules.
// The batch must not be modified while the Reader is in use.
func (b *Batch) Reader() Reader {
	r := Reader{seqNum: b.seqNum, count: b.count, offset: HeaderSize}
	if len(b.data) > 0 {
		r.repr = b.data
	}
	return r
}

// Reset empties the batch and clears its error and sequence number, keeping
// its buffer unless that grew beyond maxRetainedSize.
func (b *Batch) Reset() {
	data := b.data[:0]
	if cap(data) > maxRetainedSize {
		data = nil
	}
	*b = Batch{data: data}
}

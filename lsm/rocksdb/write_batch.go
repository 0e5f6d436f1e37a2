package rocksdb

import "encoding/binary"

// WriteBatch record tags (db/write_batch.cc) beyond the value types they
// share with internal keys.
const (
	batchLogData         = 0x3
	batchCFDeletion      = 0x4
	batchCFValue         = 0x5
	batchCFMerge         = 0x6
	batchCFSingleDelete  = 0x8
	batchNoop            = 0xd
	batchCFRangeDeletion = 0xe
)

// batchHeaderSize is the sequence number (8) and count (4) before the records.
const batchHeaderSize = 12

// batchOp is one sequence-consuming operation of a WriteBatch: kind is
// typeValue, typeDeletion, typeSingleDeletion or typeRangeDeletion (value is
// then the exclusive end key).
type batchOp struct {
	seq        uint64
	cf         uint32
	kind       uint8
	key, value []byte
}

// decodeBatch calls fn for each operation of an encoded WriteBatch, with the
// sequence number RocksDB assigns it: the batch's sequence plus the number
// of operations before it. name and off locate the batch for errors. Slices
// passed to fn alias data.
func decodeBatch(name string, off int64, data []byte, fn func(op batchOp) error) error {
	if len(data) < batchHeaderSize {
		return corruptf("%s: offset %d: write batch of %d bytes is shorter than its header", name, off, len(data))
	}
	seq := binary.LittleEndian.Uint64(data)
	count := binary.LittleEndian.Uint32(data[8:])
	d := decoder{b: data[batchHeaderSize:], off: batchHeaderSize}
	var n uint32
	for !d.empty() {
		recOff := d.off
		tag := d.byte1()
		op := batchOp{kind: tag}
		switch tag {
		case typeValue, typeDeletion, typeSingleDeletion, typeRangeDeletion:
		case batchCFValue, batchCFDeletion, batchCFSingleDelete, batchCFRangeDeletion:
			op.cf = d.uvarint32()
			switch tag {
			case batchCFValue:
				op.kind = typeValue
			case batchCFDeletion:
				op.kind = typeDeletion
			case batchCFSingleDelete:
				op.kind = typeSingleDeletion
			default:
				op.kind = typeRangeDeletion
			}
		case batchLogData:
			d.slice() // a blob for the WAL's readers; not a key
			if !d.ok() {
				return corruptf("%s: offset %d: write batch record at %d: bad log data", name, off, recOff)
			}
			continue
		case batchNoop:
			continue
		case typeMerge, batchCFMerge:
			if tag == batchCFMerge {
				d.uvarint32()
			}
			key := d.slice()
			if !d.ok() {
				return corruptf("%s: offset %d: write batch record at %d (tag %#x) is truncated", name, off, recOff, tag)
			}
			return unsupportedf("%s: offset %d: write batch record at %d: merge record for key %x (merge operands are not read)", name, off, recOff, key)
		default:
			return unsupportedf("%s: offset %d: write batch record at %d: tag %#x (not Put, Delete, SingleDelete or DeleteRange)", name, off, recOff, tag)
		}
		op.key = d.slice()
		if op.kind == typeValue || op.kind == typeRangeDeletion {
			op.value = d.slice()
		}
		if !d.ok() {
			return corruptf("%s: offset %d: write batch record at %d (tag %#x) is truncated", name, off, recOff, tag)
		}
		op.seq = seq + uint64(n)
		n++
		if err := fn(op); err != nil {
			return err
		}
	}
	if n != count {
		return corruptf("%s: offset %d: write batch holds %d operations, its header says %d", name, off, n, count)
	}
	return nil
}

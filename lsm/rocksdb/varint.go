package rocksdb

import "encoding/binary"

// decoder reads the varints and length-prefixed strings of RocksDB's
// encodings (util/coding.h) from a byte slice. The first failure sticks:
// later reads return zero values and ok() stays false, so a decoder of a
// record checks once at the end or where a value steers decoding.
type decoder struct {
	b   []byte
	off int // bytes consumed, for error messages
	bad bool
}

func (d *decoder) ok() bool { return !d.bad }

func (d *decoder) empty() bool { return len(d.b) == 0 }

func (d *decoder) uvarint64() uint64 {
	if d.bad {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	d.off += n
	return v
}

func (d *decoder) uvarint32() uint32 {
	v := d.uvarint64()
	if v > 1<<32-1 {
		d.bad = true
		return 0
	}
	return uint32(v)
}

// varsigned64 reads a zigzag-encoded signed varint (PutVarsignedint64).
func (d *decoder) varsigned64() int64 {
	u := d.uvarint64()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) bytes(n uint64) []byte {
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	d.off += int(n)
	return v
}

// slice reads a varint32 length and that many bytes (GetLengthPrefixedSlice).
func (d *decoder) slice() []byte { return d.bytes(uint64(d.uvarint32())) }

func (d *decoder) byte1() byte {
	b := d.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

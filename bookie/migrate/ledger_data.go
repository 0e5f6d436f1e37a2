package migrate

import (
	"encoding/binary"

	"github.com/cockroachdb/errors"
)

// upstreamLedgerData is upstream's LedgerData message (proto2, from
// DbLedgerStorageDataFormats.proto), the value of BookKeeper's ledgers
// database:
//
//	message LedgerData {
//	    required bool  exists      = 1;
//	    required bool  fenced      = 2;
//	    required bytes masterKey   = 3;
//	    optional bytes explicitLac = 4;
//	    optional bool  limbo       = 5;
//	}
//
// It is decoded by hand: five fields do not justify a protobuf module.
type upstreamLedgerData struct {
	exists, fenced, limbo bool
	masterKey             []byte
	explicitLAC           []byte // nil if absent; may be empty but present
}

// Protobuf wire types (encoding.md of the protobuf project).
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// decodeUpstreamLedgerData decodes b as a LedgerData message: fields in
// any order, the last of a repeated scalar wins (protobuf's rule), unknown
// fields skipped by their wire type. A missing required field, a field of
// the wrong wire type, a group or a truncated field is an error naming the
// offset. The byte slices alias b.
func decodeUpstreamLedgerData(b []byte) (upstreamLedgerData, error) {
	var d upstreamLedgerData
	var seen [4]bool // exists, fenced, masterKey (1..3)
	off := 0
	for off < len(b) {
		tag, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return d, errors.Newf("LedgerData: bad field tag at offset %d", off)
		}
		fieldOff := off
		off += n
		field, wire := tag>>3, tag&7
		if field == 0 {
			return d, errors.Newf("LedgerData: field number 0 at offset %d", fieldOff)
		}
		want := -1
		switch field {
		case 1, 2, 5:
			want = wireVarint
		case 3, 4:
			want = wireBytes
		}
		if want >= 0 && int(wire) != want {
			return d, errors.Newf("LedgerData: field %d has wire type %d, want %d (offset %d)", field, wire, want, fieldOff)
		}
		switch wire {
		case wireVarint:
			v, n := binary.Uvarint(b[off:])
			if n <= 0 {
				return d, errors.Newf("LedgerData: field %d: bad varint at offset %d", field, off)
			}
			off += n
			switch field {
			case 1:
				d.exists = v != 0
			case 2:
				d.fenced = v != 0
			case 5:
				d.limbo = v != 0
			}
		case wireBytes:
			l, n := binary.Uvarint(b[off:])
			if n <= 0 || l > uint64(len(b)-off-n) {
				return d, errors.Newf("LedgerData: field %d: bad length at offset %d", field, off)
			}
			off += n
			v := b[off : off+int(l)]
			off += int(l)
			switch field {
			case 3:
				d.masterKey = v
			case 4:
				d.explicitLAC = v
			}
		case wireFixed64, wireFixed32:
			size := 8
			if wire == wireFixed32 {
				size = 4
			}
			if len(b)-off < size {
				return d, errors.Newf("LedgerData: field %d: truncated at offset %d", field, off)
			}
			off += size
		default:
			return d, errors.Newf("LedgerData: field %d: unsupported wire type %d at offset %d", field, wire, fieldOff)
		}
		if field <= 3 {
			seen[field] = true
		}
	}
	for f, name := range [...]string{1: "exists", 2: "fenced", 3: "masterKey"} {
		if f > 0 && !seen[f] {
			return d, errors.Newf("LedgerData: required field %s (%d) missing", name, f)
		}
	}
	return d, nil
}

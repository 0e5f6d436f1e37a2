package golden

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Dump prints bytes as an annotated hex dump, one field per line:
//
//	offset  hex bytes (16 a line)                          field
//	    12  9c 02                                            unshared=284
//
// The caller walks the bytes field by field with its own reading of the
// format (not the package's decoder, so that the dump checks the encoding
// independently) and names each field. Reading past the end records the
// shortfall in the dump instead of failing, and later reads return zero.
type Dump struct {
	b     []byte
	off   int
	base  int
	lines []string
	short bool
}

// bytesPerLine and maxLines bound the hex of one field: a longer field
// shows its first maxLines lines and how many bytes it elides (its checksum,
// dumped elsewhere, covers them).
const (
	bytesPerLine = 16
	maxLines     = 4
)

// NewDump starts a dump of b at offset 0.
func NewDump(b []byte) *Dump { return &Dump{b: b} }

// SetBase makes printed offsets start at base (the dumped bytes' position in
// their file).
func (d *Dump) SetBase(base int) { d.base = base }

// Offset returns the offset of the next field within the dumped bytes.
func (d *Dump) Offset() int { return d.off }

// Remaining returns the bytes not yet dumped.
func (d *Dump) Remaining() int { return len(d.b) - d.off }

// Peek returns the next n bytes (fewer at the end) without dumping them.
func (d *Dump) Peek(n int) []byte { return d.b[d.off:min(d.off+n, len(d.b))] }

// Note adds a line without bytes: a heading or an explanation.
func (d *Dump) Note(format string, args ...any) {
	d.lines = append(d.lines, "# "+fmt.Sprintf(format, args...))
}

// Bytes dumps the next n bytes as one field labelled by format and args,
// and returns them.
func (d *Dump) Bytes(n int, format string, args ...any) []byte {
	label := fmt.Sprintf(format, args...)
	if d.short {
		return nil
	}
	if n < 0 || d.off+n > len(d.b) {
		d.lines = append(d.lines, fmt.Sprintf("%6d  !! %s: %d bytes wanted, %d left", d.base+d.off, label, n, len(d.b)-d.off))
		d.short = true
		return nil
	}
	field := d.b[d.off : d.off+n]
	d.emit(field, label)
	d.off += n
	return field
}

func (d *Dump) emit(field []byte, label string) {
	at := d.base + d.off
	if len(field) == 0 {
		d.lines = append(d.lines, fmt.Sprintf("%6d  %-47s  %s", at, "(empty)", label))
		return
	}
	if len(field) > bytesPerLine && allEqual(field) {
		d.lines = append(d.lines, fmt.Sprintf("%6d  %-47s  %s", at, fmt.Sprintf("%02x × %d", field[0], len(field)), label))
		return
	}
	for i := 0; i < len(field); i += bytesPerLine {
		chunk := field[i:min(i+bytesPerLine, len(field))]
		hex := strings.TrimSpace(fmt.Sprintf("% x", chunk))
		if i == 0 {
			d.lines = append(d.lines, fmt.Sprintf("%6d  %-47s  %s", at, hex, label))
		} else if i/bytesPerLine == maxLines {
			d.lines = append(d.lines, fmt.Sprintf("%6d  ... %d more bytes", at+i, len(field)-i))
			return
		} else {
			d.lines = append(d.lines, fmt.Sprintf("%6d  %s", at+i, hex))
		}
	}
}

func allEqual(b []byte) bool {
	for _, c := range b[1:] {
		if c != b[0] {
			return false
		}
	}
	return true
}

// Uvarint dumps an unsigned varint labelled name=value and returns it.
func (d *Dump) Uvarint(name string) uint64 {
	return dumpVarint(d, name, "uvarint", binary.Uvarint)
}

// Varint dumps a signed (zig-zag) varint labelled name=value and returns it.
func (d *Dump) Varint(name string) int64 {
	return dumpVarint(d, name, "varint", binary.Varint)
}

// dumpVarint dumps the varint decode reads (kind names it in the line of
// a malformed one).
func dumpVarint[T int64 | uint64](d *Dump, name, kind string, decode func([]byte) (T, int)) T {
	if d.short {
		return 0
	}
	v, n := decode(d.b[d.off:])
	if n <= 0 {
		d.lines = append(d.lines, fmt.Sprintf("%6d  !! %s: malformed %s", d.base+d.off, name, kind))
		d.short = true
		return 0
	}
	d.Bytes(n, "%s=%d", name, v)
	return v
}

// Uint dumps a fixed-width unsigned integer of size bytes (1, 2, 4 or 8) in
// byte order order, labelled name=value (decimal and, above 9, hex).
func (d *Dump) Uint(size int, order binary.ByteOrder, name string) uint64 {
	if d.short || d.off+size > len(d.b) {
		d.Bytes(size, "%s", name)
		return 0
	}
	b := d.b[d.off : d.off+size]
	var v uint64
	switch size {
	case 1:
		v = uint64(b[0])
	case 2:
		v = uint64(order.Uint16(b))
	case 4:
		v = uint64(order.Uint32(b))
	case 8:
		v = order.Uint64(b)
	default:
		panic("golden: bad integer size")
	}
	if v > 9 {
		d.Bytes(size, "%s=%d (%#x)", name, v, v)
	} else {
		d.Bytes(size, "%s=%d", name, v)
	}
	return v
}

// String returns the dump, and a line for bytes left undumped.
func (d *Dump) String() string {
	lines := d.lines
	if len(d.b) == 0 && len(lines) == 0 {
		return "(no bytes)"
	}
	if !d.short && d.off < len(d.b) {
		lines = append(lines, fmt.Sprintf("%6d  !! %d bytes not dumped", d.base+d.off, len(d.b)-d.off))
	}
	return strings.Join(lines, "\n")
}

// Printable renders b as a string when it is printable ASCII and as hex
// otherwise, for listings of keys and values.
func Printable(b []byte) string {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("0x%x", b)
		}
	}
	return fmt.Sprintf("%q", b)
}

// Short is Printable for up to 32 bytes; above, the length and the
// CRC-32C of the bytes, which a listing compares as well as the bytes.
func Short(b []byte) string {
	if len(b) > 32 {
		return fmt.Sprintf("(%d bytes, crc32c %08x)", len(b), crc32.Checksum(b, castagnoli))
	}
	return Printable(b)
}

package block

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// TestBlockFormat pins the block encoding with golden files: each case
// builds a block from fixed entries and prints it as a hex dump annotated by
// dumpBlock, which reads the bytes with its own decoding of the format in
// docs/format.md (not Iter's), then lists what Iter reads back. A change to
// the encoding or a flag bit changes the dump; a reader change that misreads
// the bytes changes the listing. Rewrite with -update and review the diff.
//
//	build [restart-interval=N] [prefix] [value-prefixes] [compact]
//	<user key> <KIND>.<seqnum> <value>      (one line per entry; see golden.ParseBytes)
//
//	build-generated n=N value-size=V [restart-interval=N] ...
//	(n entries "key%06d" → V-byte values; the entries are dumped as one field)
func TestBlockFormat(t *testing.T) {
	golden.Run(t, "testdata/block_format", func(t *testing.T, c *golden.Case) string {
		b := NewBuilder(int(c.Int(t, "restart-interval", 1)), c.Has("prefix"))
		b.ShareValuePrefixes = c.Has("value-prefixes")
		b.CompactEntries = c.Has("compact")
		summary := false
		switch c.Cmd {
		case "build":
			for _, l := range c.Lines() {
				e, err := parseEntry(l)
				if err != nil {
					t.Fatalf("%s: %v", c.Pos, err)
				}
				b.Add(e.key, e.trailer, e.value)
			}
		case "build-generated":
			value := make([]byte, c.Int(t, "value-size", 0))
			for i := range value {
				value[i] = byte(i)
			}
			for i := 0; i < int(c.Int(t, "n", 0)); i++ {
				b.Add(fmt.Appendf(nil, "key%06d", i), base.MakeTrailer(1, base.KindSet), value)
			}
			summary = true
		default:
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		data := b.Finish()
		var out strings.Builder
		fmt.Fprintf(&out, "%d bytes\n", len(data))
		out.WriteString(dumpBlock(data, summary))
		out.WriteString("\n")
		out.WriteString(listBlock(data, summary))
		return out.String()
	})
}

// parseEntry parses "<user key> <KIND>.<seqnum> <value>".
func parseEntry(l string) (entry, error) {
	f := strings.Fields(l)
	if len(f) != 3 {
		return entry{}, fmt.Errorf("entry %q: want <key> <KIND>.<seqnum> <value>", l)
	}
	key, err := golden.ParseBytes(f[0])
	if err != nil {
		return entry{}, err
	}
	value, err := golden.ParseBytes(f[2])
	if err != nil {
		return entry{}, err
	}
	trailer, err := base.ParseTrailer(f[1])
	if err != nil {
		return entry{}, err
	}
	return entry{key: key, trailer: trailer, value: value}, nil
}

func formatTrailer(t base.Trailer) string {
	return fmt.Sprintf("%d (%s.%d)", uint64(t), t.Kind(), t.SeqNum())
}

// Flag bits of the restart count, as docs/format.md gives them. They are
// spelled out here, not taken from the package's constants, so that a
// changed constant fails the test.
const (
	goldenValuePrefixes = 1 << 31
	goldenU16Restarts   = 1 << 30
	goldenCompact       = 1 << 29
)

// dumpBlock annotates a block's bytes field by field. With summary, the
// entries are one field.
func dumpBlock(data []byte, summary bool) string {
	d := golden.NewDump(data)
	if len(data) < 4 {
		d.Bytes(len(data), "block too short for a restart count")
		return d.String()
	}
	count := binary.LittleEndian.Uint32(data[len(data)-4:])
	r := int(count & (1<<29 - 1))
	width := 4
	if count&goldenU16Restarts != 0 {
		width = 2
	}
	shareValues := count&goldenValuePrefixes != 0
	compact := count&goldenCompact != 0
	restartsOff := len(data) - 4 - width*r
	if restartsOff < 0 {
		d.Bytes(len(data), "restart count claims more restarts than fit")
		return d.String()
	}
	restarts := make([]int, r)
	isRestart := map[int]int{}
	for i := range restarts {
		p := data[restartsOff+width*i:]
		if width == 2 {
			restarts[i] = int(binary.LittleEndian.Uint16(p))
		} else {
			restarts[i] = int(binary.LittleEndian.Uint32(p))
		}
		isRestart[restarts[i]] = i
	}
	if r > 0 {
		p := d.Bytes(restarts[0], "common prefix P (%d bytes)", restarts[0])
		if len(p) > 0 {
			d.Note("P = %s", golden.Printable(p))
		}
	}
	if summary {
		d.Bytes(restartsOff-d.Offset(), "entries (%d bytes)", restartsOff-d.Offset())
	}
	for i := 0; d.Offset() < restartsOff && d.Remaining() > 0; i++ {
		ri, restart := isRestart[d.Offset()]
		if restart {
			d.Note("entry %d: restart point %d", i, ri)
		} else {
			d.Note("entry %d", i)
		}
		if compact && !restart && d.Peek(1)[0]&0x80 != 0 {
			h := d.Peek(1)[0]
			v, k := int(h>>3&0xf), int(h&7)
			d.Bytes(1, "compact header 0b%08b: 1 vvvv=%d kkk=%d", h, v, k)
			d.Bytes(k, "last %d key bytes", k)
			d.Bytes(v, "last %d value bytes", v)
			continue
		}
		d.Uvarint("shared")
		unshared := d.Uvarint("unshared")
		var valueLen uint64
		if shareValues {
			d.Uvarint("valueShared")
			valueLen = d.Uvarint("valueUnshared")
		} else {
			valueLen = d.Uvarint("valueLen")
		}
		trailer, n := binary.Uvarint(d.Peek(binary.MaxVarintLen64))
		d.Bytes(max(n, 0), "trailer=%s", formatTrailer(base.Trailer(trailer)))
		kb := d.Bytes(int(unshared), "key bytes")
		if len(kb) > 0 {
			d.Note("  %s", golden.Printable(kb))
		}
		d.Bytes(int(valueLen), "value bytes")
	}
	for i := range restarts {
		d.Uint(width, binary.LittleEndian, fmt.Sprintf("restart[%d] (u%d)", i, 8*width))
	}
	var flags []string
	for _, f := range []struct {
		bit  uint32
		name string
	}{{goldenValuePrefixes, "31 value-prefixes"}, {goldenU16Restarts, "30 u16-restarts"}, {goldenCompact, "29 compact-entries"}} {
		if count&f.bit != 0 {
			flags = append(flags, f.name)
		}
	}
	if len(flags) == 0 {
		flags = append(flags, "none")
	}
	d.Bytes(4, "count %#08x: r=%d, bits: %s", count, r, strings.Join(flags, ", "))
	return d.String()
}

// listBlock lists what Iter reads from the block (with summary, only the
// count and the first and last entries).
func listBlock(data []byte, summary bool) string {
	var it Iter
	if err := it.Init(data); err != nil {
		return "init: " + err.Error()
	}
	var lines []string
	for ok := it.First(); ok; ok = it.Next() {
		value := golden.Printable(it.Value())
		if summary {
			value = fmt.Sprintf("(%d-byte value)", len(it.Value()))
		}
		lines = append(lines, fmt.Sprintf("%s %s %s", golden.Printable(it.UserKey()), formatTrailer(it.Trailer()), value))
	}
	if err := it.Error(); err != nil {
		lines = append(lines, "error: "+err.Error())
	}
	if err := Validate(data); err != nil {
		lines = append(lines, "validate: "+err.Error())
	}
	if summary && len(lines) > 2 {
		lines = []string{fmt.Sprintf("%d entries, first %s", len(lines), lines[0]), "last " + lines[len(lines)-1]}
	}
	return "iter:\n" + strings.Join(lines, "\n")
}

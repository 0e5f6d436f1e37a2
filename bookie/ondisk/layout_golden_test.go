package ondisk

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestLayoutFormat pins the LAYOUT record with golden files: each case
// encodes a layout and prints it as an annotated hex dump, decoded here as
// docs/format.md gives it, then what DecodeLayout reads back. Rewrite with
// -update and review the diff.
//
//	layout generation=N routing=0|1 dirs=L[:I],... [self=POSITION:ROLE] [flip=OFFSET]
//
// Without self the copy is format version 1 (what versions before
// identities wrote, still read); with it, version 2.
func TestLayoutFormat(t *testing.T) {
	golden.Run(t, "testdata/layout_format", func(t *testing.T, c *golden.Case) string {
		if c.Cmd != "layout" {
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		l := &Layout{Generation: uint64(c.Int(t, "generation", 1)), Routing: Routing(c.Int(t, "routing", 0))}
		for i := range l.Instance {
			l.Instance[i] = byte(0xa0 + i)
		}
		for _, p := range strings.Split(c.String(t, "dirs", ""), ",") {
			ledger, index, ok := strings.Cut(p, ":")
			if !ok {
				index = ledger
			}
			l.Dirs = append(l.Dirs, DirPair{Ledger: ledger, Index: index})
		}
		if c.Has("self") {
			pos, role, _ := strings.Cut(c.String(t, "self", ""), ":")
			p, err := strconv.Atoi(pos)
			require.NoError(t, err)
			r, err := strconv.Atoi(role)
			require.NoError(t, err)
			l.Self = Identity{Position: p, Role: Role(r)}
		}
		b := EncodeLayout(l)
		if c.Has("flip") {
			b[c.Int(t, "flip", 0)] ^= 0x01
		}
		var out strings.Builder
		out.WriteString(dumpLayout(b))
		got, err := DecodeLayout(b)
		if err != nil {
			fmt.Fprintf(&out, "\ndecode: %v", err)
			return out.String()
		}
		require.Equal(t, l, got)
		fmt.Fprintf(&out, "\ndecoded: instance=%x generation=%d routing=%d dirs=%s self=%s", got.Instance, got.Generation, got.Routing, FormatPairs(got.Dirs), got.Self)
		return out.String()
	})
}

// Routing names as docs/format.md gives them, spelled out so that a
// changed constant fails the test.
var goldenRoutings = []string{"modulo", "recorded"}

// Role names as docs/format.md gives them.
var goldenRoles = []string{"(none)", "ledger directory", "index directory", "ledger and index directory"}

func dumpLayout(b []byte) string {
	d := golden.NewDump(b)
	d.Bytes(8, "magic %q", d.Peek(8))
	version := d.Peek(1)
	d.Uint(1, binary.BigEndian, "version")
	d.Bytes(16, "instance id")
	d.Uint(8, binary.BigEndian, "generation (BE)")
	r := d.Peek(1)
	name := "(unknown)"
	if len(r) == 1 && int(r[0]) < len(goldenRoutings) {
		name = goldenRoutings[r[0]]
	}
	d.Bytes(1, "routing: %s", name)
	n := d.Uvarint("count")
	for i := range n {
		k := d.Uvarint(fmt.Sprintf("dir %d: ledger directory length", i))
		d.Bytes(int(k), "ledger directory %q", d.Peek(int(k)))
		k = d.Uvarint(fmt.Sprintf("dir %d: index directory length", i))
		d.Bytes(int(k), "index directory %q", d.Peek(int(k)))
	}
	if len(version) == 1 && version[0] == 2 {
		d.Uvarint("self: position (pair index, from 0)")
		r := d.Peek(1)
		role := "(unknown)"
		if len(r) == 1 && int(r[0]) < len(goldenRoles) {
			role = goldenRoles[r[0]]
		}
		d.Bytes(1, "self: role: %s", role)
	}
	d.Uint(4, binary.BigEndian, "crc32c (BE)")
	return d.String()
}

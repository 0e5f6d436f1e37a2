package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestRecordFormat pins the chunk format of the record log (WAL and
// MANIFEST) with golden files: each case writes fixed records and prints the
// stream as an annotated hex dump, chunk by chunk and block by block, decoded
// here as docs/format.md gives it (not by the Reader), then the records the
// Reader returns. Rewrite with -update and review the diff.
//
//	write
//	<record>...   "text" for those bytes, or len=N for N bytes i%251
func TestRecordFormat(t *testing.T) {
	golden.Run(t, "testdata/record_format", func(t *testing.T, c *golden.Case) string {
		if c.Cmd != "write" {
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		var out strings.Builder
		for _, l := range c.Lines() {
			p := goldenRecord(t, l)
			off, err := w.WriteRecord(p)
			require.NoError(t, err)
			fmt.Fprintf(&out, "record of %d bytes at offset %d\n", len(p), off)
		}
		require.NoError(t, w.Flush())
		fmt.Fprintf(&out, "%d bytes\n", buf.Len())
		out.WriteString(dumpChunks(buf.Bytes()))
		out.WriteString("\nread:\n")
		r := NewReader(bytes.NewReader(buf.Bytes()))
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
				break
			}
			fmt.Fprintf(&out, "record of %d bytes, crc32c %08x\n", len(rec), crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)))
		}
		return out.String()
	})
}

func goldenRecord(t *testing.T, l string) []byte {
	if n, ok := strings.CutPrefix(l, "len="); ok {
		size, err := strconv.Atoi(n)
		require.NoError(t, err)
		p := make([]byte, size)
		for i := range p {
			p[i] = byte(i % 251)
		}
		return p
	}
	p, err := golden.ParseBytes(l)
	require.NoError(t, err)
	return p
}

// The record log's constants as docs/format.md gives them, spelled out so
// that a changed constant fails the test.
const (
	goldenBlockSize  = 32 << 10
	goldenHeaderSize = 7
)

var goldenChunkTypes = map[byte]string{1: "full", 2: "first", 3: "middle", 4: "last"}

// dumpChunks annotates a record log: each block's chunks and its padding.
func dumpChunks(data []byte) string {
	d := golden.NewDump(data)
	for d.Remaining() > 0 {
		blockEnd := (d.Offset()/goldenBlockSize + 1) * goldenBlockSize
		if d.Offset()%goldenBlockSize == 0 {
			d.Note("block %d", d.Offset()/goldenBlockSize)
		}
		left := min(blockEnd, len(data)) - d.Offset()
		if blockEnd-d.Offset() < goldenHeaderSize {
			d.Bytes(left, "padding: %d bytes left in the block, too few for a header", blockEnd-d.Offset())
			continue
		}
		h := d.Peek(goldenHeaderSize)
		if len(h) < goldenHeaderSize {
			d.Bytes(len(h), "truncated chunk header")
			break
		}
		length := int(binary.LittleEndian.Uint16(h[4:]))
		d.Uint(4, binary.LittleEndian, "masked CRC-32C of type and payload")
		d.Uint(2, binary.LittleEndian, "length")
		typ := d.Peek(1)[0]
		name, ok := goldenChunkTypes[typ]
		if !ok {
			name = "invalid"
		}
		d.Bytes(1, "type=%d (%s)", typ, name)
		d.Bytes(length, "payload")
	}
	return d.String()
}

package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestSyncedLengthFormat pins the synced-length file (docs/format.md,
// "Synced-length file") with a golden file: each case appends marks, then
// optionally damages the file, and prints it as an annotated hex dump
// decoded here as the format gives it (not by ReadSyncedLength), then what
// ReadSyncedLength makes of it. Rewrite with -update and review the diff.
//
//	marks
//	<length>...          a mark each
//	tear=N               then append the first N bytes of one more mark
//	flip=OFFSET          then flip the low bit of the byte at OFFSET
func TestSyncedLengthFormat(t *testing.T) {
	golden.Run(t, "testdata/synced_length_format", func(t *testing.T, c *golden.Case) string {
		if c.Cmd != "marks" {
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		var buf bytes.Buffer
		w := NewSyncedLengthWriter(&buf)
		for _, l := range c.Lines() {
			n, err := strconv.ParseInt(l, 10, 64)
			require.NoError(t, err, "%s: %q", c.Pos, l)
			require.NoError(t, w.Mark(n))
		}
		if tear := int(c.Int(t, "tear", 0)); tear > 0 {
			var extra bytes.Buffer
			require.NoError(t, NewSyncedLengthWriter(&extra).Mark(0x0102030405))
			buf.Write(extra.Bytes()[:tear])
		}
		data := buf.Bytes()
		if c.Has("flip") {
			data[c.Int(t, "flip", 0)] ^= 1
		}
		var out strings.Builder
		fmt.Fprintf(&out, "%d bytes\n", len(data))
		d := golden.NewDump(data)
		for d.Remaining() >= goldenSyncedMarkSize {
			d.Uint(8, binary.LittleEndian, "synced length")
			d.Uint(4, binary.LittleEndian, "masked CRC-32C of the length")
		}
		if d.Remaining() > 0 {
			d.Bytes(d.Remaining(), "partial mark (a torn append, ignored)")
		}
		out.WriteString(d.String())
		out.WriteString("\n")
		length, ok, err := ReadSyncedLength(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		if ok {
			fmt.Fprintf(&out, "read: synced length %d\n", length)
		} else {
			out.WriteString("read: synced length unknown\n")
		}
		return out.String()
	})
}

// goldenSyncedMarkSize is the mark size as docs/format.md gives it, spelled
// out so that a changed constant fails the test.
const goldenSyncedMarkSize = 12

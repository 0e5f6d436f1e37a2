package batch

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// TestBatchFormat pins the batch encoding (the payload of a WAL record) with
// golden files: each case builds a batch and prints its Repr as an annotated
// hex dump, decoded here as docs/format.md gives it, then what Decode reads.
// Rewrite with -update and review the diff.
//
//	batch [seq=N]
//	set <key> <value> | del <key> | delrange <start> <end>   (see golden.ParseBytes)
func TestBatchFormat(t *testing.T) {
	golden.Run(t, "testdata/batch_format", func(t *testing.T, c *golden.Case) string {
		if c.Cmd != "batch" {
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		var b Batch
		for _, l := range c.Lines() {
			f := strings.Fields(l)
			args := make([][]byte, len(f)-1)
			for i := range args {
				var err error
				args[i], err = golden.ParseBytes(f[i+1])
				require.NoError(t, err)
			}
			switch {
			case f[0] == "set" && len(args) == 2:
				b.Set(args[0], args[1])
			case f[0] == "del" && len(args) == 1:
				b.Delete(args[0])
			case f[0] == "delrange" && len(args) == 2:
				b.DeleteRange(args[0], args[1])
			default:
				t.Fatalf("%s: bad operation %q", c.Pos, l)
			}
		}
		require.NoError(t, b.Err())
		b.SetSeqNum(base.SeqNum(c.Int(t, "seq", 0)))
		repr := b.Repr()
		return dumpBatch(repr) + "\n" + listBatch(repr)
	})
}

// Operation kinds as docs/format.md gives them, spelled out so that a
// changed constant fails the test.
var goldenKinds = map[byte]string{0: "DEL", 1: "SET", 2: "RANGEDEL"}

func dumpBatch(repr []byte) string {
	d := golden.NewDump(repr)
	d.Uint(8, binary.LittleEndian, "seqnum")
	count := d.Uint(4, binary.LittleEndian, "count")
	for i := uint64(0); i < count && d.Remaining() > 0; i++ {
		d.Note("op %d", i)
		kind := d.Peek(1)[0]
		name, ok := goldenKinds[kind]
		if !ok {
			name = "unknown"
		}
		d.Bytes(1, "kind=%d (%s)", kind, name)
		keyLen := d.Uvarint("keyLen")
		d.Bytes(int(keyLen), "key %s", golden.Short(d.Peek(int(keyLen))))
		if name != "DEL" {
			valueLen := d.Uvarint("valueLen")
			d.Bytes(int(valueLen), "value %s", golden.Short(d.Peek(int(valueLen))))
		}
	}
	return d.String()
}

func listBatch(repr []byte) string {
	r, err := Decode(repr)
	if err != nil {
		return "decode: " + err.Error()
	}
	lines := []string{fmt.Sprintf("decoded: seqnum %d, %d ops", r.SeqNum(), r.Count())}
	for i := 0; ; i++ {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			lines = append(lines, "error: "+err.Error())
			break
		}
		if !ok {
			break
		}
		op := fmt.Sprintf("  #%d %s %s", uint64(r.SeqNum())+uint64(i), kind, golden.Printable(key))
		if kind != base.KindDelete {
			op += " " + golden.Short(value)
		}
		lines = append(lines, op)
	}
	return strings.Join(lines, "\n")
}

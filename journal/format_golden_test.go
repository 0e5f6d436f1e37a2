package journal

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestJournalFormat pins the journal's encodings with golden files: each
// case prints the bytes as an annotated hex dump, read here field by field
// as docs/format.md gives them (big-endian, as upstream), then what the
// package's decoder reads back. Rewrite with -update and review the diff.
//
//	header version=V
//	entry ledger=L entry=E          (payload: the input, see golden.ParseBytes)
//	master-key ledger=L             (key: the input)
//	fence ledger=L
//	explicit-lac ledger=L           (LAC bytes: the input)
//	padding pos=P align=A
//	last-mark file=F offset=O
//	synced-mark length=N
func TestJournalFormat(t *testing.T) {
	golden.Run(t, "testdata/journal_format", func(t *testing.T, c *golden.Case) string {
		input := func() []byte {
			b, err := golden.ParseBytes(strings.TrimSpace(c.Input))
			require.NoError(t, err)
			return b
		}
		ledger := c.Int(t, "ledger", 0)
		switch c.Cmd {
		case "header":
			v := int(c.Int(t, "version", DefaultWriteVersion))
			h := encodeHeader(v)
			d := golden.NewDump(h)
			d.Bytes(4, "magic %q", d.Peek(4))
			d.Uint(4, binary.BigEndian, "format version")
			if len(h) > VersionHeaderSize {
				d.Bytes(len(h)-VersionHeaderSize, "zeros to offset %d (one sector)", len(h))
			}
			got, err := decodeVersion(h)
			return d.String() + "\n" + fmt.Sprintf("decoded: version %d, records start at %d, err %v", got, HeaderSize(got), err)
		case "entry":
			return dumpAndDecode(appendEntryRecord(nil, ledger, c.Int(t, "entry", 0), input()))
		case "master-key":
			return dumpAndDecode(appendMasterKeyRecord(nil, ledger, input()))
		case "fence":
			return dumpAndDecode(appendFenceRecord(nil, ledger))
		case "explicit-lac":
			return dumpAndDecode(appendExplicitLACRecord(nil, ledger, input()))
		case "padding":
			pos, align := c.Int(t, "pos", 0), int(c.Int(t, "align", 512))
			b := appendPadding(nil, pos, align)
			d := golden.NewDump(b)
			d.SetBase(int(pos))
			if len(b) > 0 {
				d.Bytes(4, "padding mask=%d", int32(binary.BigEndian.Uint32(d.Peek(4))))
				n := d.Uint(4, binary.BigEndian, "zeros that follow")
				d.Bytes(int(n), "zeros")
			}
			return d.String() + "\n" + fmt.Sprintf("ends at %d (%d mod %d = %d)", pos+int64(len(b)), pos+int64(len(b)), align, (pos+int64(len(b)))%int64(align))
		case "last-mark":
			m := LogMark{FileID: c.Int(t, "file", 0), Offset: c.Int(t, "offset", 0)}
			b := appendLogMark(nil, m)
			d := golden.NewDump(b)
			d.Uint(8, binary.BigEndian, "journal file id")
			d.Uint(8, binary.BigEndian, "offset")
			return d.String() + "\n" + fmt.Sprintf("decoded: %s", decodeLogMark(b))
		case "synced-mark":
			b := appendSyncedMark(nil, c.Int(t, "length", 0))
			d := golden.NewDump(b)
			d.Uint(8, binary.LittleEndian, "synced length (little-endian)")
			d.Uint(4, binary.LittleEndian, "masked CRC-32C of the 8 bytes above")
			n, ok, err := readSyncedLength(byteReaderAt(b), int64(len(b)))
			return d.String() + "\n" + fmt.Sprintf("decoded: %d ok=%v err=%v", n, ok, err)
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}

// metaNames names the meta-entry ids in dumps.
var metaNames = map[int64]string{
	MetaEntryMasterKey:   "master key",
	MetaEntryFence:       "fence",
	MetaEntryForceLedger: "force ledger",
	MetaEntryExplicitLAC: "explicit LAC",
}

// dumpRecord dumps one record (length field first) at d's offset and
// returns the record's length.
func dumpRecord(d *golden.Dump) int {
	n := int(d.Uint(4, binary.BigEndian, "record length"))
	ledger := int64(binary.BigEndian.Uint64(d.Peek(8)))
	d.Bytes(8, "ledger id=%d", ledger)
	entry := int64(binary.BigEndian.Uint64(d.Peek(8)))
	name, meta := metaNames[entry]
	if meta {
		d.Bytes(8, "entry id=%d (%#x): meta-entry, %s", entry, entry, name)
	} else {
		d.Bytes(8, "entry id=%d", entry)
	}
	switch entry {
	case MetaEntryMasterKey, MetaEntryExplicitLAC:
		k := d.Uint(4, binary.BigEndian, name+" length")
		d.Bytes(int(k), "%s", name)
	case MetaEntryFence:
	default:
		d.Bytes(n-recordIDsSize, "payload (the rest of the client's entry)")
	}
	return n
}

func dumpAndDecode(b []byte) string {
	d := golden.NewDump(b)
	n := dumpRecord(d)
	var rec Record
	err := decodeRecord(b[4:4+n], MaxVersion, &rec)
	return d.String() + "\n" + fmt.Sprintf("decoded: %s ledger %d entry %d payload %s, err %v",
		rec.Kind, rec.LedgerID, rec.EntryID, golden.Short(rec.Payload), err)
}

// byteReaderAt reads a byte slice.
type byteReaderAt []byte

func (b byteReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, fmt.Errorf("offset %d past %d bytes", off, len(b))
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, fmt.Errorf("short read")
	}
	return n, nil
}

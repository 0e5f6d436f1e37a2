package manifest

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// TestVersionEditFormat pins the version-edit encoding (the payload of a
// MANIFEST record) with golden files: each case encodes an edit and prints
// it as an annotated hex dump, decoded here tag by tag as docs/format.md
// gives it, then what Decode reads back. Rewrite with -update and review the
// diff.
//
//	edit
//	log-number N | next-file-num N | last-seqnum N
//	compact-pointer <level> <key> <KIND>.<seq>
//	deleted <level> <file number>
//	new <level> <file number> <size> <smallest> <KIND>.<seq> <largest> <KIND>.<seq>|sentinel <smallest seq> <largest seq> <entries> <range deletions>
func TestVersionEditFormat(t *testing.T) {
	golden.Run(t, "testdata/version_edit_format", func(t *testing.T, c *golden.Case) string {
		if c.Cmd != "edit" {
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		e := parseEdit(t, c)
		data := e.Encode(nil)
		var got VersionEdit
		listing := ""
		if err := got.Decode(data); err != nil {
			listing = "decode: " + err.Error()
		} else {
			listing = describeEdit(&got)
		}
		return dumpEdit(data) + "\n" + listing
	})
}

func parseEdit(t *testing.T, c *golden.Case) *VersionEdit {
	e := &VersionEdit{}
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 0, 64)
		require.NoError(t, err, "%s", c.Pos)
		return v
	}
	key := func(k, tr string) base.InternalKey {
		uk, err := golden.ParseBytes(k)
		require.NoError(t, err)
		if tr == "sentinel" {
			return base.InternalKey{UserKey: uk, Trailer: RangeDeleteSentinel}
		}
		kind, seq, ok := strings.Cut(tr, ".")
		require.True(t, ok, "%s: trailer %q", c.Pos, tr)
		k2 := map[string]base.Kind{"DEL": base.KindDelete, "SET": base.KindSet, "RANGEDEL": base.KindRangeDelete}[kind]
		return base.MakeInternalKey(uk, base.SeqNum(num(seq)), k2)
	}
	for _, l := range c.Lines() {
		f := strings.Fields(l)
		switch f[0] {
		case "log-number":
			e.LogNumber = num(f[1])
		case "next-file-num":
			e.NextFileNum = num(f[1])
		case "last-seqnum":
			e.LastSeqNum = base.SeqNum(num(f[1]))
		case "compact-pointer":
			e.CompactPointers = append(e.CompactPointers, CompactPointer{Level: int(num(f[1])), Key: key(f[2], f[3])})
		case "deleted":
			e.DeletedTables = append(e.DeletedTables, DeletedTable{Level: int(num(f[1])), FileNum: num(f[2])})
		case "new":
			require.Len(t, f, 12, "%s: %s", c.Pos, l)
			m := &TableMeta{FileNum: num(f[2]), Size: num(f[3]), Smallest: key(f[4], f[5]), Largest: key(f[6], f[7]),
				SmallestSeqNum: base.SeqNum(num(f[8])), LargestSeqNum: base.SeqNum(num(f[9])), Entries: num(f[10]), RangeDeletions: num(f[11])}
			e.NewTables = append(e.NewTables, NewTable{Level: int(num(f[1])), Meta: m})
		default:
			t.Fatalf("%s: unknown field %q", c.Pos, l)
		}
	}
	return e
}

// Field tags as docs/format.md gives them, spelled out so that a changed
// constant fails the test.
var goldenTags = map[uint64]string{1: "LogNumber", 2: "NextFileNum", 3: "LastSeqNum", 4: "CompactPointer", 5: "DeletedTable", 6: "NewTable"}

// dumpEdit annotates an encoded edit field by field.
func dumpEdit(data []byte) string {
	d := golden.NewDump(data)
	ikey := func(what string) {
		n := d.Uvarint(what + " user key length")
		d.Bytes(int(n), "%s user key %s", what, golden.Short(d.Peek(int(n))))
		var raw [8]byte
		copy(raw[:], d.Peek(8))
		tr := base.Trailer(binary.LittleEndian.Uint64(raw[:]))
		label := fmt.Sprintf("%s trailer %s.%d", what, tr.Kind(), tr.SeqNum())
		if tr == RangeDeleteSentinel {
			label = what + " trailer: range-deletion sentinel (SeqNumMax<<8 | 2)"
		}
		d.Bytes(8, "%s", label)
	}
	for d.Remaining() > 0 {
		tag, _ := binary.Uvarint(d.Peek(binary.MaxVarintLen64))
		name, ok := goldenTags[tag]
		if !ok {
			name = "unknown"
		}
		d.Uvarint("tag (" + name + ")")
		switch name {
		case "LogNumber", "NextFileNum", "LastSeqNum":
			d.Uvarint(name)
		case "CompactPointer":
			d.Uvarint("level")
			ikey("key")
		case "DeletedTable":
			d.Uvarint("level")
			d.Uvarint("file number")
		case "NewTable":
			d.Uvarint("level")
			d.Uvarint("file number")
			d.Uvarint("size")
			ikey("smallest")
			ikey("largest")
			d.Uvarint("smallest seqnum")
			d.Uvarint("largest seqnum")
			d.Uvarint("entries")
			d.Uvarint("range deletions")
		default:
			d.Bytes(d.Remaining(), "rest")
		}
	}
	return d.String()
}

// describeEdit lists a decoded edit, one field a line.
func describeEdit(e *VersionEdit) string {
	lines := []string{"decoded:"}
	add := func(format string, args ...any) { lines = append(lines, "  "+fmt.Sprintf(format, args...)) }
	ik := func(k base.InternalKey) string {
		if k.Trailer == RangeDeleteSentinel {
			return golden.Short(k.UserKey) + "#sentinel"
		}
		return fmt.Sprintf("%s#%s.%d", golden.Short(k.UserKey), k.Kind(), k.SeqNum())
	}
	if e.LogNumber != 0 {
		add("log number %d", e.LogNumber)
	}
	if e.NextFileNum != 0 {
		add("next file number %d", e.NextFileNum)
	}
	if e.LastSeqNum != 0 {
		add("last seqnum %d", e.LastSeqNum)
	}
	for _, cp := range e.CompactPointers {
		add("compact pointer L%d %s", cp.Level, ik(cp.Key))
	}
	for _, dt := range e.DeletedTables {
		add("deleted L%d %06d", dt.Level, dt.FileNum)
	}
	for _, nt := range e.NewTables {
		m := nt.Meta
		add("new L%d %06d size %d [%s, %s] seqnums [%d, %d] entries %d range deletions %d",
			nt.Level, m.FileNum, m.Size, ik(m.Smallest), ik(m.Largest), m.SmallestSeqNum, m.LargestSeqNum, m.Entries, m.RangeDeletions)
	}
	return strings.Join(lines, "\n")
}

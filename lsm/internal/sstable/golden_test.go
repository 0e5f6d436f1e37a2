package sstable

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestTableFormat pins the table's frame with golden files: each case writes
// a table from fixed input and prints its blocks with their 5-byte trailers,
// the entries of its index tiers (the separators the writer chose), the
// footer as an annotated hex dump (decoded here field by field, as
// docs/format.md gives it) and the properties block name by name. Rewrite
// with -update and review the diff.
//
//	build [layout=full|partitioned] [compression=none|lz4] [bloom=N] [block-size=N]
//	      [restart-interval=N] [metadata-block-size=N] [ledgers=L entries=E]
//	<user key> <KIND>.<seqnum> <value>     (a point entry; see golden.ParseBytes)
//	rangedel <start> <end> <seqnum>        (a range deletion)
func TestTableFormat(t *testing.T) {
	golden.Run(t, "testdata/table_format", func(t *testing.T, c *golden.Case) string {
		if c.Cmd != "build" {
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		opts := goldenWriterOptions(t, c)
		kvs, dels := goldenTableInput(t, c)
		fs := vfs.NewMem()
		writeTable(t, fs, "t.sst", opts, kvs, dels)
		data := readAll(t, fs, "t.sst")
		r := openTableWith(t, fs, "t.sst", ReaderOptions{})
		defer r.Close()
		return describeTable(t, r, data)
	})
}

func goldenWriterOptions(t *testing.T, c *golden.Case) WriterOptions {
	layout, err := ParseLayout(c.String(t, "layout", "partitioned"))
	require.NoError(t, err)
	compression, err := ParseCompression(c.String(t, "compression", "none"))
	require.NoError(t, err)
	return WriterOptions{
		BlockSize:         int(c.Int(t, "block-size", DefaultBlockSize)),
		RestartInterval:   int(c.Int(t, "restart-interval", DefaultRestartInterval)),
		MetadataBlockSize: int(c.Int(t, "metadata-block-size", DefaultMetadataBlockSize)),
		BloomBitsPerKey:   int(c.Int(t, "bloom", DefaultBloomBitsPerKey)),
		Layout:            layout,
		Compression:       compression,
	}
}

func goldenTableInput(t *testing.T, c *golden.Case) ([]kv, []Tombstone) {
	kvs := entryLocationKVs(int(c.Int(t, "ledgers", 0)), int(c.Int(t, "entries", 0)))
	kvs = append(kvs, textKVs(int(c.Int(t, "text", 0)))...)
	var dels []Tombstone
	for _, l := range c.Lines() {
		f := strings.Fields(l)
		if f[0] == "rangedel" {
			require.Len(t, f, 4, "%s: rangedel <start> <end> <seqnum>", c.Pos)
			start, err := golden.ParseBytes(f[1])
			require.NoError(t, err)
			end, err := golden.ParseBytes(f[2])
			require.NoError(t, err)
			seq, err := strconv.ParseUint(f[3], 0, 64)
			require.NoError(t, err)
			dels = append(dels, Tombstone{Start: start, End: end, Seq: base.SeqNum(seq)})
			continue
		}
		require.Len(t, f, 3, "%s: <key> <KIND>.<seqnum> <value>", c.Pos)
		key, err := golden.ParseBytes(f[0])
		require.NoError(t, err)
		value, err := golden.ParseBytes(f[2])
		require.NoError(t, err)
		kind, seqText, _ := strings.Cut(f[1], ".")
		seq, err := strconv.ParseUint(seqText, 0, 64)
		require.NoError(t, err)
		k := map[string]base.Kind{"SET": base.KindSet, "DEL": base.KindDelete}[kind]
		kvs = append(kvs, kv{key: base.MakeInternalKey(key, base.SeqNum(seq), k), value: value})
	}
	return kvs, dels
}

// textKVs makes n keys "text/%04d" with compressible values, so that LZ4
// applies to their blocks.
func textKVs(n int) []kv {
	var kvs []kv
	for i := 0; i < n; i++ {
		v := fmt.Appendf(nil, "value %04d %s", i, strings.Repeat("x", 32))
		kvs = append(kvs, kv{key: base.MakeInternalKey(fmt.Appendf(nil, "text/%04d", i), 1, base.KindSet), value: v})
	}
	return kvs
}

func readAll(t *testing.T, fs vfs.FS, name string) []byte {
	f, err := fs.Open(name)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	data := make([]byte, size)
	_, err = f.ReadAt(data, 0)
	if err != io.EOF {
		require.NoError(t, err)
	}
	return data
}

// The footer's constants as docs/format.md gives them, spelled out here so
// that a changed constant fails the test.
const (
	goldenFooterSize = 88
	goldenMagic      = "bkidxsst"
)

// describeTable prints the table's blocks, footer and properties.
func describeTable(t *testing.T, r *Reader, data []byte) string {
	var out strings.Builder
	fmt.Fprintf(&out, "%d bytes\n", len(data))
	blocks, err := r.Layout()
	require.NoError(t, err)
	out.WriteString("blocks (offset+length, then the stored trailer: compression type, masked CRC-32C):\n")
	for _, b := range blocks {
		if b.Length == 0 && b.Offset == 0 {
			fmt.Fprintf(&out, "  %-22s none\n", b.Kind)
			continue
		}
		tr := data[b.Offset+b.Length:][:5]
		fmt.Fprintf(&out, "  %-22s %d+%d  type %d  crc %08x\n", b.Kind, b.Offset, b.Length, tr[0], binary.LittleEndian.Uint32(tr[1:]))
	}
	out.WriteString("index and filter-index entries (separator → block handle):\n")
	for _, b := range blocks {
		switch b.Kind {
		case "index", "top-level index", "top-level filter index":
		default:
			continue
		}
		fmt.Fprintf(&out, "  %s %d:\n", b.Kind, b.Offset)
		raw, err := decompressBlock(data[b.Offset+b.Length], data[b.Offset:b.Offset+b.Length])
		require.NoError(t, err)
		var it block.Iter
		require.NoError(t, it.Init(raw))
		for ok := it.First(); ok; ok = it.Next() {
			h, err := DecodeBlockHandle(it.Value())
			require.NoError(t, err)
			fmt.Fprintf(&out, "    %s #%s.%d → %d+%d\n", golden.Printable(it.UserKey()), it.Trailer().Kind(), it.Trailer().SeqNum(), h.Offset, h.Length)
		}
		require.NoError(t, it.Error())
	}
	out.WriteString("range deletions (start #trailer → exclusive end):\n")
	rd := r.footer.rangeDel
	var it block.Iter
	require.NoError(t, it.Init(data[rd.Offset:rd.Offset+rd.Length]))
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Fprintf(&out, "  %s #%s.%d → %s\n", golden.Printable(it.UserKey()), it.Trailer().Kind(), it.Trailer().SeqNum(), golden.Printable(it.Value()))
	}
	require.NoError(t, it.Error())
	out.WriteString("footer:\n")
	out.WriteString(dumpFooter(data))
	out.WriteString("\nproperties:\n")
	out.WriteString(describeProperties(t, data, r.footer.properties))
	return out.String()
}

func dumpFooter(data []byte) string {
	if len(data) < goldenFooterSize {
		return "table shorter than a footer"
	}
	d := golden.NewDump(data[len(data)-goldenFooterSize:])
	d.SetBase(len(data) - goldenFooterSize)
	le := binary.LittleEndian
	for _, name := range []string{"index", "filter", "range deletions", "properties"} {
		d.Uint(8, le, name+" handle: offset")
		d.Uint(8, le, name+" handle: length")
	}
	flags := le.Uint32(d.Peek(4))
	var names []string
	for bit, name := range []string{"partitioned index", "partitioned filter", "common prefix off"} {
		if flags&(1<<bit) != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		names = append(names, "(none)")
	}
	d.Bytes(4, "flags=%d: %s", flags, strings.Join(names, ", "))
	d.Uint(4, le, "format version")
	d.Uint(1, le, "checksum type (1 = CRC-32C)")
	d.Bytes(3, "zero")
	d.Uint(4, le, "masked CRC-32C of the 76 bytes above")
	d.Bytes(8, "magic %q", d.Peek(8))
	if string(data[len(data)-8:]) != goldenMagic {
		d.Note("!! magic is not %q", goldenMagic)
	}
	return d.String()
}

// describeProperties lists the properties block's names and raw values,
// each with its decoding as docs/format.md gives it.
func describeProperties(t *testing.T, data []byte, h BlockHandle) string {
	raw := data[h.Offset : h.Offset+h.Length]
	var it block.Iter
	require.NoError(t, it.Init(raw))
	var lines []string
	for ok := it.First(); ok; ok = it.Next() {
		name, v := string(it.UserKey()), it.Value()
		var meaning string
		switch name {
		case "bookie.layout", "bookie.compression":
			meaning = strconv.Quote(string(v))
		case "bookie.bloom-bits-per-key":
			x, _ := binary.Varint(v)
			meaning = fmt.Sprintf("varint %d", x)
		case "bookie.smallest-key", "bookie.largest-key":
			n := len(v) - 8
			tr := base.Trailer(binary.LittleEndian.Uint64(v[n:]))
			meaning = fmt.Sprintf("%s #%s.%d", golden.Printable(v[:n]), tr.Kind(), tr.SeqNum())
		default:
			x, _ := binary.Uvarint(v)
			meaning = strconv.FormatUint(x, 10)
		}
		lines = append(lines, fmt.Sprintf("  %-30s %-20s %s", name, fmt.Sprintf("%x", v), meaning))
	}
	require.NoError(t, it.Error())
	return strings.Join(lines, "\n")
}

// v1Table is the committed table written by format version 1; it must read
// the same forever (TestTableV1).
const v1Table = "testdata/v1/table.sst"

// writeV1Table writes v1Table: three ledgers of entry locations over small
// blocks (several data blocks, index and filter partitions; compact and
// full entries), a point
// tombstone, a range deletion, and text keys whose blocks are LZ4-compressed.
func writeV1Table(t *testing.T) {
	var kvs []kv
	loc := uint64(1<<32 | 1028)
	for l := uint64(1); l <= 3; l++ {
		for e := uint64(0); e < 40; e++ {
			v := binary.BigEndian.AppendUint64(nil, loc)
			loc += 37
			// Ledger 1 as at the bottom of the tree (seqnum 0: compact
			// entries), the others with a seqnum per entry (full entries).
			seq := base.SeqNum(100 + e)
			if l == 1 {
				seq = 0
			}
			kvs = append(kvs, kv{key: base.MakeInternalKey(entryKey(l, e), seq, base.KindSet), value: v})
		}
	}
	// Entry 5 of ledger 2 deleted after it was written.
	kvs = append(kvs, kv{key: base.MakeInternalKey(entryKey(2, 5), 200, base.KindDelete)})
	// Text keys after the ledgers, in LZ4-compressed blocks.
	kvs = append(kvs, textKVs(20)...)
	kvs = sortKVs(kvs)
	opts := WriterOptions{BlockSize: 256, MetadataBlockSize: 64, Compression: CompressionLZ4, RestartInterval: 8}
	dels := []Tombstone{{Start: entryKey(3, 30), End: entryKey(4, 0), Seq: 300}}
	require.NoError(t, os.MkdirAll(filepath.Dir(v1Table), 0o755))
	_ = os.Remove(v1Table)
	writeTable(t, vfs.Default, v1Table, opts, kvs, dels)
}

// TestTableV1 reads the committed version-1 table and compares what the
// reader finds (blocks, footer, properties, every entry, lookups) with
// testdata/table_v1. A reader change that breaks tables written by older
// builds fails it. -regenerate rewrites the table (a format change: then
// the old file must stay readable by other means).
//
//	describe | scan | verify | get <key> <seqnum>
func TestTableV1(t *testing.T) {
	if golden.Regenerating() {
		writeV1Table(t)
	}
	data, err := os.ReadFile(v1Table)
	require.NoError(t, err)
	r := openTableWith(t, vfs.Default, v1Table, ReaderOptions{})
	defer r.Close()
	golden.Run(t, "testdata/table_v1", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "describe":
			return describeTable(t, r, data)
		case "verify":
			if err := r.Verify(); err != nil {
				return "error: " + err.Error()
			}
			return "ok"
		case "scan":
			var lines []string
			it := r.NewIter(IterOptions{})
			for ok := it.First(); ok; ok = it.Next() {
				lines = append(lines, fmt.Sprintf("%s #%s.%d %s", golden.Printable(it.UserKey()), it.Trailer().Kind(), it.Trailer().SeqNum(), golden.Printable(it.Value())))
			}
			require.NoError(t, it.Error())
			require.NoError(t, it.Close())
			for _, d := range r.RangeDeletions() {
				lines = append(lines, fmt.Sprintf("rangedel [%s, %s) #%d", golden.Printable(d.Start), golden.Printable(d.End), d.Seq))
			}
			return strings.Join(lines, "\n")
		case "get":
			var lines []string
			for _, l := range c.Lines() {
				f := strings.Fields(l)
				key, err := golden.ParseBytes(f[0])
				require.NoError(t, err)
				seq, err := strconv.ParseUint(f[1], 0, 64)
				require.NoError(t, err)
				lk := MakeLookup(key, base.SeqNum(seq))
				v, tr, found, err := r.Get(nil, &lk, nil)
				switch {
				case err != nil:
					lines = append(lines, fmt.Sprintf("%s: error %v", l, err))
				case !found:
					lines = append(lines, l+": not found")
				default:
					lines = append(lines, fmt.Sprintf("%s: #%s.%d %s", l, tr.Kind(), tr.SeqNum(), golden.Printable(v)))
				}
			}
			return strings.Join(lines, "\n")
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}

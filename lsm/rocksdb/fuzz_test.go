package rocksdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The fuzz targets check that no input makes a decoder panic, hang or
// allocate without bound; seeds from the fixtures live in testdata/fuzz
// (TestWriteFuzzSeeds rewrites them).

func FuzzTable(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := openTableFile("t.sst", nopFile{data}, nil)
		if err != nil {
			return
		}
		it := &tableIter{t: tb, block: len(tb.index)}
		n := 0
		for it.First(); it.Valid() && n < 100000; it.Next() {
			n++
		}
		it.SeekGE([]byte("key"))
		tb.get([]byte("key"))
		if len(tb.index) > 0 {
			tb.get(tb.index[0].key)
		}
	})
}

// FuzzFooter decodes table footers of every format_version, at any file
// offset; a format_version >= 6 footer it accepts must place the metaindex
// right before itself.
func FuzzFooter(f *testing.F) {
	f.Fuzz(func(t *testing.T, tail []byte, off int64) {
		if off < 0 {
			off = -off
		}
		ft, err := decodeFooter("t.sst", tail, off)
		if err != nil {
			if !isKind(err) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		if ft.formatVersion >= 6 {
			end := uint64(off) + uint64(len(tail)) - footerSize
			if ft.metaindex.offset+ft.metaindex.size+blockTrailerSize != end || ft.baseContext == 0 {
				t.Fatalf("footer at %d: metaindex %s, base context %#x", end, ft.metaindex, ft.baseContext)
			}
		}
	})
}

// FuzzBlockChecksum seals a block with each checksum type and a context
// modifier (format_version >= 6) at some offset, as RocksDB's writer does,
// and reads it back: it must verify, and with any one byte of its contents
// or compression type changed it must not.
func FuzzBlockChecksum(f *testing.F) {
	f.Fuzz(func(t *testing.T, typ byte, base uint32, at uint16, contents []byte, ctype byte) {
		typ %= checksumXXH3 + 1
		off := uint64(at % 4096)
		data := make([]byte, off+uint64(len(contents))+blockTrailerSize)
		copy(data[off:], contents)
		data[off+uint64(len(contents))] = ctype
		h := blockHandle{offset: off, size: uint64(len(contents))}
		ft := footer{checksum: typ, formatVersion: 6, baseContext: base}
		if base == 0 {
			ft.formatVersion = 5
		}
		resealBlock(data, ft, h)
		tb := &table{name: "t.sst", f: nopFile{data}, size: int64(len(data)), footer: ft}
		if _, err := tb.readBlock(h, "data"); err != nil && strings.Contains(err.Error(), "checksum mismatch") {
			t.Fatalf("a sealed block fails its checksum: %v", err)
		}
		if typ == checksumNone {
			return
		}
		i := off + uint64(len(contents)*7/11) // contents or, when empty, the compression type
		data[i] ^= 0x20
		if _, err := tb.readBlock(h, "data"); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Fatalf("byte %d changed, %s: %v", i, describeChecksum(typ), err)
		}
	})
}

func FuzzBlock(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range []blockKind{dataBlock, indexBlock, deltaIndexBlock} {
			decodeBlock(data, k)
		}
		seekDataBlock(data, []byte("key"))
		seekDataBlock(data, nil)
	})
}

func FuzzDecompress(f *testing.F) {
	f.Fuzz(func(t *testing.T, typ byte, data []byte) {
		decompress(typ, data, 2)
		decompress(typ, data, 1)
	})
}

func FuzzLogReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newLogReader("f.log", bytes.NewReader(data), int64(len(data)), 16)
		for {
			rec, off, err := r.next()
			if err != nil {
				if err != io.EOF && !isKind(err) {
					t.Fatalf("error of no kind: %v", err)
				}
				return
			}
			decodeBatch("f.log", off, rec, func(batchOp) error { return nil })
			decodeVersionEdit("f.log", off, rec)
		}
	})
}

func FuzzVersionEdit(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeVersionEdit("MANIFEST", 0, data); err != nil && !isKind(err) {
			t.Fatalf("error of no kind: %v", err)
		}
	})
}

func FuzzWriteBatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		err := decodeBatch("w.log", 0, data, func(op batchOp) error {
			if op.kind != typeValue && op.kind != typeDeletion && op.kind != typeSingleDeletion && op.kind != typeRangeDeletion {
				t.Fatalf("op of kind %d", op.kind)
			}
			return nil
		})
		if err != nil && !isKind(err) {
			t.Fatalf("error of no kind: %v", err)
		}
	})
}

func isKind(err error) bool {
	return errors.Is(err, ErrCorruption) || errors.Is(err, ErrUnsupported)
}

// TestWriteFuzzSeeds rewrites testdata/fuzz from the fixtures when
// ROCKSDB_WRITE_SEEDS is set.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("ROCKSDB_WRITE_SEEDS") == "" {
		t.Skip("set ROCKSDB_WRITE_SEEDS=1 to rewrite testdata/fuzz")
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(target, name string, args ...interface{}) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.WriteString("go test fuzz v1\n")
		for _, a := range args {
			switch v := a.(type) {
			case []byte:
				fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(v)))
			case byte:
				fmt.Fprintf(&b, "byte(%d)\n", v)
			case int64:
				fmt.Fprintf(&b, "int64(%d)\n", v)
			case uint32:
				fmt.Fprintf(&b, "uint32(%d)\n", v)
			case uint16:
				fmt.Fprintf(&b, "uint16(%d)\n", v)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"bk-fv5/000015.sst", "bk-fv5/000017.sst", "bk-fv2/000017.sst",
		"bk-fv5-partitioned/000017.sst", "snappy-crc32c-fv4/000017.sst", "snappy-crc32c-fv4/000013.sst",
		"none-xxhash64-fv3/000017.sst", "rocksdbjni/loc-v10-fv7-xxh3-lz4/000011.sst",
		"rocksdbjni/loc-v10-fv6-xxh3-none/000011.sst", "rocksdbjni/loc-v9-fv6-xxh3-lz4/000011.sst",
		"ldb/ldb-compact-ledgers/000020.sst"} {
		data := read(p)
		name := strings.ReplaceAll(filepath.Dir(p), "/", "-")
		write("FuzzTable", name+"-"+filepath.Base(p), data)
		write("FuzzFooter", name+"-"+filepath.Base(p), data[len(data)-footerSize:], int64(len(data)-footerSize))
		tb, err := openTableFile(p, nopFile{data}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := tb.index[0].handle
		raw := data[h.offset : h.offset+h.size]
		write("FuzzDecompress", name+"-"+filepath.Base(p), data[h.offset+h.size], raw)
		write("FuzzBlockChecksum", name+"-"+filepath.Base(p), tb.footer.checksum, tb.footer.baseContext,
			uint16(h.offset), raw, data[h.offset+h.size])
		block, err := tb.readBlock(h, "data")
		if err != nil {
			t.Fatal(err)
		}
		write("FuzzBlock", name+"-data", block)
		index, err := tb.readBlock(tb.footer.index, "index")
		if err != nil {
			t.Fatal(err)
		}
		write("FuzzBlock", name+"-index", index)
	}
	for _, p := range []string{"bk-fv5/000016.log", "none-xxhash64-fv3/000016.log", "bk-fv5/MANIFEST-000005"} {
		data := read(p)
		write("FuzzLogReader", filepath.Dir(p)+"-"+filepath.Base(p), data)
		r := newLogReader(p, bytes.NewReader(data), int64(len(data)), 16)
		for i := 0; ; i++ {
			rec, _, err := r.next()
			if err != nil {
				break
			}
			target := "FuzzWriteBatch"
			if filepath.Base(p) == "MANIFEST-000005" {
				target = "FuzzVersionEdit"
			}
			write(target, fmt.Sprintf("%s-%d", filepath.Dir(p), i), rec)
		}
	}
}

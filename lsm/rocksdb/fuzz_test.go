package rocksdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"bk-fv5/000015.sst", "bk-fv5/000017.sst", "bk-fv2/000017.sst",
		"bk-fv5-partitioned/000017.sst", "snappy-crc32c-fv4/000017.sst", "snappy-crc32c-fv4/000013.sst",
		"none-xxhash64-fv3/000017.sst"} {
		data := read(p)
		write("FuzzTable", filepath.Dir(p)+"-"+filepath.Base(p), data)
		tb, err := openTableFile(p, nopFile{data}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := tb.index[0].handle
		raw := data[h.offset : h.offset+h.size]
		write("FuzzDecompress", filepath.Dir(p)+"-"+filepath.Base(p), data[h.offset+h.size], raw)
		block, err := tb.readBlock(h, "data")
		if err != nil {
			t.Fatal(err)
		}
		write("FuzzBlock", filepath.Dir(p)+"-data", block)
		index, err := tb.readBlock(tb.footer.index, "index")
		if err != nil {
			t.Fatal(err)
		}
		write("FuzzBlock", filepath.Dir(p)+"-index", index)
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

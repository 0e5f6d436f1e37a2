package rocksdb

import (
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var long = flag.Bool("long", false, "flip every byte of the fixtures, not a sample")

// openScan opens and scans a database, as a migration would.
func openScan(t *testing.T, name string, edit func(file string, data []byte) []byte) ([][2][]byte, error) {
	kvs, _, err := openScanProps(t, name, edit)
	return kvs, err
}

func openScanProps(t *testing.T, name string, edit func(file string, data []byte) []byte) ([][2][]byte, Props, error) {
	t.Helper()
	fs, dir := loadFixture(t, name, edit)
	db, err := Open(fs, dir)
	if err != nil {
		return nil, Props{}, err
	}
	defer db.Close()
	kvs, err := scanAll(db)
	return kvs, db.Props(), err
}

func flipAt(file string, off int) func(string, []byte) []byte {
	return func(f string, data []byte) []byte {
		if f == file {
			if off < 0 {
				off += len(data)
			}
			data[off] ^= 0x40
		}
		return data
	}
}

// TestCorruptionNamed damages chosen parts of a fixture and checks the
// error names the file, the block and the offset.
func TestCorruptionNamed(t *testing.T) {
	const name = "bk-fv5"
	for _, c := range []struct {
		what string
		edit func(string, []byte) []byte
		kind error
		msg  string
	}{
		{"data block", flipAt("000010.sst", 100), ErrCorruption, "/db/000010.sst: data block 0+"},
		{"table magic", flipAt("000010.sst", -1), ErrUnsupported, "/db/000010.sst: table magic"},
		{"footer handle", flipAt("000010.sst", -50), ErrCorruption, "/db/000010.sst: "},
		{"truncated table", func(f string, d []byte) []byte {
			if f == "000013.sst" {
				return d[:len(d)-1]
			}
			return d
		}, ErrCorruption, "/db/000013.sst: file is"},
		{"manifest", flipAt("MANIFEST-000005", 20), ErrCorruption, "/db/MANIFEST-000005: offset 0: record checksum mismatch"},
		{"manifest length, as if torn", flipAt("MANIFEST-000005", 5), ErrCorruption,
			"/db/MANIFEST-000005: offset 0: record length 16412 runs past the end of the file, but a valid record follows at offset 35"},
		{"manifest cut after its first record", func(f string, d []byte) []byte {
			if f == "MANIFEST-000005" {
				return d[:40]
			}
			return d
		}, ErrCorruption, "/db/MANIFEST-000005: no next file number"},
		{"current", func(f string, d []byte) []byte {
			if f == "CURRENT" {
				return []byte("garbage")
			}
			return d
		}, ErrCorruption, "/db/CURRENT:"},
		{"wal", flipAt("000016.log", 20), ErrCorruption, "/db/000016.log: offset 0: record checksum mismatch"},
		{"lz4 payload with a valid checksum", func(f string, d []byte) []byte {
			if f != "000010.sst" {
				return d
			}
			// Damage the first data block's LZ4 stream, then re-sign it.
			size := blockSizeAt(t, d, 0)
			for i := 8; i < 40; i++ {
				d[i] = 0xff
			}
			binary.LittleEndian.PutUint32(d[size+1:], xxh32(d[:size+1], nil))
			return d
		}, ErrCorruption, "/db/000010.sst: data block 0+"},
	} {
		t.Run(c.what, func(t *testing.T) {
			_, err := openScan(t, name, c.edit)
			require.Error(t, err)
			require.ErrorIs(t, err, c.kind)
			require.Contains(t, err.Error(), c.msg)
			t.Log(err)
		})
	}
	_, err := openScan(t, name, func(f string, d []byte) []byte {
		if f == "000013.sst" {
			return nil
		}
		return d
	})
	require.Error(t, err)
}

// TestCorruptionGet: a lookup that reads a damaged block says which.
func TestCorruptionGet(t *testing.T) {
	fs, dir := loadFixture(t, "bk-fv5", flipAt("000010.sst", 100))
	db, err := Open(fs, dir)
	require.NoError(t, err) // data blocks are read on demand
	defer db.Close()
	_, err = db.Get(entryKey(1, 1))
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "/db/000010.sst: data block 0+")
	_, err = db.Get(entryKey(20, 1)) // another block
	require.NoError(t, err)
}

// TestTornWALTail cuts the WAL inside its last record: the database opens
// without it, and Props names what was ignored.
func TestTornWALTail(t *testing.T) {
	fs, dir := loadFixture(t, "bk-fv5", func(f string, d []byte) []byte {
		if f == "000016.log" {
			return d[:len(d)-3]
		}
		return d
	})
	db, err := Open(fs, dir)
	require.NoError(t, err)
	defer db.Close()
	p := db.Props()
	require.Len(t, p.Torn, 1)
	require.Equal(t, "000016.log", p.Torn[0].File)
	require.Equal(t, p.WALOperations, 43) // the last batch, one put, is gone
	_, err = db.Get(entryKey(10, 3))
	require.ErrorIs(t, err, ErrNotFound)

	db2, err := Open(loadFixture(t, "bk-fv5", nil))
	require.NoError(t, err)
	defer db2.Close()
	require.Empty(t, db2.Props().Torn)
}

// blockSizeAt returns the size of the block at off of a table, from the
// table's index (the first data block starts at 0).
func blockSizeAt(t *testing.T, data []byte, off uint64) int {
	t.Helper()
	f, err := decodeFooter("t", data[len(data)-footerSize:], int64(len(data)-footerSize))
	require.NoError(t, err)
	tb := &table{name: "t", f: nopFile{data}, size: int64(len(data)), footer: f}
	require.NoError(t, tb.readMeta())
	require.NoError(t, tb.readIndex())
	for _, e := range tb.index {
		if e.handle.offset == off {
			return int(e.handle.size)
		}
	}
	t.Fatalf("no block at %d", off)
	return 0
}

// TestCorruptionSweep flips one byte at a time across every file of two
// fixtures: the reader must never panic, and must either fail or return
// exactly ldb's answer. Bytes it never reads (filters, OPTIONS) may change
// freely; only damage to a WAL's last record may shorten the answer, as it
// does in RocksDB, and Props.Torn must then name it.
func TestCorruptionSweep(t *testing.T) {
	stride := 113
	if *long {
		stride = 1
	}
	for _, name := range []string{"bk-fv5", "bk-fv5-partitioned", "snappy-crc32c-fv4"} {
		want := ldbScan(t, filepath.Join("testdata", name+".scan.txt"))
		var errs, same, tail int
		for _, file := range fixtureFiles(t, name) {
			if file == "LOCK" || file == "IDENTITY" || strings.HasPrefix(file, "OPTIONS") {
				continue
			}
			info, err := os.Stat(filepath.Join("testdata", name, file))
			require.NoError(t, err)
			for off := 0; off < int(info.Size()); off += stride {
				got, props, err := openScanProps(t, name, flipAt(file, off))
				switch {
				case err != nil:
					errs++
				case equalKVs(got, want):
					same++
				case strings.HasSuffix(file, ".log") && len(props.Torn) == 1 && props.Torn[0].File == file:
					tail++ // reported as torn
				default:
					t.Fatalf("%s: byte %d of %s flipped: wrong answer without an error", name, off, file)
				}
			}
		}
		t.Logf("%s: %d errors, %d unchanged answers, %d shortened by a torn WAL tail", name, errs, same, tail)
	}
}

func equalKVs(a, b [][2][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i][0]) != string(b[i][0]) || string(a[i][1]) != string(b[i][1]) {
			return false
		}
	}
	return true
}

// nopFile is an in-memory table for tests that decode parts of one.
type nopFile struct{ b []byte }

func (f nopFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(f.b)) {
		return 0, os.ErrInvalid
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, os.ErrInvalid
	}
	return n, nil
}
func (f nopFile) Write([]byte) (int, error) { return 0, os.ErrPermission }
func (f nopFile) Close() error              { return nil }
func (f nopFile) Sync() error               { return nil }
func (f nopFile) Datasync() error           { return nil }
func (f nopFile) WriteAt([]byte, int64) (int, error) {
	return 0, os.ErrPermission
}
func (f nopFile) Size() (int64, error) { return int64(len(f.b)), nil }

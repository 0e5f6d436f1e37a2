package rocksdb

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// logFile encodes records in the log format.
func logFile(t *testing.T, recs ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for _, r := range recs {
		_, err := w.WriteRecord(r)
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	return buf.Bytes()
}

// edit builds a version edit from (tag, value) pairs; values are uint64
// (varint), string (varstring) or []byte (raw).
func edit(fields ...interface{}) []byte {
	var b []byte
	for i := 0; i < len(fields); i += 2 {
		b = binary.AppendUvarint(b, uint64(fields[i].(int)))
		switch v := fields[i+1].(type) {
		case int:
			b = binary.AppendUvarint(b, uint64(v))
		case string:
			b = putSlice(b, v)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

// batch builds a WriteBatch at seq of already-encoded records.
func batch(seq uint64, count uint32, recs ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, seq)
	b = binary.LittleEndian.AppendUint32(b, count)
	for _, r := range recs {
		b = append(b, r...)
	}
	return b
}

func put(key, value string) []byte { return putSlice(putSlice([]byte{typeValue}, key), value) }

// memDB writes a database of only a MANIFEST (and the given WALs) to a
// MemFS.
func memDB(t *testing.T, edits [][]byte, wals map[string][]byte) (vfs.FS, string) {
	fs := vfs.NewMem()
	require.NoError(t, fs.MkdirAll("/db", 0o755))
	writeFile(t, fs, "/db/CURRENT", []byte("MANIFEST-000001\n"))
	writeFile(t, fs, "/db/MANIFEST-000001", logFile(t, edits...))
	for name, data := range wals {
		writeFile(t, fs, filepath.Join("/db", name), data)
	}
	return fs, "/db"
}

func TestManifestRefusals(t *testing.T) {
	base := edit(tagComparator, bytewiseComparator, tagLogNumber, 2, tagNextFileNumber, 3, tagLastSequence, 0)
	for _, c := range []struct {
		what  string
		edits [][]byte
		wals  map[string][]byte
		kind  error
		msg   string
	}{
		{"comparator", [][]byte{edit(tagComparator, "rocksdb.ReverseBytewiseComparator")}, nil,
			ErrUnsupported, `comparator "rocksdb.ReverseBytewiseComparator"`},
		{"column family with tables", [][]byte{base,
			edit(tagColumnFamily, 1, tagColumnFamilyAdd, "other"),
			edit(tagColumnFamily, 1, tagNewFile2, append(append(binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 0), 9), 100),
				putSlice(putSlice(nil, string(ikey("a", 1, typeValue))), string(ikey("b", 1, typeValue)))...), 1, 1))},
			nil, ErrUnsupported, `column family "other" (id 1) holds 1 tables`},
		{"column family in the WAL", [][]byte{base, edit(tagColumnFamily, 1, tagColumnFamilyAdd, "other")},
			map[string][]byte{"000002.log": logFile(t, batch(1, 1, putSlice(putSlice([]byte{batchCFValue, 1}, "k"), "v")))},
			ErrUnsupported, `/db/000002.log: offset 0: write to column family "other" (id 1)`},
		{"deleted file not there", [][]byte{base, edit(tagDeletedFile, []byte{1, 7})}, nil,
			ErrCorruption, "/db/MANIFEST-000001: offset 41: deletes table 000007 from L1"},
		{"merge in the WAL", [][]byte{base},
			map[string][]byte{"000002.log": logFile(t, batch(1, 1, putSlice(putSlice([]byte{typeMerge}, "k"), "v")))},
			ErrUnsupported, "/db/000002.log: offset 0: write batch record at 12: merge record for key 6b"},
		{"merge in a column family record of the WAL", [][]byte{base},
			map[string][]byte{"000002.log": logFile(t, batch(1, 1, putSlice(putSlice([]byte{batchCFMerge, 0}, "\x00\x01"), "v")))},
			ErrUnsupported, "/db/000002.log: offset 0: write batch record at 12: merge record for key 0001"},
		{"missing table", [][]byte{base, edit(tagNewFile2, append(append([]byte{6, 9, 100},
			putSlice(putSlice(nil, string(ikey("a", 1, typeValue))), string(ikey("b", 1, typeValue)))...), 1, 1))},
			nil, nil, "/db/000009.sst"},
	} {
		t.Run(c.what, func(t *testing.T) {
			fs, dir := memDB(t, c.edits, c.wals)
			_, err := Open(fs, dir)
			require.Error(t, err)
			if c.kind != nil {
				require.ErrorIs(t, err, c.kind)
			}
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestWALSelection replays WALs at and above the log number, in number
// order, and skips older ones (the previous log number included); an
// incomplete atomic group at the MANIFEST's end is not applied.
func TestWALSelection(t *testing.T) {
	edits := [][]byte{
		edit(tagComparator, bytewiseComparator, tagLogNumber, 5, tagPrevLogNumber, 3, tagNextFileNumber, 9, tagLastSequence, 10),
		// An atomic group cut short: its log number never applies.
		edit(tagInAtomicGroup, 1, tagLogNumber, 8),
	}
	wals := map[string][]byte{
		"000002.log": logFile(t, batch(1, 1, put("old", "flushed"))),
		"000003.log": logFile(t, batch(11, 1, put("prev", "p"))),
		"000005.log": logFile(t, batch(12, 2, put("k", "v1"), put("j", "x"))),
		"000007.log": logFile(t, batch(14, 1, put("k", "v2")), batch(15, 1, putSlice([]byte{typeDeletion}, "j"))),
		"7.log.tmp":  []byte("not a WAL"),
	}
	fs, dir := memDB(t, edits, wals)
	db, err := Open(fs, dir)
	require.NoError(t, err)
	defer db.Close()
	got, err := scanAll(db)
	require.NoError(t, err)
	require.Equal(t, [][2][]byte{{[]byte("k"), []byte("v2")}}, got)
	p := db.Props()
	require.Equal(t, []string{"000005.log", "000007.log"}, p.WALs)
	require.Equal(t, uint64(15), p.LastSequence)
	require.Equal(t, uint64(5), p.LogNumber)
}

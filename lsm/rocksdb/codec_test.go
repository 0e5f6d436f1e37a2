package rocksdb

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/crc"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func TestXXH32(t *testing.T) {
	// Check values from the xxHash reference implementation, seed 0.
	require.Equal(t, uint32(0x02cc5d05), xxh32(nil, nil))
	require.Equal(t, uint32(0x32d153ff), xxh32([]byte("abc"), nil))
	long := []byte("Nobody inspects the spammish repetition")
	require.Equal(t, uint32(0xe2293b2f), xxh32(long, nil))
	require.Equal(t, xxh32(long, nil), xxh32(long[:20], long[20:]))
}

func TestSnappyDecode(t *testing.T) {
	// "abc" as a literal, then a one-byte-offset copy of 8 that overlaps
	// its own output.
	got, err := snappyDecode([]byte{11, 0x08, 'a', 'b', 'c', 0x11, 3})
	require.NoError(t, err)
	require.Equal(t, "abcabcabcab", string(got))
	// A two-byte-offset copy.
	got, err = snappyDecode([]byte{6, 0x08, 'x', 'y', 'z', 0x0a, 3, 0})
	require.NoError(t, err)
	require.Equal(t, "xyzxyz", string(got))
	// A literal with a one-byte length (60).
	lit := bytes.Repeat([]byte{'q'}, 70)
	got, err = snappyDecode(append([]byte{70, 60 << 2, 69}, lit...))
	require.NoError(t, err)
	require.Equal(t, lit, got)
	for _, bad := range [][]byte{
		nil,
		{5, 0x08, 'a'},                    // truncated literal
		{4, 0x11, 3},                      // copy before any output
		{3, 0x08, 'a', 'b', 'c', 0x11, 3}, // longer than declared
		{0xff, 0xff, 0xff, 0xff, 0x7f},    // absurd length
	} {
		_, err := snappyDecode(bad)
		require.Error(t, err, "%x", bad)
	}
}

// TestLogReader writes records of every size class (within a block, across
// blocks, empty) with the engine's own writer of the same LevelDB format and
// reads them back.
func TestLogReader(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	var recs [][]byte
	for _, n := range []int{0, 1, 100, logBlockSize - 2*logHeaderSize, logBlockSize, 3*logBlockSize + 17, 5} {
		r := make([]byte, n)
		rng.Read(r)
		if n == 0 {
			r = []byte{}
		}
		recs = append(recs, r)
		_, err := w.WriteRecord(r)
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	data := buf.Bytes()
	read := func(data []byte) ([][]byte, error) {
		r := newLogReader("test.log", bytes.NewReader(data), int64(len(data)), 1)
		var got [][]byte
		for {
			rec, _, err := r.next()
			if err == io.EOF {
				return got, nil
			} else if err != nil {
				return got, err
			}
			got = append(got, append([]byte{}, rec...))
		}
	}
	got, err := read(data)
	require.NoError(t, err)
	require.Equal(t, recs, got)

	// A tail torn anywhere in the last record ends the log before it.
	last := len(data) - (logHeaderSize + 5)
	for cut := last; cut < len(data); cut++ {
		got, err := read(data[:cut])
		require.NoError(t, err, "cut at %d", cut)
		require.Equal(t, recs[:len(recs)-1], got, "cut at %d", cut)
	}
	// Preallocated zeros after the records end the log too.
	got, err = read(append(append([]byte(nil), data...), make([]byte, 100)...))
	require.NoError(t, err)
	require.Equal(t, recs, got)

	// A length damaged to run past the end, with valid records after it,
	// is damage, not a torn tail.
	lastBlock := (len(data) - 1) / logBlockSize * logBlockSize
	bad := append([]byte(nil), data...)
	bad[lastBlock+5] = 0x7f // the last block's first record's length, high byte
	_, err = read(bad)
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "runs past the end of the file, but a valid record follows")

	// Damage before the tail is an error naming the file and offset.
	bad = append([]byte(nil), data...)
	bad[logHeaderSize+2] ^= 1 // the third record's header
	_, err = read(bad)
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "test.log: offset 7: record checksum mismatch")
}

// TestLogReaderRecyclable reads 11-byte recyclable headers and stops at a
// record of the file's previous use.
func TestLogReaderRecyclable(t *testing.T) {
	rec := func(typ byte, logNum uint32, payload []byte) []byte {
		h := make([]byte, logRecyclableHeaderSize)
		binary.LittleEndian.PutUint16(h[4:], uint16(len(payload)))
		h[6] = typ
		binary.LittleEndian.PutUint32(h[7:], logNum)
		c := crc.Extend(crc.Extend(0, h[6:]), payload)
		binary.LittleEndian.PutUint32(h, crc.Mask(c))
		return append(h, payload...)
	}
	var data []byte
	data = append(data, rec(recRecyclableFull, 7, []byte("one"))...)
	data = append(data, rec(recRecyclableFull+1, 7, []byte("tw"))...)
	data = append(data, rec(recRecyclableLast, 7, []byte("o"))...)
	data = append(data, rec(recRecyclableFull, 6, []byte("old"))...)
	r := newLogReader("000007.log", bytes.NewReader(data), int64(len(data)), 7)
	var got []string
	for {
		b, _, err := r.next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, string(b))
	}
	require.Equal(t, []string{"one", "two"}, got)

	// A block tail of 7 to 10 bytes is padding for a recyclable writer,
	// not the end of the log.
	for pad := logHeaderSize; pad < logRecyclableHeaderSize; pad++ {
		first := rec(recRecyclableFull, 7, make([]byte, logBlockSize-pad-logRecyclableHeaderSize))
		data := append(append(first, make([]byte, pad)...), rec(recRecyclableFull, 7, []byte("next"))...)
		r := newLogReader("000007.log", bytes.NewReader(data), int64(len(data)), 7)
		_, _, err := r.next()
		require.NoError(t, err)
		b, off, err := r.next()
		require.NoError(t, err, "pad %d", pad)
		require.Equal(t, "next", string(b))
		require.Equal(t, int64(logBlockSize), off)
	}
}

func putSlice(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func TestDecodeBatch(t *testing.T) {
	b := make([]byte, batchHeaderSize)
	binary.LittleEndian.PutUint64(b, 100)
	binary.LittleEndian.PutUint32(b[8:], 5)
	b = putSlice(append(b, typeValue), "k1")
	b = putSlice(b, "v1")
	b = putSlice(append(b, batchLogData), "blob") // takes no sequence number
	b = putSlice(append(b, typeDeletion), "k2")
	b = putSlice(append(b, typeSingleDeletion), "k3")
	b = putSlice(putSlice(append(b, typeRangeDeletion), "a"), "c")
	b = putSlice(putSlice(append(b, batchCFValue, 0), "k4"), "v4")
	var got []batchOp
	require.NoError(t, decodeBatch("w", 0, b, func(op batchOp) error {
		got = append(got, op)
		return nil
	}))
	require.Equal(t, []batchOp{
		{seq: 100, kind: typeValue, key: []byte("k1"), value: []byte("v1")},
		{seq: 101, kind: typeDeletion, key: []byte("k2")},
		{seq: 102, kind: typeSingleDeletion, key: []byte("k3")},
		{seq: 103, kind: typeRangeDeletion, key: []byte("a"), value: []byte("c")},
		{seq: 104, kind: typeValue, key: []byte("k4"), value: []byte("v4")},
	}, got)

	noop := func(batchOp) error { return nil }
	err := decodeBatch("w", 9, b[:len(b)-1], noop)
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "w: offset 9: write batch record at")
	merge := putSlice(putSlice(append(append([]byte(nil), b[:batchHeaderSize]...), typeMerge), "k"), "v")
	require.ErrorIs(t, decodeBatch("w", 0, merge, noop), ErrUnsupported)
	miscounted := append([]byte(nil), b...)
	miscounted[8] = 6
	require.ErrorIs(t, decodeBatch("w", 0, miscounted, noop), ErrCorruption)
	stop := errors.New("stop")
	require.ErrorIs(t, decodeBatch("w", 0, b, func(batchOp) error { return stop }), stop)
}

func ikey(user string, seq uint64, kind uint8) []byte {
	return binary.LittleEndian.AppendUint64([]byte(user), seq<<8|uint64(kind))
}

func TestDecodeVersionEdit(t *testing.T) {
	var b []byte
	b = putSlice(binary.AppendUvarint(b, tagComparator), bytewiseComparator)
	b = binary.AppendUvarint(binary.AppendUvarint(b, tagLogNumber), 12)
	b = binary.AppendUvarint(binary.AppendUvarint(b, tagNextFileNumber), 14)
	b = binary.AppendUvarint(binary.AppendUvarint(b, tagLastSequence), 999)
	b = binary.AppendUvarint(b, tagNewFile4)
	b = binary.AppendUvarint(b, 6)    // level
	b = binary.AppendUvarint(b, 10)   // number
	b = binary.AppendUvarint(b, 4096) // size
	b = putSlice(b, string(ikey("a", 5, typeValue)))
	b = putSlice(b, string(ikey("z", 9, typeValue)))
	b = binary.AppendUvarint(binary.AppendUvarint(b, 5), 9)
	b = putSlice(binary.AppendUvarint(b, 6), "creation time") // ignorable field
	b = binary.AppendUvarint(b, fieldTerminate)
	b = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(b, tagDeletedFile), 0), 8)
	b = putSlice(binary.AppendUvarint(b, tagSafeIgnoreMask+1), "db id") // ignorable tag
	e, err := decodeVersionEdit("MANIFEST-000001", 0, b)
	require.NoError(t, err)
	require.Equal(t, bytewiseComparator, e.comparator)
	require.Equal(t, uint64(12), e.logNumber)
	require.Equal(t, uint64(999), e.lastSequence)
	require.Equal(t, []deletedFile{{level: 0, num: 8}}, e.deleted)
	require.Len(t, e.added, 1)
	require.Equal(t, fileMeta{level: 6, num: 10, size: 4096, smallest: ikey("a", 5, typeValue),
		largest: ikey("z", 9, typeValue), smallestSeq: 5, largestSeq: 9}, e.added[0])

	_, err = decodeVersionEdit("MANIFEST-000001", 33, binary.AppendUvarint(nil, 108))
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "MANIFEST-000001: offset 33: version edit: unknown tag 108")
	_, err = decodeVersionEdit("m", 0, b[:len(b)-3])
	require.ErrorIs(t, err, ErrCorruption)
	_, err = decodeVersionEdit("m", 0, binary.AppendUvarint(nil, tagBlobFileAddition))
	require.ErrorIs(t, err, ErrUnsupported)
}

func TestRangeDels(t *testing.T) {
	r := newRangeDels([]tombstone{
		{start: []byte("b"), end: []byte("f"), seq: 10},
		{start: []byte("d"), end: []byte("h"), seq: 20},
		{start: []byte("x"), end: []byte("x"), seq: 30}, // empty
	})
	for k, want := range map[string]uint64{"a": 0, "b": 10, "c": 10, "d": 20, "e": 20, "f": 20, "g": 20, "h": 0, "x": 0} {
		require.Equal(t, want, r.maxSeq([]byte(k)), k)
	}
	// Truncation to a table's bounds: inclusive, or exclusive at a range
	// deletion's sentinel.
	meta := &fileMeta{smallest: ikey("c", 1, typeValue), largest: ikey("e", 1, typeValue)}
	tr, ok := truncate(tombstone{start: []byte("a"), end: []byte("z"), seq: 5}, meta)
	require.True(t, ok)
	require.Equal(t, tombstone{start: []byte("c"), end: []byte("e\x00"), seq: 5}, tr)
	meta.largest = ikey("e", maxSequence, typeRangeDeletion)
	tr, _ = truncate(tombstone{start: []byte("a"), end: []byte("z"), seq: 5}, meta)
	require.Equal(t, []byte("e"), tr.end)
	_, ok = truncate(tombstone{start: []byte("f"), end: []byte("z"), seq: 5}, meta)
	require.False(t, ok)
}

package manifest

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestEditEncodingGolden pins the persisted encoding: it is the example of
// the package documentation.
func TestEditEncodingGolden(t *testing.T) {
	e := &VersionEdit{
		LogNumber: 5,
		NewTables: []NewTable{{Level: 0, Meta: &TableMeta{
			FileNum: 7, Size: 100,
			Smallest: ikey("a", 3, base.KindSet), Largest: ikey("b", 4, base.KindSet),
			SmallestSeqNum: 3, LargestSeqNum: 4, Entries: 2,
		}}},
	}
	const want = "0105" + "06000764" + "0161" + "0103000000000000" + "0162" + "0104000000000000" + "03040200"
	require.Equal(t, want, hex.EncodeToString(e.Encode(nil)))

	var got VersionEdit
	require.NoError(t, got.Decode(e.Encode(nil)))
	require.Equal(t, e, &got)
}

func TestEditRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var buf []byte
	for range iterations(2000) {
		e := randEdit(rng)
		buf = e.Encode(buf[:0])
		var got VersionEdit
		require.NoError(t, got.Decode(buf))
		require.Equal(t, e, &got)
		// The decoded edit must not alias the buffer.
		for i := range buf {
			buf[i] = 0xff
		}
		require.Equal(t, e, &got)
	}
}

func TestEditEncodeSortsDeletions(t *testing.T) {
	e := &VersionEdit{DeletedTables: []DeletedTable{{2, 9}, {1, 5}, {2, 3}}}
	var got VersionEdit
	require.NoError(t, got.Decode(e.Encode(nil)))
	require.Equal(t, []DeletedTable{{1, 5}, {2, 3}, {2, 9}}, got.DeletedTables)
}

// TestEditDecodeTruncated cuts random edits at every length: each prefix
// decodes (if it ends between fields) or fails with corruption.
func TestEditDecodeTruncated(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	// Each failed decode builds an error with a stack trace, which is slow
	// under the race detector: a few dozen edits cover every field kind.
	for range iterations(30) {
		data := randEdit(rng).Encode(nil)
		fieldEnds := fieldBoundaries(t, data)
		for n := range len(data) {
			var e VersionEdit
			err := e.Decode(data[:n])
			if fieldEnds[n] {
				require.NoError(t, err, "prefix %d of %x", n, data)
			} else {
				require.Error(t, err, "prefix %d of %x", n, data)
				require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
			}
		}
	}
}

// fieldBoundaries returns the offsets of data where a field ends (and 0),
// found by decoding growing prefixes field by field.
func fieldBoundaries(t *testing.T, data []byte) map[int]bool {
	ends := map[int]bool{0: true}
	d := editDecoder{data: data}
	for d.off < len(data) {
		switch d.uvarint("tag") {
		case tagLogNumber, tagNextFileNum, tagLastSeqNum:
			d.uvarint("counter")
		case tagCompactPointer:
			d.level()
			d.internalKey("key")
		case tagDeletedTable:
			d.level()
			d.uvarint("file")
		case tagNewTable:
			d.newTable()
		default:
			t.Fatalf("unexpected tag in %x", data)
		}
		require.NoError(t, d.err)
		ends[d.off] = true
	}
	return ends
}

func TestEditDecodeErrors(t *testing.T) {
	valid := (&VersionEdit{LogNumber: 5}).Encode(nil)
	tableFields := func(level, fileNum uint64, lo, hi string, smallSeq, largeSeq, entries, rangeDels uint64) []byte {
		b := []byte{tagNewTable}
		b = binary.AppendUvarint(b, level)
		b = binary.AppendUvarint(b, fileNum)
		b = binary.AppendUvarint(b, 100)
		b = appendInternalKey(b, ikey(lo, 1, base.KindSet))
		b = appendInternalKey(b, ikey(hi, 1, base.KindSet))
		for _, v := range []uint64{smallSeq, largeSeq, entries, rangeDels} {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown tag", append(slices.Clone(valid), 0x63, 0x01), "unknown tag 99 at offset 2"},
		{"tag zero", []byte{0x00}, "unknown tag 0 at offset 0"},
		{"repeated counter", append(slices.Clone(valid), valid...), "tag 1 repeated at offset 2"},
		{"varint overflow", []byte{tagLogNumber, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
			"log number at offset 1: varint overflows 64 bits"},
		{"seqnum too large", binary.AppendUvarint([]byte{tagLastSeqNum}, uint64(base.SeqNumMax)+1),
			"last seqnum at offset 1: beyond the largest sequence number"},
		{"level out of range", []byte{tagDeletedTable, NumLevels, 0x01}, "level at offset 1: out of range"},
		{"huge key length", []byte{tagCompactPointer, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f, 'a'},
			"compact pointer at offset 7: key runs past the end"},
		{"key without trailer", []byte{tagCompactPointer, 0x01, 0x01, 'a', 0, 0, 0}, "key runs past the end"},
		{"inverted bounds", tableFields(1, 9, "z", "a", 1, 1, 2, 0), "smallest z#1,SET > largest a#1,SET"},
		{"inverted seqnums", tableFields(1, 9, "a", "z", 5, 1, 2, 0), "smallest seqnum 5 > largest seqnum 1"},
		{"file number zero", tableFields(1, 0, "a", "z", 1, 1, 2, 0), "file number 0"},
		{"range dels beyond entries", tableFields(1, 9, "a", "z", 1, 1, 2, 3), "3 range deletions among 2 entries"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var e VersionEdit
			err := e.Decode(c.data)
			require.Error(t, err)
			require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

// FuzzDecodeEdit feeds arbitrary bytes to Decode. It must never panic, must
// fail only with corruption, and what it decodes must re-encode into bytes
// that decode to the same edit.
//
//	go test -run=^$ -fuzz=FuzzDecodeEdit -fuzztime=30s ./lsm/internal/manifest/
func FuzzDecodeEdit(f *testing.F) {
	rng := rand.New(rand.NewSource(3))
	for range 5 {
		f.Add(randEdit(rng).Encode(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e VersionEdit
		if err := e.Decode(data); err != nil {
			require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
			require.True(t, strings.HasPrefix(err.Error(), "manifest: version edit"), "%v", err)
			return
		}
		var again VersionEdit
		require.NoError(t, again.Decode(e.Encode(nil)))
		// Encode writes counters only when non-zero and sorts deletions.
		slices.SortFunc(e.DeletedTables, func(a, b DeletedTable) int {
			return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.FileNum, b.FileNum))
		})
		require.Equal(t, e, again)
	})
}

package entrylog

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestExamineTail: what the bytes where a scan stops look like. A record
// cut short, or zeros to the end, are what an interrupted write leaves; a
// whole record that fails its checksum, a size out of range before
// non-zero bytes, or a size field that one corrected byte makes whole
// again are damage.
func TestExamineTail(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, MaxLogSizeLimit)
	var locs []int64
	for e := int64(0); e < 6; e++ {
		loc, err := l.AddEntry(3, e, payloadOf(3, e, 300+int(e)))
		require.NoError(t, err)
		locs = append(locs, loc)
	}
	require.NoError(t, l.Close())
	path := filepath.Join(testDir, LogFileName(0))
	good := readAll(t, fs, path)
	start := func(i int) int64 { return LocationOffset(locs[i]) - SizeFieldSize }

	examine := func(data []byte) (int64, TailShape, string) {
		t.Helper()
		writeFile(t, fs, path, data)
		res, err := Scan(fs, path, func(*Record) error { return nil })
		require.NoError(t, err)
		require.NotNil(t, res.Tail)
		shape, why, err := ExamineTail(fs, path, res.ValidEnd)
		require.NoError(t, err)
		t.Logf("%s: %s", shape, why)
		return res.ValidEnd, shape, why
	}
	flip := func(at int64, xor byte) []byte {
		b := append([]byte(nil), good...)
		b[at] ^= xor
		return b
	}

	// Cut inside the last record, inside its head, after its size field.
	for _, cut := range []int64{start(5) + 100, start(5) + 10, start(5) + 3} {
		off, shape, why := examine(good[:cut])
		require.Equal(t, start(5), off)
		require.Equal(t, TailCut, shape)
		require.Contains(t, why, "cut short")
	}
	// Zeros after the last record, and zeros in place of the last record
	// (a power loss: the length reached the disk, the pages did not).
	_, shape, why := examine(append(append([]byte(nil), good...), make([]byte, 5000)...))
	require.Equal(t, TailZeros, shape)
	require.Contains(t, why, "5000 zero bytes from offset")
	zeroed := append([]byte(nil), good...)
	clear(zeroed[start(5):])
	_, shape, _ = examine(zeroed)
	require.Equal(t, TailZeros, shape)

	// A flipped payload byte, in the middle and in the last record: whole
	// records that fail their checksum.
	for _, i := range []int{2, 5} {
		off, shape, why := examine(flip(start(i)+RecordOverhead+7, 0x40))
		require.Equal(t, start(i), off)
		require.Equal(t, TailDamaged, shape, "record %d", i)
		require.Contains(t, why, "is whole")
	}
	// Every byte of a size field, flipped every way: whatever the size
	// becomes (past the end, out of range, smaller), it is damage.
	for k := int64(0); k < SizeFieldSize; k++ {
		for _, xor := range []byte{0x01, 0x10, 0x80, 0xff} {
			off, shape, why := examine(flip(start(1)+k, xor))
			require.Equal(t, start(1), off)
			require.Equal(t, TailDamaged, shape, "byte %d ^ %#x: %s", k, xor, why)
		}
	}
	// A size field damaged so that the last record seems to run past the
	// end: the corrected byte makes it whole.
	_, shape, why = examine(flip(start(5)+1, 0x01))
	require.Equal(t, TailDamaged, shape)
	require.Contains(t, why, "its size field is damaged")
	// A record really cut short whose size field is intact: no corrected
	// size makes it pass its checksum.
	_, shape, _ = examine(good[:len(good)-1])
	require.Equal(t, TailCut, shape)

	_, _, err := ExamineTail(fs, path, int64(len(good)))
	require.ErrorIs(t, err, ErrInvalidArgument)
}

// TestExamineTailBKLO: BookKeeper's records carry no checksum: a record cut
// short is told from one whose ledger id or size is impossible.
func TestExamineTailBKLO(t *testing.T) {
	fs := vfs.NewMem()
	writeBKDir(t, fs, testDir, true)
	path := filepath.Join(testDir, LogFileName(1))
	res, err := Scan(fs, path, func(*Record) error { return nil })
	require.NoError(t, err)
	require.NotNil(t, res.Tail)
	shape, why, err := ExamineTail(fs, path, res.ValidEnd)
	require.NoError(t, err)
	require.Equal(t, TailCut, shape, why)

	whole := readAll(t, fs, filepath.Join(testDir, LogFileName(0)))
	b := append([]byte(nil), whole...)
	binary.BigEndian.PutUint64(b[HeaderSize+SizeFieldSize:], uint64(1<<63)) // a negative ledger id
	writeFile(t, fs, path, b)
	shape, why, err = ExamineTail(fs, path, HeaderSize)
	require.NoError(t, err)
	require.Equal(t, TailDamaged, shape, why)
}

// TestReadOnlyLogs: logs open read-only create nothing, ignore lastId and
// refuse writes.
func TestReadOnlyLogs(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, MaxLogSizeLimit)
	loc, err := l.AddEntry(1, 0, []byte("x"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	writeFile(t, fs, filepath.Join(testDir, LastIDFileName), []byte("damaged"))

	ro, err := Open(testDir, &Options{FS: fs, ReadOnly: true})
	require.NoError(t, err)
	got, err := ro.ReadEntry(1, 0, loc)
	require.NoError(t, err)
	require.Equal(t, "x", string(got))
	_, err = ro.AddEntry(1, 1, []byte("y"))
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorIs(t, ro.RemoveOrphanMetadata(), ErrInvalidArgument)
	require.NoError(t, ro.Close())
	_, err = Open("/absent", &Options{FS: fs, ReadOnly: true})
	require.NoError(t, err)
	_, err = fs.Stat("/absent")
	require.Error(t, err, "nothing created")

	_, _, err = ReadLastID(fs, testDir)
	require.ErrorIs(t, err, ErrCorruption)
	_, err = Open(testDir, &Options{FS: fs})
	require.ErrorIs(t, err, ErrCorruption, "the writer refuses a damaged lastId")
}

// TestMetadataOfADamagedLog: a ledgers map rebuilt by a scan covers the
// records before a tail an interrupted write explains, and is refused
// (ErrCorruption, nothing written) where damage hides the records after
// it: the collector would count their ledgers out.
func TestMetadataOfADamagedLog(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, 4<<10)
	var locs []int64
	for e := int64(0); e < 20; e++ {
		loc, err := l.AddEntry(e%3, e, payloadOf(e%3, e, 300))
		require.NoError(t, err)
		locs = append(locs, loc)
	}
	require.NoError(t, l.Close())
	require.Equal(t, int64(0), LocationLogID(locs[0]))
	path := filepath.Join(testDir, LogFileName(0))
	mapPath := filepath.Join(testDir, MetadataFileName(0))
	good := readAll(t, fs, path)
	start := LocationOffset(locs[2]) - SizeFieldSize

	require.NoError(t, fs.Remove(mapPath))
	bad := append([]byte(nil), good...)
	bad[start+RecordOverhead+5] ^= 0x01
	writeFile(t, fs, path, bad)
	l = openMem(t, fs, 4<<10)
	_, err := l.Metadata(0)
	require.ErrorIs(t, err, ErrCorruption)
	require.ErrorContains(t, err, "cannot be counted")
	_, err = fs.Stat(mapPath)
	require.Error(t, err, "no map written")

	writeFile(t, fs, path, good[:start+30]) // cut short
	m, err := l.Metadata(0)
	require.NoError(t, err)
	require.Equal(t, start, m.Size)
	require.NoError(t, l.Close())
}

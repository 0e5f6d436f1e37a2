package rocksdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fv7Table is a format_version 7 table with XXH3 checksums and LZ4 that
// rocksdbjni 10.10.1 wrote.
var fv7Table = filepath.Join(jniDir, "loc-v10-fv7-xxh3-lz4", "000009.sst")

// resealFooter recomputes the checksum of a format_version >= 6 footer
// after an edit, as RocksDB's writer computes it.
func resealFooter(data []byte) {
	off := len(data) - footerSize
	b := data[off:]
	binary.LittleEndian.PutUint32(b[5:], 0)
	sum := checksumOf(b[0], b) + contextModifier(binary.LittleEndian.Uint32(b[9:]), uint64(off))
	binary.LittleEndian.PutUint32(b[5:], sum)
}

// openBytes opens a table held in memory.
func openBytes(data []byte) (*table, error) {
	return openTableFile("t.sst", nopFile{data}, nil)
}

func readFixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// metaHandle returns the handle of the meta block name of a table.
func metaHandle(t *testing.T, tb *table, name string) blockHandle {
	t.Helper()
	metas, err := tb.decodeBlockAt(tb.footer.metaindex, "metaindex", dataBlock)
	require.NoError(t, err)
	for _, e := range metas {
		if string(e.key) == name {
			d := decoder{b: e.value}
			return decodeHandle(&d)
		}
	}
	t.Fatalf("no meta block %s", name)
	return blockHandle{}
}

// TestFooterV6 checks the format_version >= 6 footer: where the metaindex
// and index come from, and that each kind of damage or newer feature is
// refused with an error naming the file, the footer's offset and what is
// wrong.
func TestFooterV6(t *testing.T) {
	orig := readFixture(t, fv7Table)
	tb, err := openBytes(orig)
	require.NoError(t, err)
	footerOff := len(orig) - footerSize
	require.EqualValues(t, 7, tb.footer.formatVersion)
	require.EqualValues(t, checksumXXH3, tb.footer.checksum)
	require.NotZero(t, tb.footer.baseContext)
	// The metaindex ends right before the footer (less its trailer); the
	// index's handle came from the metaindex.
	require.EqualValues(t, footerOff, tb.footer.metaindex.offset+tb.footer.metaindex.size+blockTrailerSize)
	require.Equal(t, metaHandle(t, tb, metaIndex), tb.footer.index)
	require.Equal(t, "LZ4", tb.props.Compression)
	at := fmt.Sprintf("t.sst: footer at offset %d: ", footerOff)

	for _, c := range []struct {
		what string
		edit func(b []byte)
		kind error
		msg  string
	}{
		{"a reserved byte the footer checksum covers", func(b []byte) { b[footerOff+20] ^= 1 }, ErrCorruption,
			at + "footer checksum mismatch, checksum type 4 (XXH3)"},
		{"the footer checksum", func(b []byte) { b[footerOff+5] ^= 1 }, ErrCorruption, "footer checksum mismatch"},
		{"the checksum type", func(b []byte) { b[footerOff] = checksumXXHash64 }, ErrCorruption,
			"footer checksum mismatch, checksum type 3 (xxHash64)"},
		{"an unknown checksum type", func(b []byte) { b[footerOff] = 5 }, ErrUnsupported,
			at + "checksum type 5 (unknown) (format_version 7)"},
		{"a newer format_version", func(b []byte) { binary.LittleEndian.PutUint32(b[footerOff+41:], 8) }, ErrUnsupported,
			at + "format_version 8 (0 to 7 are read)"},
		{"the extended magic", func(b []byte) { b[footerOff+2] = 1; resealFooter(b) }, ErrCorruption,
			"format_version 7 footer without its extended magic (3e017a00)"},
		{"a zero base context", func(b []byte) { binary.LittleEndian.PutUint32(b[footerOff+9:], 0); resealFooter(b) }, ErrCorruption,
			"base context checksum is 0"},
		{"a feature newer than the reader", func(b []byte) { b[footerOff+40] = 1; resealFooter(b) }, ErrUnsupported,
			"format_version 7 footer uses a reserved field"},
		{"a metaindex larger than the file", func(b []byte) { binary.LittleEndian.PutUint32(b[footerOff+13:], 1<<30); resealFooter(b) }, ErrCorruption,
			"metaindex of 1073741824 bytes does not fit before the footer"},
		// Another base context: the footer is valid, but every block's
		// stored checksum has the old one's modifier in it, so the first
		// block read (the metaindex) fails, as a block moved from another
		// file would.
		{"another file's context", func(b []byte) { b[footerOff+9] ^= 1; resealFooter(b) }, ErrCorruption,
			"t.sst: metaindex " + tb.footer.metaindex.String() + ": checksum mismatch, checksum type 4 (XXH3)"},
		{"a data block", func(b []byte) { b[30] ^= 1 }, ErrCorruption, "t.sst: data block 0+"},
	} {
		t.Run(c.what, func(t *testing.T) {
			data := bytes.Clone(orig)
			c.edit(data)
			tb, err := openBytes(data)
			if err == nil {
				_, err = tb.loadDataBlock(0)
			}
			require.ErrorIs(t, err, c.kind)
			require.ErrorContains(t, err, c.msg)
		})
	}
}

// TestCompressionRefusals: a compression this reader does not decode, a
// format_version 7 table whose compression manager is not RocksDB's
// built-in one, and an index type it does not read are refused by name.
func TestCompressionRefusals(t *testing.T) {
	orig := readFixture(t, fv7Table)
	tb, err := openBytes(orig)
	require.NoError(t, err)

	data := bytes.Clone(orig)
	h := tb.index[0].handle
	data[h.offset+h.size] = 0x7 // ZSTD
	resealBlock(data, tb.footer, h)
	zt, err := openBytes(data)
	require.NoError(t, err)
	_, err = zt.loadDataBlock(0)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "t.sst: data block 0+")
	require.ErrorContains(t, err, "compression type 7 (ZSTD) (none, Snappy, LZ4 and LZ4HC are read)")

	data = bytes.Clone(orig)
	ph := metaHandle(t, tb, metaProperties)
	block := data[ph.offset : ph.offset+ph.size]
	i := bytes.Index(block, []byte("BuiltinV2;04;"))
	require.GreaterOrEqual(t, i, 0)
	copy(block[i:], "BuiltinV3")
	resealBlock(data, tb.footer, ph)
	_, err = openBytes(data)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, `compression manager "BuiltinV3" (only RocksDB's built-in BuiltinV2)`)

	data = bytes.Clone(orig)
	block = data[ph.offset : ph.offset+ph.size]
	i = bytes.Index(block, []byte("index.type"))
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, []byte{0, 0, 0, 0}, block[i+10:i+14]) // binary search
	block[i+10] = indexBinaryFirstKey
	resealBlock(data, tb.footer, ph)
	_, err = openBytes(data)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "t.sst: properties "+ph.String()+": index type 3 (kBinarySearchWithFirstKey)")
}

package rocksdb

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// loadFixture copies testdata/<name> into a fresh in-memory FS, with each
// file's contents passed through edit (nil: unchanged), and returns the FS
// and the directory.
func loadFixture(t testing.TB, name string, edit func(file string, data []byte) []byte) (vfs.FS, string) {
	t.Helper()
	src := filepath.Join("testdata", name)
	names, err := os.ReadDir(src)
	require.NoError(t, err)
	fs := vfs.NewMem()
	const dir = "/db"
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(src, n.Name()))
		require.NoError(t, err)
		if edit != nil {
			data = edit(n.Name(), append([]byte(nil), data...))
		}
		writeFile(t, fs, filepath.Join(dir, n.Name()), data)
	}
	return fs, dir
}

func writeFile(t testing.TB, fs vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fs.Create(name)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// fixtureFiles lists the files of testdata/<name>.
func fixtureFiles(t testing.TB, name string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", name))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// resealBlock recomputes the stored checksum of the block at h after an
// edit of its contents or compression type, as RocksDB's writer computes it.
func resealBlock(data []byte, f footer, h blockHandle) {
	end := h.offset + h.size
	sum := checksumOf(f.checksum, data[h.offset:end+1]) + contextModifier(f.baseContext, h.offset)
	binary.LittleEndian.PutUint32(data[end+1:], sum)
}

package lsm

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// flipByte flips one byte of a file in an in-memory FS, at offset fraction
// frac of its length.
func flipByte(t *testing.T, fs FS, path string, frac float64) {
	f, err := fs.Open(path)
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	data := make([]byte, size)
	_, err = f.ReadAt(data, 0)
	if err != nil && err != io.EOF {
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	data[int(float64(size)*frac)] ^= 0x55
	w, err := fs.Create(path)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	require.NoError(t, w.Close())
}

func filesOf(t *testing.T, fs FS, suffix string) []string {
	names, err := fs.List("db")
	require.NoError(t, err)
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, suffix) || strings.HasPrefix(n, suffix) {
			out = append(out, "db/"+n)
		}
	}
	return out
}

func writeBatches(t *testing.T, d *DB, n int) {
	var b Batch
	for i := 0; i < n; i++ {
		b.Reset()
		b.Set([]byte(fmt.Sprintf("key%05d", i)), []byte(strings.Repeat("v", 100)))
		require.NoError(t, d.Apply(&b, NoSync))
	}
}

func TestCorruptWALMiddleIsReported(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	writeBatches(t, d, 300) // ~40 KB of WAL, below the memtable size
	require.NoError(t, d.Close())
	wals := filesOf(t, fs, ".log")
	require.Len(t, wals, 1)
	flipByte(t, fs, wals[0], 0.3)
	_, err = Open("db", smallOptions(fs))
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrCorruption), "%v", err)
	require.Contains(t, err.Error(), wals[0])
}

func TestCorruptManifestIsReported(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		writeBatches(t, d, 50)
		require.NoError(t, d.Flush())
	}
	require.NoError(t, d.Close())
	manifests := filesOf(t, fs, "MANIFEST-")
	require.Len(t, manifests, 1)
	flipByte(t, fs, manifests[0], 0.2)
	_, err = Open("db", smallOptions(fs))
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrCorruption), "%v", err)
	require.Contains(t, err.Error(), "MANIFEST")
}

func TestCorruptTableIsReported(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	writeBatches(t, d, 300)
	require.NoError(t, d.Flush())
	require.NoError(t, d.Check())
	require.NoError(t, d.Close())
	tables := filesOf(t, fs, ".sst")
	require.Len(t, tables, 1)
	flipByte(t, fs, tables[0], 0.3) // a data block
	d, err = Open("db", smallOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	err = d.Check()
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrCorruption), "%v", err)
	require.Contains(t, err.Error(), tables[0])
	// Reads of the damaged block fail with corruption, never a wrong value.
	bad := 0
	for i := 0; i < 300; i++ {
		v, err := d.Get([]byte(fmt.Sprintf("key%05d", i)))
		if err != nil {
			require.True(t, errors.Is(err, ErrCorruption), "%v", err)
			bad++
			continue
		}
		require.Equal(t, strings.Repeat("v", 100), string(v))
	}
	require.Greater(t, bad, 0)
}

package lsm

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func writeIngestTable(t *testing.T, path string, ledger uint64, from, to uint64, tag byte) {
	w, err := CreateTable(vfs.Default, path, TableOptions{})
	require.NoError(t, err)
	for e := from; e < to; e++ {
		require.NoError(t, w.Set(entryKey(ledger, e), []byte{tag, byte(e)}))
	}
	_, err = w.Close()
	require.NoError(t, err)
}

// writeTable writes a table of the given keys and values (in order) on fs.
func writeTable(t *testing.T, fs FS, path string, kvs ...string) {
	t.Helper()
	w, err := CreateTable(fs, path, TableOptions{})
	require.NoError(t, err)
	for i := 0; i+1 < len(kvs); i += 2 {
		require.NoError(t, w.Set([]byte(kvs[i]), []byte(kvs[i+1])))
	}
	_, err = w.Close()
	require.NoError(t, err)
}

func TestIngest(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(filepath.Join(dir, "db"), &Options{})
	require.NoError(t, err)
	// Into an empty DB: moved as they are to the last level.
	var paths []string
	for l := uint64(0); l < 3; l++ {
		p := filepath.Join(dir, fmt.Sprintf("in%d.sst", l))
		writeIngestTable(t, p, l, 0, 1000, 'a')
		paths = append(paths, p)
	}
	require.NoError(t, d.Ingest(paths))
	m := d.Metrics()
	require.Equal(t, 3, m.Levels[6].Tables)
	v, err := d.Get(entryKey(1, 500))
	require.NoError(t, err)
	require.Equal(t, []byte{'a', byte(500 % 256)}, v)

	// Over existing data (in the memtable and in tables): rewritten,
	// newer than what it overrides.
	var b Batch
	b.Set(entryKey(1, 2000), []byte("old"))
	require.NoError(t, d.Apply(&b, Sync))
	p := filepath.Join(dir, "over.sst")
	writeIngestTable(t, p, 1, 500, 2001, 'b')
	require.NoError(t, d.Ingest([]string{p}))
	v, err = d.Get(entryKey(1, 2000))
	require.NoError(t, err)
	require.Equal(t, []byte{'b', byte(2000 % 256)}, v)
	v, err = d.Get(entryKey(1, 499))
	require.NoError(t, err)
	require.Equal(t, byte('a'), v[0])
	v, err = d.Get(entryKey(1, 500))
	require.NoError(t, err)
	require.Equal(t, byte('b'), v[0])
	require.NoError(t, d.Check())

	// Overlapping inputs are refused.
	p1, p2 := filepath.Join(dir, "x1.sst"), filepath.Join(dir, "x2.sst")
	writeIngestTable(t, p1, 9, 0, 10, 'c')
	writeIngestTable(t, p2, 9, 5, 15, 'c')
	err = d.Ingest([]string{p1, p2})
	require.Error(t, err)
	require.Contains(t, err.Error(), "overlap")
	require.NoError(t, d.Close())

	// Everything survives a reopen.
	d, err = Open(filepath.Join(dir, "db"), &Options{})
	require.NoError(t, err)
	v, err = d.Get(entryKey(2, 999))
	require.NoError(t, err)
	require.Equal(t, byte('a'), v[0])
	_, err = d.Get(entryKey(9, 1))
	require.True(t, errors.Is(err, ErrNotFound))
	require.NoError(t, d.Close())
}

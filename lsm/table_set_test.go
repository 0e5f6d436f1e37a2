package lsm

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTableSet writes sorted entries into tables cut at a small target
// size, ingests them into an empty DB, and reads every entry back; keys
// out of order are refused.
func TestTableSet(t *testing.T) {
	fs := NewMemFS()
	o := smallOptions(fs)
	require.NoError(t, fs.MkdirAll("tables", 0o755))
	d, err := Open("db", o)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()

	set := NewTableSet(fs, "tables", o.TableOptions(), 16<<10)
	const n = 20000
	for i := uint64(0); i < n; i++ {
		require.NoError(t, set.Set(entryKey(i/1000, i%1000), binary.BigEndian.AppendUint64(nil, i)))
	}
	require.EqualValues(t, n, set.Entries())
	paths, err := set.Finish()
	require.NoError(t, err)
	require.Greater(t, len(paths), 3, "a 16 KiB target cuts several tables")
	require.NoError(t, d.Ingest(paths))
	for i := uint64(0); i < n; i += 97 {
		v, err := d.Get(entryKey(i/1000, i%1000))
		require.NoError(t, err)
		require.Equal(t, i, binary.BigEndian.Uint64(v))
	}

	bad := NewTableSet(fs, "tables", o.TableOptions(), 1<<20)
	require.NoError(t, bad.Set(entryKey(5, 5), []byte("x")))
	require.Error(t, bad.Set(entryKey(5, 4), []byte("y")))
	bad.Abort()
}

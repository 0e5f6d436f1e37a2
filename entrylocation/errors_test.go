package entrylocation

import (
	stderrors "errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestSentinelsMatchStdlibErrorsIs checks that errors of the index, its own
// and the engine's passed through, match their sentinels under the standard
// library's errors.Is as well as cockroachdb's.
func TestSentinelsMatchStdlibErrorsIs(t *testing.T) {
	requireIs := func(err, sentinel error) {
		t.Helper()
		require.Error(t, err)
		require.True(t, stderrors.Is(err, sentinel), "stdlib errors.Is(%v, %v)", err, sentinel)
		require.True(t, errors.Is(err, sentinel), "cockroachdb errors.Is(%v, %v)", err, sentinel)
	}

	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(dir, nil)
	require.NoError(t, err)
	const entries = 2000
	b := ix.NewBatch()
	for e := int64(0); e < entries; e++ {
		require.NoError(t, b.AddLocation(1, e, e+1))
	}
	require.NoError(t, b.Flush())
	require.NoError(t, b.Close())
	require.NoError(t, ix.DB().Flush())
	_, err = ix.GetLastEntryInLedger(2)
	requireIs(err, ErrNoEntry)
	requireIs(ix.AddLocation(-1, 0, 1), ErrInvalidArgument)
	require.NoError(t, ix.Close())
	_, err = ix.GetLocation(1, 0)
	requireIs(err, ErrClosed)

	// Damage the middle of the table: a data block.
	tables, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	require.NoError(t, err)
	require.Len(t, tables, 1)
	data, err := os.ReadFile(tables[0])
	require.NoError(t, err)
	data[len(data)/3] ^= 0x55
	require.NoError(t, os.WriteFile(tables[0], data, 0o644))

	ix, err = Open(dir, nil)
	require.NoError(t, err)
	defer ix.Close()
	bad := 0
	for e := int64(0); e < entries && bad == 0; e++ {
		if _, err := ix.GetLocation(1, e); err != nil {
			requireIs(err, lsm.ErrCorruption)
			bad++
		}
	}
	require.Greater(t, bad, 0, "no read saw the damaged block")
}

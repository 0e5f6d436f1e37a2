package lsm

import (
	stderrors "errors"
	"fmt"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestSentinelsMatchStdlibErrorsIs checks that errors the engine returns
// match their sentinels under the standard library's errors.Is as well as
// cockroachdb's. (Errors built with cockroachdb's errors.Mark matched only
// the latter.)
func TestSentinelsMatchStdlibErrorsIs(t *testing.T) {
	requireIs := func(err, sentinel error) {
		t.Helper()
		require.Error(t, err)
		require.True(t, stderrors.Is(err, sentinel), "stdlib errors.Is(%v, %v)", err, sentinel)
		require.True(t, errors.Is(err, sentinel), "cockroachdb errors.Is(%v, %v)", err, sentinel)
	}

	fs := vfs.NewMem()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	writeBatches(t, d, 300)
	require.NoError(t, d.Flush())
	_, err = d.Get([]byte("absent"))
	requireIs(err, ErrNotFound)
	require.NoError(t, d.Close())
	_, err = d.Get([]byte("key00001"))
	requireIs(err, ErrClosed)

	d, err = Open("db", &Options{FS: fs, ReadOnly: true})
	require.NoError(t, err)
	var b Batch
	b.Set([]byte("k"), []byte("v"))
	requireIs(d.Apply(&b, NoSync), ErrReadOnly)
	require.NoError(t, d.Close())

	tables := filesOf(t, fs, ".sst")
	require.Len(t, tables, 1)
	flipByte(t, fs, tables[0], 0.3) // a data block
	d, err = Open("db", smallOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	requireIs(d.Check(), ErrCorruption)
	bad := 0
	for i := 0; i < 300 && bad == 0; i++ {
		if _, err := d.Get([]byte(fmt.Sprintf("key%05d", i))); err != nil {
			requireIs(err, ErrCorruption)
			bad++
		}
	}
	require.Greater(t, bad, 0, "no read saw the damaged block")
}

package ondisk

import (
	"errors"
	"testing"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestFillDirs: the directory not given is the other, the file system
// vfs.Default; the required one missing is an invalid argument naming it.
func TestFillDirs(t *testing.T) {
	mem := vfs.NewMem()
	for _, tc := range []struct {
		required                   RequiredDir
		ledger, index              string
		fs                         vfs.FS
		wantLedger, wantIndex, err string
		wantFS                     vfs.FS
	}{
		{required: LedgerDirRequired, ledger: "/l", wantLedger: "/l", wantIndex: "/l", wantFS: vfs.Default},
		{required: LedgerDirRequired, ledger: "/l", index: "/i", fs: mem, wantLedger: "/l", wantIndex: "/i", wantFS: mem},
		{required: LedgerDirRequired, index: "/i", err: "bookie: tool: no ledger directory"},
		{required: IndexDirRequired, index: "/i", wantLedger: "/i", wantIndex: "/i", wantFS: vfs.Default},
		{required: IndexDirRequired, ledger: "/l", index: "/i", wantLedger: "/l", wantIndex: "/i", wantFS: vfs.Default},
		{required: IndexDirRequired, ledger: "/l", err: "bookie: tool: no index directory"},
	} {
		ledger, index, fs := tc.ledger, tc.index, tc.fs
		err := FillDirs("bookie: tool", tc.required, &ledger, &index, &fs)
		if tc.err != "" {
			require.EqualError(t, err, tc.err+": "+entrylocation.ErrInvalidArgument.Error())
			require.True(t, errors.Is(err, entrylocation.ErrInvalidArgument))
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.wantLedger, ledger)
		require.Equal(t, tc.wantIndex, index)
		require.True(t, SameFS(tc.wantFS, fs))
	}
}

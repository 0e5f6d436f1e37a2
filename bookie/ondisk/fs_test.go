package ondisk

import (
	"log/slog"
	"testing"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestLocationsEngineOptions: the tools' engine options are a filled-in
// copy on the storage's FS, with the tool's logger unless they name one;
// an engine FS of another file system is refused.
func TestLocationsEngineOptions(t *testing.T) {
	fs, logger := vfs.NewMem(), slog.New(slog.DiscardHandler)
	o, err := LocationsEngineOptions(nil, fs, logger)
	require.NoError(t, err)
	require.Same(t, fs, o.FS)
	require.Same(t, logger, o.Logger)
	require.Equal(t, lsm.DefaultOptions().WriteBufferSize, o.WriteBufferSize)

	own := slog.New(slog.DiscardHandler)
	custom := &lsm.Options{WriteBufferSize: 1 << 20, Logger: own}
	o, err = LocationsEngineOptions(custom, fs, logger)
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), o.WriteBufferSize)
	require.Same(t, own, o.Logger)
	require.Nil(t, custom.FS, "the caller's options are left as they are")

	_, err = LocationsEngineOptions(&lsm.Options{FS: vfs.NewMem()}, fs, logger)
	require.ErrorIs(t, err, entrylocation.ErrInvalidArgument)
	require.ErrorContains(t, err, "Engine.FS")
}

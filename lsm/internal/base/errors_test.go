package base

import (
	stderrors "errors"
	"io/fs"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func TestMarkMatchesSentinelAndKeepsCause(t *testing.T) {
	cause := errors.Wrap(fs.ErrNotExist, "opening 000004.sst")
	err := errors.Wrap(Mark(cause, ErrCorruption), "L0 table")
	for name, is := range map[string]func(error, error) bool{"stdlib": stderrors.Is, "cockroachdb": errors.Is} {
		require.True(t, is(err, ErrCorruption), name)
		require.True(t, is(err, fs.ErrNotExist), name)
		require.False(t, is(err, ErrClosed), name)
	}
	require.Equal(t, "L0 table: opening 000004.sst: file does not exist", err.Error())
	require.NoError(t, Mark(nil, ErrCorruption))
	require.True(t, stderrors.Is(CorruptionErrorf("block at offset %d", 7), ErrCorruption))
}

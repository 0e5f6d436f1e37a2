package entrylog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestReadErrorsNameTheRecord: a failed ReadEntry names the log file and
// the record's offset (FileOffset, for the log's repeat limiter) without
// changing its message, and still matches its sentinel.
func TestReadErrorsNameTheRecord(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, 0)
	defer l.Close()
	loc, err := l.AddEntry(3, 7, []byte("payload of entry 7"))
	require.NoError(t, err)
	require.NoError(t, l.Flush())
	corrupt(t, fs, l.LogPath(0), LocationOffset(loc)+RecordOverhead-SizeFieldSize, []byte{'P' ^ 0xff})

	for i := 0; i < 2; i++ {
		_, err = l.ReadEntry(3, 7, loc)
		require.ErrorIs(t, err, ErrCorruption)
		var fo interface{ FileOffset() (string, int64) }
		require.True(t, errors.As(err, &fo))
		file, off := fo.FileOffset()
		require.Equal(t, l.LogPath(0), file)
		require.Equal(t, LocationOffset(loc), off)
		prefix := fmt.Sprintf("entrylog: entry 7 of ledger 3 at %s: ", FormatLocation(loc))
		require.True(t, strings.HasPrefix(err.Error(), prefix), "%v", err)
		require.True(t, strings.HasPrefix(fmt.Sprintf("%v", err), prefix), "%v", err)
		require.Contains(t, fmt.Sprintf("%+v", err), "stack trace", "the details are kept for debug logs")
	}
	_, err = l.ReadEntry(3, 8, loc)
	require.ErrorIs(t, err, ErrBadLocation)
}

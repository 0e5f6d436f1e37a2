package record

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSyncedLength(t *testing.T) {
	read := func(b []byte) (int64, bool) {
		n, ok, err := ReadSyncedLength(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		return n, ok
	}
	var buf bytes.Buffer
	w := NewSyncedLengthWriter(&buf)
	_, ok := read(buf.Bytes())
	require.False(t, ok, "an empty file is no mark")
	for _, n := range []int64{7, 4096, 1 << 40} {
		require.NoError(t, w.Mark(n))
		got, ok := read(buf.Bytes())
		require.True(t, ok)
		require.Equal(t, n, got)
	}
	b := buf.Bytes()
	require.Len(t, b, 3*SyncedMarkSize)
	// A torn append of the next mark is ignored.
	got, ok := read(append(bytes.Clone(b), 1, 2, 3))
	require.True(t, ok)
	require.Equal(t, int64(1<<40), got)
	// Any flipped byte of the last mark makes the file no evidence.
	for i := 2 * SyncedMarkSize; i < len(b); i++ {
		damaged := bytes.Clone(b)
		damaged[i] ^= 0x10
		_, ok := read(damaged)
		require.False(t, ok, "byte %d", i)
	}
}

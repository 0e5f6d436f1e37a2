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

// FuzzReadSyncedLength: any bytes decode without a panic, and a length is
// only reported when the last complete mark is one Mark would write.
func FuzzReadSyncedLength(f *testing.F) {
	var buf bytes.Buffer
	w := NewSyncedLengthWriter(&buf)
	f.Add([]byte{})
	for _, n := range []int64{0, 1, 32 << 10, 1 << 40} {
		_ = w.Mark(n)
		f.Add(bytes.Clone(buf.Bytes()))
	}
	f.Add(append(bytes.Clone(buf.Bytes()), 0xff, 0x00))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok, err := ReadSyncedLength(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("in-memory read failed: %v", err)
		}
		if !ok {
			return
		}
		if n < 0 {
			t.Fatalf("negative length %d", n)
		}
		var again bytes.Buffer
		if err := NewSyncedLengthWriter(&again).Mark(n); err != nil {
			t.Fatal(err)
		}
		last := (len(b)/SyncedMarkSize - 1) * SyncedMarkSize
		if !bytes.Equal(again.Bytes(), b[last:last+SyncedMarkSize]) {
			t.Fatalf("length %d from a mark Mark would not write: %x", n, b[last:last+SyncedMarkSize])
		}
	})
}

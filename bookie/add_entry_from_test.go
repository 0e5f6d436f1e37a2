package bookie

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// TestAddEntryFrom: an entry streamed from a reader reads back like one
// added whole, small (copied into the arena) or large (kept as read),
// before and after a checkpoint; arguments are checked before a byte is
// read; a reader that fails or ends early adds nothing.
func TestAddEntryFrom(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	defer func() { require.NoError(t, s.Close()) }()

	small := []byte("a small entry")
	large := bytes.Repeat([]byte("0123456789abcdef"), 40<<10) // 640 KiB: far above half a chunk (64 KiB)
	require.NoError(t, s.AddEntryFrom(1, 0, len(small), bytes.NewReader(small)))
	require.NoError(t, s.AddEntryFrom(1, 1, len(large), iotest.HalfReader(bytes.NewReader(large))))
	require.NoError(t, s.AddEntryFrom(1, 2, 0, strings.NewReader("")))
	check := func() {
		t.Helper()
		for e, want := range [][]byte{small, large, {}} {
			got, err := s.GetEntry(1, int64(e))
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, got), "entry %d", e)
		}
	}
	check()
	require.NoError(t, s.Checkpoint())
	check()

	// Checked before reading: the reader must not be touched.
	untouched := iotest.ErrReader(io.ErrNoProgress)
	for _, tc := range []struct {
		ledger, entry int64
		size          int
	}{{-1, 0, 1}, {1, -1, 1}, {1, 3, -1}, {1, 3, 3 << 20}} {
		err := s.AddEntryFrom(tc.ledger, tc.entry, tc.size, untouched)
		require.ErrorIs(t, err, ErrInvalidArgument, "%+v", tc)
		require.NotErrorIs(t, err, io.ErrNoProgress)
	}

	// A reader that ends early or fails: an error, nothing added.
	err := s.AddEntryFrom(1, 3, 10, strings.NewReader("short"))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	err = s.AddEntryFrom(1, 3, 10, iotest.ErrReader(io.ErrClosedPipe))
	require.ErrorIs(t, err, io.ErrClosedPipe)
	_, err = s.GetEntry(1, 3)
	require.ErrorIs(t, err, ErrNoEntry)
}

// TestWriteCacheOwnedPayloads: putOwned keeps a large payload itself (the
// caller's buffer, no second copy), copies a small one into the arena;
// put always copies.
func TestWriteCacheOwnedPayloads(t *testing.T) {
	c := newWriteCache(1 << 20) // chunks of 128 KiB: "large" is above 64 KiB
	large := bytes.Repeat([]byte{7}, 100<<10)
	small := []byte("small")
	require.True(t, c.putOwned(1, 0, large))
	require.True(t, c.putOwned(1, 1, small))
	require.True(t, c.put(1, 2, large))
	stored := func(e int64) []byte { return c.ledgers[1].entries[e] }
	require.Same(t, &large[0], &stored(0)[0], "an owned large payload is kept as it is")
	require.NotSame(t, &small[0], &stored(1)[0], "a small payload goes into the arena")
	require.NotSame(t, &large[0], &stored(2)[0], "put copies")
	require.Equal(t, large, stored(2))
}

// TestWriteCacheGivesMemoryBack: clearing keeps only the chunks the last
// fill used, and release drops them all once the cache is empty, so a
// burst of small entries does not pin the cache's peak for ever.
func TestWriteCacheGivesMemoryBack(t *testing.T) {
	c := newWriteCache(8 << 20) // chunks of 1 MiB
	entry := bytes.Repeat([]byte{1}, 100<<10)
	fill := func(n int) {
		for e := 0; e < n; e++ {
			require.True(t, c.put(1, int64(e), entry))
		}
	}
	fill(60) // about 6 MiB: 6 chunks
	require.Len(t, c.arena.chunks, 6)
	c.clear()
	require.Len(t, c.arena.chunks, 6, "the chunks of the last fill are kept for the next")
	fill(15)
	c.clear()
	require.Len(t, c.arena.chunks, 2, "a smaller fill lets the others go")
	require.True(t, c.isEmpty())
	require.True(t, c.release(), "release drops the chunks of an empty cache")
	require.Empty(t, c.arena.chunks)
	require.False(t, c.release(), "nothing left to drop")
	fill(1)
	require.False(t, c.release(), "a cache with entries keeps its chunks")
	require.Len(t, c.arena.chunks, 1)
	got, ok := c.get(1, 0)
	require.True(t, ok)
	require.Equal(t, entry, got)
}

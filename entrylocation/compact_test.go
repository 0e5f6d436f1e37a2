package entrylocation

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCompactKeepsData(t *testing.T) {
	ix := openTest(t, smallTableOptions(nil))
	b := ix.NewBatch()
	for round := int64(0); round < 3; round++ {
		for l := int64(0); l < 10; l++ {
			for e := int64(0); e < 500; e++ {
				require.NoError(t, b.AddLocation(l, e, round*1_000_000+l*1000+e+1))
			}
		}
		require.NoError(t, b.Flush())
	}
	require.NoError(t, ix.Delete(3))
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	require.False(t, ix.IsCompacting())
	require.NoError(t, ix.Compact(context.Background()))
	require.False(t, ix.IsCompacting())
	for l := int64(0); l < 10; l++ {
		for e := int64(0); e < 500; e += 37 {
			want := 2_000_000 + l*1000 + e + 1
			if l == 3 {
				want = 0
			}
			requireLocation(t, ix, l, e, want)
		}
	}
	m := ix.Metrics().Engine
	require.Positive(t, m.Compactions+m.TrivialMoves)
	for level := 0; level < len(m.Levels)-1; level++ {
		require.Zero(t, m.Levels[level].Tables, "level %d after a full compaction", level)
	}
}

func TestCompactCancelledByContext(t *testing.T) {
	ix := openTest(t, nil)
	require.NoError(t, ix.AddLocation(1, 1, 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := ix.Compact(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrClosed)
	require.False(t, ix.IsCompacting())
	// The next one runs.
	require.NoError(t, ix.Compact(context.Background()))
	requireLocation(t, ix, 1, 1, 1)
}

// startBlockedCompact starts a Compact that blocks in the engine (in the
// WAL removal of the flush it starts with) and returns its result channel
// once it is blocked.
func startBlockedCompact(t *testing.T) (*Index, *blockingFS, chan error) {
	t.Helper()
	fs := newBlockingFS()
	ix := openTest(t, memOptions(fs))
	require.NoError(t, ix.AddLocation(1, 1, 1)) // something to flush
	fs.armed.Store(true)
	result := make(chan error, 1)
	go func() { result <- ix.Compact(context.Background()) }()
	select {
	case <-fs.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("Compact did not reach the engine's file removal")
	}
	require.True(t, ix.IsCompacting())
	return ix, fs, result
}

func TestCompactOneAtATime(t *testing.T) {
	ix, fs, first := startBlockedCompact(t)

	// A second call returns at once, without error and without waiting
	// for the first (which cannot finish while the FS blocks it).
	second := make(chan error, 1)
	go func() { second <- ix.Compact(context.Background()) }()
	select {
	case err := <-second:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a second Compact waited for the first")
	}
	require.True(t, ix.IsCompacting())
	// Reads and writes go on meanwhile.
	requireLocation(t, ix, 1, 1, 1)
	require.NoError(t, ix.AddLocation(1, 2, 2))

	fs.armed.Store(false)
	close(fs.release)
	require.NoError(t, <-first)
	require.False(t, ix.IsCompacting())
	require.NoError(t, ix.Compact(context.Background()))
	requireLocation(t, ix, 1, 2, 2)
}

func TestCloseDuringCompact(t *testing.T) {
	ix, fs, compact := startBlockedCompact(t)

	closed := make(chan error, 1)
	go func() { closed <- ix.Close() }()
	// Wait until Close has started (new calls fail), and give it the
	// moment it needs to cancel the compaction.
	require.Eventually(t, func() bool {
		_, err := ix.GetLocation(1, 1)
		return err != nil
	}, 10*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while Compact was still running", err)
	default:
	}

	fs.armed.Store(false)
	close(fs.release)
	err := <-compact
	require.ErrorIs(t, err, ErrClosed, "Close cancels the compaction")
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, <-closed)
	require.False(t, ix.IsCompacting())
	require.ErrorIs(t, ix.Compact(context.Background()), ErrClosed)
}

// TestCompactDropsPurgedEntries checks that a full Compact reclaims the
// space of purged ledgers, the point of BookKeeper's entry location
// compaction. The lsm engine at f46c96b failed it: a table holding both
// the locations and the range deletions that purge them was moved down
// unchanged (trivial moves) to the last level, where nothing compacted it.
func TestCompactDropsPurgedEntries(t *testing.T) {
	ix := openTest(t, nil)
	b := ix.NewBatch()
	for e := int64(0); e < 1000; e++ {
		require.NoError(t, b.AddLocation(e%10, e, e+1))
	}
	require.NoError(t, b.Flush())
	for l := int64(0); l < 10; l += 2 {
		require.NoError(t, ix.Delete(l))
	}
	require.NoError(t, ix.RemoveOffsetFromDeletedLedgers())
	require.NoError(t, ix.Compact(context.Background()))
	m := ix.Metrics()
	last := m.Engine.Levels[len(m.Engine.Levels)-1]
	require.EqualValues(t, 500, last.Entries, "purged entries left after a full Compact (trivial moves: %d, compactions: %d)",
		m.Engine.TrivialMoves, m.Engine.Compactions)
	require.Zero(t, last.RangeDeletions)
	require.EqualValues(t, 500, m.EntriesCount)
	requireLocation(t, ix, 1, 1, 2)
	requireLocation(t, ix, 2, 2, 0)
}

package bookie

import (
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// countingSource is a CheckpointSource whose positions are the number of
// writes it was told of (as a journal's mark counts what it synced).
type countingSource struct {
	mu       sync.Mutex
	pos      int
	ready    bool
	reported []int
	fail     error
}

func (c *countingSource) wrote() {
	c.mu.Lock()
	c.pos++
	c.mu.Unlock()
}

func (c *countingSource) NewCheckpoint() Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready {
		return nil
	}
	return c.pos
}

func (c *countingSource) CheckpointComplete(cp Checkpoint) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return c.fail
	}
	c.reported = append(c.reported, cp.(int))
	return nil
}

func (c *countingSource) last() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reported) == 0 {
		return -1, 0
	}
	return c.reported[len(c.reported)-1], len(c.reported)
}

// TestCheckpointSourceReportsEveryDirectorysCheckpoint: a checkpoint is
// reported once every directory has made one taken at or after it durable;
// directories' own checkpoints count; nothing is reported while the
// source has no position; a failed report is made again after the next
// checkpoint; Close's checkpoints report too.
func TestCheckpointSourceReportsEveryDirectorysCheckpoint(t *testing.T) {
	env := newTestEnv("/data/a", "/data/b", "/data/c")
	src := &countingSource{}
	env.tweak = func(o *Options) { o.CheckpointSource = src }
	s := env.open(t)
	add := func(l int64) {
		require.NoError(t, s.AddEntry(l, 0, payload(l, 0, 0)))
		src.wrote()
	}
	add(0)
	require.NoError(t, s.Checkpoint())
	_, n := src.last()
	require.Equal(t, 0, n, "no position yet: nothing reported")
	src.mu.Lock()
	src.ready = true
	src.mu.Unlock()
	require.NoError(t, s.Checkpoint())
	last, n := src.last()
	require.Equal(t, []int{1, 1}, []int{last, n})

	add(1)
	add(2)
	dirs := s.Dirs()
	require.NoError(t, dirs[0].Checkpoint())
	require.NoError(t, dirs[2].Checkpoint())
	last, _ = src.last()
	require.Equal(t, 1, last, "directory 1 has not made position 3 durable")
	require.NoError(t, dirs[1].Checkpoint())
	last, _ = src.last()
	require.Equal(t, 3, last)

	// A failed report is made again after the next directory checkpoint.
	add(3)
	src.mu.Lock()
	src.fail = errors.New("no room for lastMark")
	src.mu.Unlock()
	require.NoError(t, s.Checkpoint())
	last, _ = src.last()
	require.Equal(t, 3, last)
	src.mu.Lock()
	src.fail = nil
	src.mu.Unlock()
	require.NoError(t, dirs[0].Checkpoint())
	last, _ = src.last()
	require.Equal(t, 4, last)

	add(4)
	require.NoError(t, s.Close())
	last, _ = src.last()
	require.Equal(t, 5, last, "Close's checkpoints report")
}

// TestCheckpointSourceBackgroundCheckpoints: the periodic checkpoints of
// every directory report on their own.
func TestCheckpointSourceBackgroundCheckpoints(t *testing.T) {
	env := newTestEnv("/data/a", "/data/b")
	src := &countingSource{ready: true}
	env.tweak = func(o *Options) {
		o.CheckpointSource = src
		o.FlushInterval = 5 * time.Millisecond
	}
	s := env.open(t)
	for l := range int64(4) {
		require.NoError(t, s.AddEntry(l, 0, payload(l, 0, 0)))
		src.wrote()
	}
	waitFor(t, "a report of position 4", func() bool { last, _ := src.last(); return last == 4 })
	require.NoError(t, s.Close())
}

// TestDeletedLedgerRecordHeldUntilCovered: with a CheckpointSource, a
// purge removes a deleted ledger's locations but keeps its record (which
// says it is deleted) until a checkpoint taken after the deletion is
// reported; a ledger written again after its deletion is purged at once.
func TestDeletedLedgerRecordHeldUntilCovered(t *testing.T) {
	env := newTestEnv("/data/a", "/data/b")
	src := &countingSource{ready: true}
	env.tweak = func(o *Options) { o.CheckpointSource = src }
	s := env.open(t)
	for _, l := range []int64{0, 2, 4} {
		require.NoError(t, s.AddEntry(l, 0, payload(l, 0, 0)))
	}
	require.NoError(t, s.Checkpoint())
	for _, l := range []int64{0, 2, 4} {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
	}
	require.NoError(t, s.AddEntry(4, 1, payload(4, 1, 1))) // a new life
	require.NoError(t, s.Dirs()[0].Checkpoint())           // not reported: directory 1 lags
	require.NoError(t, s.Purge())
	for _, l := range []int64{0, 2} {
		info, ok, err := s.LedgerInfo(l)
		require.NoError(t, err)
		require.True(t, ok && !info.Exists && info.PurgePending, "ledger %d: %+v", l, info)
		require.Zero(t, location(t, s, l, 0), "its locations are purged all the same")
	}
	info, ok, err := s.LedgerInfo(4)
	require.NoError(t, err)
	require.True(t, ok && info.Exists && !info.PurgePending, "%+v", info)
	requireEntry(t, s, 4, 1, payload(4, 1, 1))
	requireNoEntry(t, s, 4, 0)

	require.NoError(t, s.Dirs()[1].Checkpoint()) // reported: covers the deletions
	require.NoError(t, s.Purge())
	for _, l := range []int64{0, 2} {
		_, ok, err := s.LedgerInfo(l)
		require.NoError(t, err)
		require.False(t, ok, "ledger %d", l)
	}
	require.NoError(t, s.Close())
}

// TestGCReclaimsHeldDeletions: the entry logs of deleted ledgers whose
// records a CheckpointSource keeps (no reported checkpoint covers the
// deletion yet) are reclaimed all the same: their locations are purged.
func TestGCReclaimsHeldDeletions(t *testing.T) {
	env := newGCEnv()
	src := &countingSource{ready: true}
	gcTweak := env.tweak
	env.tweak = func(o *Options) {
		gcTweak(o)
		o.CheckpointSource = src
	}
	s := env.open(t)
	for l := int64(1); l <= 30; l++ {
		for e := int64(0); e < 20; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
		require.NoError(t, s.Checkpoint())
	}
	before, _ := logBytes(t, env.mem, env.dirs)
	src.mu.Lock()
	src.fail = errors.New("the source cannot record") // no report covers the deletions
	src.mu.Unlock()
	for l := int64(1); l <= 20; l++ {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
	}
	require.NoError(t, s.Checkpoint())
	res := runGC(t, s, GCRequest{SkipMajor: true, SkipMinor: true})
	after, _ := logBytes(t, env.mem, env.dirs)
	require.Positive(t, res.RemovedLogs)
	require.Less(t, after, before*2/3)
	for l := int64(1); l <= 20; l++ {
		info, ok, err := s.LedgerInfo(l)
		require.NoError(t, err)
		require.True(t, ok && !info.Exists, "ledger %d's record stays", l)
		requireNoLedger(t, s, l)
	}
	for l := int64(21); l <= 30; l++ {
		requireEntry(t, s, l, 19, payload(l, 19, 0))
	}
	require.NoError(t, s.Close())
}

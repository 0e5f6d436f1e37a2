package bookie

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// diskFull fails, while armed, space-consuming operation number failAt on
// the paths it covers with ENOSPC, and from then on every space-consuming
// one on those paths until free: a disk that fills up and stays full until
// an operator frees space. The paths it does not cover are on another
// disk, with room.
type diskFull struct {
	covers      func(path string) bool
	failAt      int64
	armed, full atomic.Bool
	ops         atomic.Int64
}

// fault is the env's fault function.
func (f *diskFull) fault(op vfs.Op) error {
	switch op.Kind {
	case vfs.OpCreate, vfs.OpCreateExclusive, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpLink:
	default:
		return nil
	}
	if !f.covers(op.Path) {
		return nil
	}
	if f.full.Load() {
		return syscall.ENOSPC
	}
	if f.armed.Load() && f.ops.Add(1)-1 == f.failAt {
		f.full.Store(true)
		return syscall.ENOSPC
	}
	return nil
}

func (f *diskFull) free() {
	f.armed.Store(false)
	f.full.Store(false)
}

// The test env's one directory (see newTestEnv): its entry logs are in
// testLogDir, its indexes below it in locations/ and ledgers/.
var testLogDir = filepath.Join("/data/ledgers", "current")

// onIndexes covers the indexes' files and directories.
func onIndexes(path string) bool {
	return strings.HasPrefix(path, filepath.Join(testLogDir, "locations")) || strings.HasPrefix(path, filepath.Join(testLogDir, "ledgers"))
}

// onEntryLogs covers the entry logs, lastId and their directory.
func onEntryLogs(path string) bool {
	return path == testLogDir || filepath.Dir(path) == testLogDir
}

// noSpaceEnv is a test env whose disk (the part inj covers) fills up as
// inj decides, and whose engines and checkpoints retry quickly.
func noSpaceEnv(inj *diskFull) *testEnv {
	env := newTestEnv()
	env.setFault(inj.fault)
	env.tweak = func(o *Options) {
		o.CheckpointRetryInterval, o.CheckpointRetryMaxInterval = time.Millisecond, 5*time.Millisecond
		o.Index.MaxBatchOps = 200 // a large checkpoint is several batches: memtables switch and flush
		if o.LedgersEngine == nil {
			o.LedgersEngine = &lsm.Options{WriteBufferSize: 64 << 10}
		}
		for _, e := range []*lsm.Options{o.Index.Engine, o.LedgersEngine} {
			e.NoSpaceRetryInterval, e.NoSpaceRetryMaxInterval = time.Millisecond, 5*time.Millisecond
		}
	}
	return env
}

// addTweak adds f to the env's option tweaks, after the others.
func (e *testEnv) addTweak(f func(o *Options)) {
	prev := e.tweak
	e.tweak = func(o *Options) {
		if prev != nil {
			prev(o)
		}
		f(o)
	}
}

// addEntries adds entries 0..n-1 of ledgers 1..3 (version v).
func addEntries(t *testing.T, s *Storage, n int64, v int) {
	for l := int64(1); l <= 3; l++ {
		for e := int64(0); e < n; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, v)))
		}
	}
}

func requireEntries(t *testing.T, s *Storage, n int64, v int, what string) {
	t.Helper()
	for l := int64(1); l <= 3; l++ {
		for e := int64(0); e < n; e++ {
			got, err := s.GetEntry(l, e)
			require.NoError(t, err, "%s: entry %d of ledger %d", what, e, l)
			require.Equal(t, string(payload(l, e, v)), string(got), "%s: entry %d of ledger %d", what, e, l)
		}
	}
}

func entryLogBytes(s *Storage) int64 { return s.Metrics()[0].EntryLog.BytesWritten }

// TestCheckpointNoSpaceInIndex fails each write of the indexes during a
// checkpoint in turn with ENOSPC (WAL writes and syncs of both indexes,
// and the memtable flushes the checkpoint's batch causes), the disk staying
// full for several retries: the retries write nothing more to the entry
// logs, the entries stay readable, and once space returns a checkpoint
// succeeds without a restart; the entries survive a crash and Close
// succeeds.
func TestCheckpointNoSpaceInIndex(t *testing.T) {
	// Enough entries that the location index switches memtables and
	// flushes during the checkpoint.
	const n = 800
	stride := int64(1)
	if testing.Short() {
		stride = 5
	}
	failures := 0
	for failAt := int64(0); ; failAt += stride {
		what := fmt.Sprintf("ENOSPC at index operation %d", failAt)
		inj := &diskFull{covers: onIndexes, failAt: failAt}
		env := noSpaceEnv(inj)
		s := env.open(t)
		addEntries(t, s, n, 1)
		inj.armed.Store(true)
		err := s.Checkpoint()
		inj.armed.Store(false)
		if !inj.full.Load() {
			require.NoError(t, err)
			require.NoError(t, s.Close())
			require.Greater(t, failures*int(stride), 10, "the checkpoint never failed")
			t.Logf("%d operations failed in turn", failures)
			return
		}
		failures++
		written := entryLogBytes(s)
		require.True(t, errors.Is(s.Dirs()[0].IndexError(), lsm.ErrNoSpace), "%s: IndexError", what)
		if err != nil {
			require.True(t, errors.Is(err, lsm.ErrNoSpace), "%s: %v", what, err)
			require.True(t, vfs.IsNoSpace(s.Dirs()[0].CheckpointError()), what)
			for range 5 {
				require.Error(t, s.Checkpoint(), what+": while full")
			}
			require.Equal(t, int64(6), s.Metrics()[0].CheckpointFailures, what)
		} // else only a background flush of the index failed
		require.Equal(t, written, entryLogBytes(s), "%s: retries wrote the entry log again", what)
		requireEntries(t, s, n, 1, what+": while full")

		inj.free()
		// (A checkpoint with nothing to write succeeds before the index
		// whose background flush failed has recovered: wait for both.)
		waitFor(t, "a checkpoint after space returned", func() bool {
			return s.Checkpoint() == nil && s.Dirs()[0].IndexError() == nil
		})
		require.Equal(t, written, entryLogBytes(s), "%s: the successful retry wrote the entry log again", what)
		require.NoError(t, s.Dirs()[0].CheckpointError())
		require.Zero(t, s.Metrics()[0].CheckpointFailures)
		require.NoError(t, s.Dirs()[0].IndexError())
		addEntries(t, s, 10, 2) // entries 0..9 rewritten
		waitFor(t, "a checkpoint of new entries", func() bool { return s.Checkpoint() == nil })
		s = env.crash(t, s, failAt+1)
		requireEntries(t, s, 10, 2, what+": after a crash")
		for l := int64(1); l <= 3; l++ {
			for e := int64(10); e < n; e++ {
				requireEntry(t, s, l, e, payload(l, e, 1))
			}
		}
		require.NoError(t, s.Close(), what)
	}
}

// TestCheckpointNoSpaceInEntryLog fails each entry-log write of a
// checkpoint in turn with ENOSPC, the disk staying full for several
// retries: retries while full write nothing, and the whole episode writes
// at most one more copy of the cache than a checkpoint without failure.
func TestCheckpointNoSpaceInEntryLog(t *testing.T) {
	// The bytes of a checkpoint of the cache without any failure.
	env := newTestEnv()
	s := env.open(t)
	addEntries(t, s, 40, 1)
	require.NoError(t, s.Checkpoint())
	clean := entryLogBytes(s)
	require.NoError(t, s.Close())

	failures := 0
	for failAt := int64(0); ; failAt++ {
		what := fmt.Sprintf("ENOSPC at entry-log operation %d", failAt)
		inj := &diskFull{covers: onEntryLogs, failAt: failAt}
		env := noSpaceEnv(inj)
		env.addTweak(func(o *Options) { o.LogSizeLimit = 16 << 10 }) // rotations during the checkpoint
		s := env.open(t)
		before := entryLogBytes(s)
		addEntries(t, s, 40, 1)
		inj.armed.Store(true)
		err := s.Checkpoint()
		inj.armed.Store(false)
		if !inj.full.Load() {
			require.NoError(t, err)
			require.NoError(t, s.Close())
			require.Greater(t, failures, 2, "the checkpoint never failed")
			t.Logf("%d operations failed in turn", failures)
			return
		}
		failures++
		require.True(t, vfs.IsNoSpace(err), "%s: %v", what, err)
		written := entryLogBytes(s)
		for range 5 {
			require.Error(t, s.Checkpoint(), what+": while full")
		}
		require.Equal(t, written, entryLogBytes(s), "%s: retries while full wrote the entry log", what)
		requireEntries(t, s, 40, 1, what+": while full")

		inj.free()
		require.NoError(t, s.Checkpoint(), what)
		require.LessOrEqual(t, entryLogBytes(s)-before, 2*clean+8<<10, "%s: the retries rewrote the cache more than once", what)
		s = env.crash(t, s, failAt+1)
		requireEntries(t, s, 40, 1, what+": after a crash")
		require.NoError(t, s.Close(), what)
	}
}

// TestCheckpointWorkerBacksOff checks that the checkpoint worker retries a
// failing checkpoint with backoff, not at every tick or request.
func TestCheckpointWorkerBacksOff(t *testing.T) {
	inj := &diskFull{covers: onIndexes}
	env := noSpaceEnv(inj)
	env.addTweak(func(o *Options) {
		o.FlushInterval = time.Millisecond
		o.CheckpointRetryInterval, o.CheckpointRetryMaxInterval = 20*time.Millisecond, 80*time.Millisecond
	})
	s := env.open(t)
	inj.armed.Store(true)
	addEntries(t, s, 5, 1)
	waitFor(t, "a failed checkpoint", func() bool { return s.Metrics()[0].Flush.FailureCount > 0 })
	time.Sleep(300 * time.Millisecond)
	// 20, 40, 80, 80, 80 ms: about 6 attempts in 300 ms, not 300.
	n := s.Metrics()[0].Flush.FailureCount
	require.Less(t, n, int64(12), "%d checkpoints failed in 300 ms", n)
	inj.free()
	waitFor(t, "a checkpoint after space returned", func() bool { return s.Metrics()[0].CheckpointFailures == 0 })
	requireEntries(t, s, 5, 1, "after space returned")
	require.NoError(t, s.Close())
}

// TestCloseWhileOutOfSpace closes a storage whose disk is still full:
// Close reports the failure (naming the lack of space) in bounded time,
// and what the completed checkpoints wrote reads back after a restart.
func TestCloseWhileOutOfSpace(t *testing.T) {
	inj := &diskFull{covers: onIndexes}
	env := noSpaceEnv(inj)
	s := env.open(t)
	addEntries(t, s, 20, 1)
	require.NoError(t, s.Checkpoint())
	addEntries(t, s, 20, 2)
	inj.armed.Store(true)
	require.Error(t, s.Checkpoint())
	start := time.Now()
	err := s.Close()
	require.True(t, vfs.IsNoSpace(err), "%v", err)
	require.Contains(t, err.Error(), "no checkpoint completed")
	require.Less(t, time.Since(start), 2*time.Second)

	inj.free()
	s = env.open(t)
	// The failed checkpoint's entries may or may not be indexed (the
	// failed WAL write may have reached the file); the completed one's
	// are.
	for l := int64(1); l <= 3; l++ {
		for e := int64(0); e < 20; e++ {
			got, err := s.GetEntry(l, e)
			require.NoError(t, err)
			require.Contains(t, []string{string(payload(l, e, 1)), string(payload(l, e, 2))}, string(got))
		}
	}
	require.NoError(t, s.Close())
}

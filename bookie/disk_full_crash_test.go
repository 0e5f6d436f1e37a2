package bookie

import (
	"fmt"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestCrashAtEveryStepOfACheckpointOnAFullDisk runs a checkpoint out of
// space part-way (the in-memory disk's capacity a little above what the
// storage holds: its writes fail with ENOSPC, the one that crosses the
// capacity after writing what fits), turns the storage read-only, frees
// space, and waits for the retried checkpoint to succeed and the storage
// to take writes again. It takes a power-loss image before every file
// system operation of all that, some with torn tails, and reopens each
// (with space freed, as an operator would before a restart): the entries
// of the checkpoint before are all there; those of the interrupted one are
// there in full or not at all; and the storage goes on. The rooms are
// eighths of what the checkpoint writes, so that each fails at another
// point, from the first entry-log write to the index's.
func TestCrashAtEveryStepOfACheckpointOnAFullDisk(t *testing.T) {
	env, s := fullDiskSetup(t)
	before := diskUsed(t, env.mem)
	require.NoError(t, s.Checkpoint())
	written := diskUsed(t, env.mem) - before
	require.NoError(t, s.Close())
	t.Logf("the checkpoint writes %d bytes", written)
	for _, k := range []int64{0, 2, 4, 5, 7} { // the others fail where one of these does
		room := written * k / 8
		t.Run(fmt.Sprint("room=", room), func(t *testing.T) { testCrashOnAFullDisk(t, room) })
	}
}

// fullDiskSetup opens a storage whose last checkpoint holds entries 0-19
// of ledgers 1-3 (version 0) and whose write cache entries 10-29 of
// ledgers 1-4 (version 1).
func fullDiskSetup(t *testing.T) (*testEnv, *Storage) {
	env := newTestEnv()
	env.tweak = func(o *Options) {
		o.LogSizeLimit = 4 << 10 // the checkpoint creates logs
		o.DiskCheckInterval = -1
	}
	s := env.open(t)
	for l := int64(1); l <= 3; l++ {
		for e := int64(0); e < 20; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
	}
	require.NoError(t, s.Checkpoint())
	for l := int64(1); l <= 4; l++ {
		for e := int64(10); e < 30; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 1)))
		}
	}
	return env, s
}

func diskUsed(t *testing.T, mem *vfs.MemFS) int64 {
	u, err := mem.DiskUsage("/")
	require.NoError(t, err)
	return int64(u.UsedBytes())
}

func testCrashOnAFullDisk(t *testing.T, room int64) {
	const seed = 1
	rng := newRand(seed)
	env, s := fullDiskSetup(t)
	env.mem.SetCapacity(diskUsed(t, env.mem) + room)

	var images []*vfs.MemFS
	env.setFault(func(vfs.Op) error { // runs under env's lock
		opts := vfs.CrashOptions{}
		if rng.Intn(2) == 0 {
			opts = vfs.CrashOptions{Rand: rng, KeepUnsyncedTail: true}
		}
		images = append(images, env.mem.CrashClone(opts))
		return nil
	})
	err := s.Checkpoint()
	require.True(t, vfs.IsNoSpace(err), "the checkpoint runs out of space: %v", err)
	ro, reason := s.ReadOnly()
	require.True(t, ro)
	require.Contains(t, reason, "no space left on device")
	for l := int64(1); l <= 4; l++ {
		requireEntry(t, s, l, 29, payload(l, 29, 1)) // reads go on
	}
	failed := len(images)

	env.mem.SetCapacity(0) // space returns
	waitFor(t, "the retried checkpoint", func() bool { return s.Checkpoint() == nil })
	waitFor(t, "the storage taking writes again", func() bool {
		s.CheckDisks()
		ro, _ := s.ReadOnly()
		return !ro
	})
	env.setFault(nil)
	final := env.crashClone(seed)
	require.NoError(t, s.Close())
	t.Logf("%d images of the checkpoint that ran out of space, %d of its retries", failed, len(images)-failed)

	states := map[bool]int{}
	for i, img := range append(images, final) {
		img.SetCapacity(0) // the operator frees space before the restart
		crashed := &testEnv{mem: img, dirs: env.dirs, tweak: env.tweak}
		s, err := Open(crashed.options())
		require.NoError(t, err, "image %d of %d", i, len(images))
		got, err := s.GetEntry(1, 10)
		require.NoError(t, err, "image %d", i)
		done := string(got) == string(payload(1, 10, 1))
		states[done]++
		if i == len(images) {
			require.True(t, done, "the retried checkpoint returned: everything is durable")
		}
		for l := int64(1); l <= 4; l++ {
			for e := int64(0); e < 30; e++ {
				switch {
				case e >= 10 && done:
					requireEntry(t, s, l, e, payload(l, e, 1))
				case l <= 3 && e < 20:
					requireEntry(t, s, l, e, payload(l, e, 0))
				case l <= 3:
					requireNoEntry(t, s, l, e)
				default:
					_, err := s.GetEntry(l, e)
					require.True(t, errors.Is(err, ErrNoEntry) || errors.Is(err, ErrNoLedger), "image %d: entry %d of ledger %d: %v", i, e, l, err)
				}
			}
		}
		require.NoError(t, s.AddEntry(1, 100, payload(1, 100, 2)), "image %d", i)
		require.NoError(t, s.Checkpoint(), "image %d", i)
		requireEntry(t, s, 1, 100, payload(1, 100, 2))
		require.NoError(t, s.Close())
	}
	t.Logf("%d images: %d before the locations were durable, %d after", len(images)+1, states[false], states[true])
	require.Positive(t, states[false])
	require.Positive(t, states[true])
}

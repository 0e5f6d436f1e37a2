package journaled

import (
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

// TestAcknowledgedSurviveCrash: entries acknowledged and never
// checkpointed read back after a power loss, from the journal.
func TestAcknowledgedSurviveCrash(t *testing.T) {
	for _, dirs := range [][2]int{{1, 1}, {2, 1}, {3, 2}} {
		env := newTestEnv(dirs[0], dirs[1])
		s := env.open(t)
		for l := int64(0); l < 6; l++ {
			for e := int64(0); e < 20; e++ {
				require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
			}
		}
		require.NoError(t, s.Checkpoint())
		for l := int64(0); l < 8; l++ {
			for e := int64(20); e < 40; e++ {
				require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
			}
		}
		env.crash(t, s, 0)
		s = env.open(t)
		st := s.Replayed()
		require.Equal(t, int64(8*20), st.EntriesAdded, "%+v", st)
		for l := int64(0); l < 8; l++ {
			first := int64(0)
			if l >= 6 {
				first = 20
			}
			for e := first; e < 40; e++ {
				requireEntry(t, s, l, e, payload(l, e, 0))
			}
			requireEntry(t, s, l, bookie.LastEntry, payload(l, 39, 0))
		}
		// A second crash right away replays nothing: the open's
		// checkpoint recorded the new position.
		env.crash(t, s, 0)
		s = env.open(t)
		require.Zero(t, s.Replayed().Records, "%+v", s.Replayed())
		requireEntry(t, s, 7, 39, payload(7, 39, 0))
		require.NoError(t, s.Close())
	}
}

// TestReplayIsIdempotent: entries a checkpoint wrote after the recorded
// mark are not written again (the entry log does not grow), and an entry
// written again with other bytes takes the journal's later copy.
func TestReplayIsIdempotent(t *testing.T) {
	env := newTestEnv(2, 1)
	s := env.open(t)
	for l := int64(0); l < 4; l++ {
		for e := int64(0); e < 10; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
	}
	// Directory 0 checkpoints alone: the recorded mark cannot move past
	// directory 1's entries, so a replay meets directory 0's again.
	require.NoError(t, s.Dirs()[0].Checkpoint())
	require.NoError(t, s.AddEntry(0, 3, payload(0, 3, 1))) // written again
	env.crash(t, s, 0)
	s = env.open(t)
	st := s.Replayed()
	// Ledgers 0 and 2 are directory 0's: held; 1 and 3 were only in
	// directory 1's cache; the rewrite's record comes after and differs.
	require.Equal(t, int64(2*10), st.EntriesHeld, "%+v", st)
	require.Equal(t, int64(2*10+1), st.EntriesAdded, "%+v", st)
	requireEntry(t, s, 0, 3, payload(0, 3, 1))
	// The open's checkpoint wrote only what the replay added.
	m := s.Metrics()
	require.Equal(t, []int64{1, 20}, []int64{m[0].FlushEntries, m[1].FlushEntries})
	for l := int64(0); l < 4; l++ {
		for e := int64(0); e < 10; e++ {
			if l == 0 && e == 3 {
				continue
			}
			requireEntry(t, s, l, e, payload(l, e, 0))
		}
	}
	require.NoError(t, s.Close())
}

// TestRecordedMarkIsEveryDirectorys: a checkpoint of one directory alone
// does not move the lastMark file; once every directory has checkpointed
// after the adds, it does.
func TestRecordedMarkIsEveryDirectorys(t *testing.T) {
	env := newTestEnv(2, 1)
	s := env.open(t)
	readMark := func() journal.LogMark {
		m, problems := journal.ReadLastMark(env.mem, env.ledgerDirs, "lastMark")
		require.Empty(t, problems)
		return m
	}
	start := readMark()
	require.NotZero(t, start.FileID, "the open's checkpoint records a mark")
	for l := int64(0); l < 4; l++ {
		require.NoError(t, s.AddEntry(l, 0, payload(l, 0, 0)))
	}
	require.NoError(t, s.Dirs()[1].Checkpoint())
	require.Equal(t, start, readMark())
	require.NoError(t, s.Dirs()[0].Checkpoint())
	moved := readMark()
	require.True(t, start.Less(moved), "%s -> %s", start, moved)
	require.Equal(t, s.Journals().CurrentMark()[0], moved)
	require.NoError(t, s.Close())
}

// TestDeletedLedgerNotReplayed: a ledger deleted after its records were
// journaled stays deleted after a crash, even when a purge ran before it
// (its record, which tells the replay to skip it, stays until a recorded
// checkpoint covers the deletion).
func TestDeletedLedgerNotReplayed(t *testing.T) {
	env := newTestEnv(2, 1)
	s := env.open(t)
	for e := int64(0); e < 10; e++ {
		require.NoError(t, s.AddEntry(2, e, payload(2, e, 0))) // directory 0
		require.NoError(t, s.AddEntry(3, e, payload(3, e, 0))) // directory 1
	}
	// Directory 0 writes ledger 2 out; the recorded mark stays (directory
	// 1 has not checkpointed).
	require.NoError(t, s.Dirs()[0].Checkpoint())
	existed, err := s.DeleteLedger(2)
	require.NoError(t, err)
	require.True(t, existed)
	require.NoError(t, s.Purge())
	info, ok, err := s.LedgerInfo(2)
	require.NoError(t, err)
	require.True(t, ok && !info.Exists && info.PurgePending, "the deleted ledger's record stays: %+v %v", info, ok)
	env.crash(t, s, 0)

	s = env.open(t)
	requireNoLedger(t, s, 2)
	require.Equal(t, int64(11), s.Replayed().DeletedLedgerRecords, "%+v", s.Replayed()) // its key and entries
	for e := int64(0); e < 10; e++ {
		requireEntry(t, s, 3, e, payload(3, e, 0))
	}
	// Once a checkpoint covers the deletion, the purge drops the record.
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	_, ok, err = s.LedgerInfo(2)
	require.NoError(t, err)
	require.False(t, ok)
	env.crash(t, s, 0)
	s = env.open(t)
	requireNoLedger(t, s, 2)
	require.NoError(t, s.Close())
}

// TestNewLifeAfterDeletion: a ledger written again after its deletion
// holds only its new life's entries after a crash.
func TestNewLifeAfterDeletion(t *testing.T) {
	env := newTestEnv(1, 1)
	s := env.open(t)
	for e := int64(0); e < 10; e++ {
		require.NoError(t, s.AddEntry(5, e, payload(5, e, 0)))
	}
	_, err := s.DeleteLedger(5)
	require.NoError(t, err)
	for e := int64(0); e < 4; e++ {
		require.NoError(t, s.AddEntry(5, e, payload(5, e, 1)))
	}
	env.crash(t, s, 0)
	s = env.open(t)
	for e := int64(0); e < 4; e++ {
		requireEntry(t, s, 5, e, payload(5, e, 1))
	}
	for e := int64(4); e < 10; e++ {
		requireNoEntry(t, s, 5, e)
	}
	requireEntry(t, s, 5, bookie.LastEntry, payload(5, 3, 1))
	require.NoError(t, s.Close())
}

// TestLedgerStateSurvivesCrash: master keys, fences and explicit LACs
// acknowledged and never checkpointed are replayed.
func TestLedgerStateSurvivesCrash(t *testing.T) {
	env := newTestEnv(2, 2)
	s := env.open(t)
	require.NoError(t, s.SetMasterKey(7, []byte("key-7")))
	require.NoError(t, s.AddEntry(8, 0, payload(8, 0, 0)))
	fenced, err := s.SetFenced(8)
	require.NoError(t, err)
	require.True(t, fenced)
	require.NoError(t, s.SetExplicitLAC(8, []byte("lac-8")))
	require.NoError(t, s.AddEntry(9, 0, payload(9, 0, 0)))
	env.crash(t, s, 0)
	s = env.open(t)
	info, ok, err := s.LedgerInfo(7)
	require.NoError(t, err)
	require.True(t, ok && info.Exists)
	require.Equal(t, "key-7", string(info.MasterKey))
	info, ok, err = s.LedgerInfo(8)
	require.NoError(t, err)
	require.True(t, ok && info.Exists && info.Fenced, "%+v", info)
	require.Equal(t, "lac-8", string(info.ExplicitLAC))
	requireEntry(t, s, 9, 0, payload(9, 0, 0))
	require.NoError(t, s.Close())
}

// TestUnknownLedgerSkipped: upstream's rule — an entry of a ledger the
// storage does not know and no master key in the journal made known is
// skipped (its ledger was deleted, or never created).
func TestUnknownLedgerSkipped(t *testing.T) {
	env := newTestEnv(1, 1)
	o := env.options()
	// A journal written by itself: an entry of ledger 1 with no key, then
	// ledger 2's key and entry.
	jo := o.Journal
	jo.FS, jo.LedgerDirectories = env.mem, env.ledgerDirs
	set, err := journal.Open(jo, nil)
	require.NoError(t, err)
	require.NoError(t, set.Add(1, 0, []byte("orphan")).Wait())
	require.NoError(t, set.AddMasterKey(2, nil).Wait())
	require.NoError(t, set.Add(2, 0, []byte("kept")).Wait())
	require.NoError(t, set.Close())

	s := env.open(t)
	st := s.Replayed()
	require.Equal(t, ReplayStats{Records: 3, EntriesAdded: 1, MetaEntries: 1, UnknownLedgerRecords: 1}, st)
	requireNoLedger(t, s, 1)
	requireEntry(t, s, 2, 0, []byte("kept"))
	require.NoError(t, s.Close())
}

// TestMarkTakenBeforeSwap: an add acknowledged while a checkpoint writes
// the cache it swapped out is in the new cache, not in the checkpoint, so
// the mark the checkpoint records must not cover it: after a crash it is
// replayed.
func TestMarkTakenBeforeSwap(t *testing.T) {
	env := newTestEnv(1, 1)
	s := env.open(t)
	require.NoError(t, s.AddEntry(1, 0, payload(1, 0, 0)))
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	env.setFault(func(op vfs.Op) error {
		if op.Kind == vfs.OpWrite && strings.HasSuffix(op.Path, "/data/ledgers0/current/0.log") {
			once.Do(func() {
				close(reached)
				<-release
			})
		}
		return nil
	})
	ckpt := make(chan error, 1)
	go func() { ckpt <- s.Checkpoint() }()
	<-reached // the checkpoint has swapped the caches and writes the entry log
	require.NoError(t, s.AddEntry(1, 1, payload(1, 1, 0)))
	close(release)
	require.NoError(t, <-ckpt)
	env.crash(t, s, 0)
	s = env.open(t)
	requireEntry(t, s, 1, 0, payload(1, 0, 0))
	requireEntry(t, s, 1, 1, payload(1, 1, 0))
	require.NoError(t, s.Close())
}

package bookie

import (
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var (
	modelSteps = flag.Int("model-steps", 3000, "steps of TestModel (raise for a longer run)")
	modelSeed  = flag.Int64("model-seed", 1, "seed of TestModel")
)

var errCrash = errors.New("simulated crash")

// TestCrashBetweenEntryLogSyncAndIndexFlush stops a checkpoint after the
// entry log is synced and before the index is written, and crashes there:
// every entry of the checkpoints that completed reads back; the ones of
// the interrupted checkpoint were never acknowledged.
func TestCrashBetweenEntryLogSyncAndIndexFlush(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		env := newTestEnv()
		s := env.open(t)
		for l := int64(1); l <= 3; l++ {
			for e := int64(0); e < 50; e++ {
				require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
			}
		}
		require.NoError(t, s.Checkpoint())
		for l := int64(1); l <= 4; l++ {
			for e := int64(40); e < 100; e++ {
				require.NoError(t, s.AddEntry(l, e, payload(l, e, 1)))
			}
		}
		var crashed *vfs.MemFS
		s.Dirs()[0].hooks.Store(&testHooks{afterEntryLogFlush: func() error {
			crashed = env.crashClone(seed)
			return errCrash
		}})
		require.ErrorIs(t, s.Checkpoint(), errCrash)
		env.restartOn(s, crashed)
		s = env.open(t)
		for l := int64(1); l <= 3; l++ {
			for e := int64(0); e < 50; e++ {
				requireEntry(t, s, l, e, payload(l, e, 0))
			}
			requireNoEntry(t, s, l, 50)
			requireEntry(t, s, l, LastEntry, payload(l, 49, 0))
		}
		requireNoLedger(t, s, 4)
		// And it goes on: new writes land in a new log.
		require.NoError(t, s.AddEntry(1, 50, payload(1, 50, 2)))
		require.NoError(t, s.Checkpoint())
		requireEntry(t, s, 1, 50, payload(1, 50, 2))
		require.NoError(t, s.Close())
	}
}

// TestCrashAtEveryStepOfACheckpoint takes a power-loss image of the whole
// storage (entry logs and both indexes, on one MemFS) before every file
// system operation of a checkpoint, whichever goroutine issues it, some
// with torn tails, and reopens each image. The entries of the checkpoint
// before are all there; those of the interrupted one are there in full or
// not at all (their locations are one synced batch); every read returns
// an entry or says there is none; and the storage goes on.
func TestCrashAtEveryStepOfACheckpoint(t *testing.T) {
	const seed = 1
	t.Logf("seed %d", seed)
	rng := newRand(seed)
	env := newTestEnv()
	env.tweak = func(o *Options) { o.LogSizeLimit = 4 << 10 } // the checkpoint creates logs
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
	var images []*vfs.MemFS
	env.setFault(func(vfs.Op) error { // runs under env's lock
		opts := vfs.CrashOptions{}
		if rng.Intn(2) == 0 {
			opts = vfs.CrashOptions{Rand: rng, KeepUnsyncedTail: true}
		}
		images = append(images, env.mem.CrashClone(opts))
		return nil
	})
	require.NoError(t, s.Checkpoint())
	env.setFault(nil)
	final := env.crashClone(seed)
	require.NoError(t, s.Close())
	require.Greater(t, len(images), 20, "the checkpoint does file operations")

	states := map[bool]int{}
	for i, img := range append(images, final) {
		crashed := &testEnv{mem: img, dirs: env.dirs, tweak: env.tweak}
		s, err := Open(crashed.options())
		require.NoError(t, err, "image %d of %d", i, len(images))
		got, err := s.GetEntry(1, 10)
		require.NoError(t, err, "image %d", i)
		done := string(got) == string(payload(1, 10, 1))
		states[done]++
		if i == len(images) {
			require.True(t, done, "the checkpoint returned: everything is durable")
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
					// A new ledger of the interrupted checkpoint: its
					// record may be durable (it is written first), its
					// entries are not.
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
	// The locations' WAL sync is the checkpoint's last operation: only the
	// image after it has them.
	t.Logf("%d images: %d before the locations were durable, %d after", len(images)+1, states[false], states[true])
	require.Positive(t, states[false])
}

// TestCheckpointFaults injects a failure into each step of a checkpoint:
// the checkpoint fails, its entries stay readable from the cache, the next
// checkpoint writes them, and a crash after it loses none.
func TestCheckpointFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func(env *testEnv, s *Storage, fire *bool)
	}{
		{"entry log write", func(env *testEnv, s *Storage, fire *bool) { env.logFault(s, vfs.OpWrite, false, fire) }},
		{"entry log sync", func(env *testEnv, s *Storage, fire *bool) { env.logFault(s, vfs.OpSync, false, fire) }},
		{"entry log create", func(env *testEnv, s *Storage, fire *bool) {
			env.logFault(s, vfs.OpCreateExclusive, false, fire)
		}},
		{"lastId write", func(env *testEnv, s *Storage, fire *bool) { env.logFault(s, vfs.OpCreate, false, fire) }},
		{"directory sync", func(env *testEnv, s *Storage, fire *bool) { env.logFault(s, vfs.OpSync, true, fire) }},
		{"index flush", func(_ *testEnv, s *Storage, fire *bool) {
			s.Dirs()[0].hooks.Store(&testHooks{afterEntryLogFlush: func() error {
				if *fire {
					*fire = false
					return errors.New("injected index failure")
				}
				return nil
			}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv()
			env.tweak = func(o *Options) { o.LogSizeLimit = 2 << 10 } // a new log every few entries
			s := env.open(t)
			for e := int64(0); e < 20; e++ {
				require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
			}
			require.NoError(t, s.Checkpoint())
			for e := int64(10); e < 40; e++ {
				require.NoError(t, s.AddEntry(1, e, payload(1, e, 1)))
			}
			fire := true
			tc.arm(env, s, &fire)
			require.Error(t, s.Checkpoint())
			require.False(t, fire, "the fault fired")
			check := func() {
				for e := int64(0); e < 40; e++ {
					v := 0
					if e >= 10 {
						v = 1
					}
					requireEntry(t, s, 1, e, payload(1, e, v))
				}
			}
			check()
			// A failed write turns the storage read-only; a good
			// checkpoint writes the failed cache, and the fault (not a
			// lack of space) keeps it read-only until an operator says.
			ro, reason := s.ReadOnly()
			require.True(t, ro)
			require.Contains(t, reason, "injected")
			require.ErrorIs(t, s.AddEntry(1, 40, payload(1, 40, 1)), ErrReadOnly)
			require.NoError(t, s.Checkpoint())
			ro, _ = s.ReadOnly()
			require.True(t, ro)
			ro, _, err := s.SetReadOnly(false)
			require.NoError(t, err)
			require.False(t, ro)
			require.NoError(t, s.AddEntry(1, 40, payload(1, 40, 1)))
			require.NoError(t, s.Checkpoint())
			require.Equal(t, int64(1), s.Metrics()[0].Flush.FailureCount)
			s = env.crash(t, s, 7)
			check()
			requireEntry(t, s, 1, LastEntry, payload(1, 40, 1))
			require.NoError(t, s.Close())
		})
	}
}

// logFault fails the first operation of kind on the entry logs of s's
// first directory while fire is set: on the directory itself if dir is
// set, else on a file in it (a log, lastId). The indexes, on the same FS
// (under <dir>/locations and <dir>/ledgers), are left alone. A failed write
// is a short one: it leaves half its bytes in the log.
func (e *testEnv) logFault(s *Storage, kind vfs.OpKind, dir bool, fire *bool) {
	logDir := s.Dirs()[0].LedgerDir()
	e.setFault(func(op vfs.Op) error {
		target := filepath.Dir(op.Path) == logDir
		if dir {
			target = op.Path == logDir
		}
		if op.Kind != kind || !target || !*fire {
			return nil
		}
		*fire = false
		if kind == vfs.OpWrite {
			return errors.Wrapf(vfs.ErrShortWrite, "injected %s failure", kind)
		}
		return errors.Newf("injected %s failure", kind)
	})
}

// model is what the storage must hold: entries by ledger.
type model map[int64]map[int64][]byte

func (m model) clone() model {
	c := model{}
	for l, es := range m {
		c[l] = maps.Clone(es)
	}
	return c
}

// TestModel runs random adds, rewrites, deletions, reads, checkpoints,
// purges, clean restarts and crashes against a model: after a crash the
// storage holds what the last completed checkpoint held, minus the
// ledgers deleted since (deletions are durable at once).
func TestModel(t *testing.T) {
	rng := rand.New(rand.NewSource(*modelSeed))
	env := newTestEnv("/d0", "/d1")
	env.tweak = func(o *Options) {
		o.LogSizeLimit = 16 << 10
		o.WriteCacheSize = 2 * 2 * (24 << 10)
		o.MaxThrottleTime = -1
	}
	s := env.open(t)
	live, durable := model{}, model{}
	versions := 0
	verify := func(step int) {
		for l := int64(0); l < 8; l++ {
			es, ok := live[l]
			if !ok {
				_, err := s.GetEntry(l, 0)
				require.ErrorIs(t, err, ErrNoLedger, "step %d ledger %d", step, l)
				continue
			}
			for _, e := range slices.Sorted(maps.Keys(es)) {
				requireEntry(t, s, l, e, es[e])
			}
			if len(es) == 0 {
				_, _, err := s.GetLastEntry(l)
				require.ErrorIs(t, err, ErrNoEntry, "step %d ledger %d", step, l)
			} else {
				last := slices.Max(slices.Collect(maps.Keys(es)))
				got, p, err := s.GetLastEntry(l)
				require.NoError(t, err, "step %d ledger %d", step, l)
				require.Equal(t, last, got, "step %d ledger %d", step, l)
				require.Equal(t, es[last], p)
			}
			requireNoEntry(t, s, l, 1000)
		}
	}
	for step := range *modelSteps {
		switch r := rng.Intn(1000); {
		case r < 700:
			l, e := int64(rng.Intn(8)), int64(rng.Intn(60))
			versions++
			p := fmt.Appendf(nil, "%d/%d v%d %s", l, e, versions, make([]byte, rng.Intn(900)))
			err := s.AddEntry(l, e, p)
			if errors.Is(err, ErrRejected) {
				// Full cache and no wait: make room and retry.
				require.NoError(t, s.Checkpoint())
				durable = live.clone()
				err = s.AddEntry(l, e, p)
			}
			require.NoError(t, err, "step %d", step)
			if live[l] == nil {
				live[l] = map[int64][]byte{}
			}
			live[l][e] = p
		case r < 760:
			l := int64(rng.Intn(8))
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
			delete(live, l)
			delete(durable, l)
		case r < 850:
			l, e := int64(rng.Intn(8)), int64(rng.Intn(60))
			if es, ok := live[l]; ok {
				if p, ok := es[e]; ok {
					requireEntry(t, s, l, e, p)
				} else {
					requireNoEntry(t, s, l, e)
				}
			} else {
				requireNoLedger(t, s, l)
			}
		case r < 940:
			require.NoError(t, s.Checkpoint(), "step %d", step)
			durable = live.clone()
		case r < 960:
			require.NoError(t, s.Purge())
		case r < 975:
			require.NoError(t, s.Close())
			s = env.open(t)
			durable = live.clone()
			verify(step)
		default:
			s = env.crash(t, s, rng.Int63())
			live = durable.clone()
			verify(step)
		}
	}
	verify(*modelSteps)
	require.NoError(t, s.Close())
}

package bookie

import (
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// readOnlyEnv is a test env on a disk of testDiskCapacity bytes, used
// fraction used (env.fillDisk), with threshold 0.9 and low-water mark 0.8,
// and a record of the notifications. The disk monitor is off
// (DiskCheckInterval < 0) and the tests call CheckDisks, so no test
// sleeps.
func readOnlyEnv(t testing.TB, used float64, notes *[]bool) *testEnv {
	env := newTestEnv()
	env.mem.SetCapacity(testDiskCapacity)
	env.fillDisk(t, used)
	env.addTweak(func(o *Options) {
		o.DiskCheckInterval = -1
		o.DiskUsageThreshold, o.DiskUsageWarnThreshold, o.DiskUsageLwmThreshold = 0.9, 0.85, 0.8
		o.OnReadOnly = func(ro bool, _ string) { *notes = append(*notes, ro) }
	})
	return env
}

// requireWritesRefused checks that every write fails with ErrReadOnly and
// that reads of the entries of model m go on. (DeleteLedger goes on: it
// is how space comes back; TestReadOnlyDeleteLedger.)
func requireWritesRefused(t *testing.T, s *Storage, m map[int64][]byte) {
	t.Helper()
	require.ErrorIs(t, s.AddEntry(1, 1000, []byte("x")), ErrReadOnly)
	require.ErrorIs(t, s.SetMasterKey(2, []byte("k")), ErrReadOnly)
	_, err := s.SetFenced(1)
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorIs(t, s.SetExplicitLAC(1, []byte("lac")), ErrReadOnly)
	for e, p := range m {
		requireEntry(t, s, 1, e, p)
	}
}

func addModel(t *testing.T, s *Storage, m map[int64][]byte, from, to int64, v int) {
	t.Helper()
	for e := from; e < to; e++ {
		m[e] = payload(1, e, v)
		require.NoError(t, s.AddEntry(1, e, m[e]))
	}
}

// TestReadOnlyDiskUsage: a directory over diskUsageThreshold turns the
// storage read-only (writes refused, reads and checkpoints go on), it
// stays so between the low-water mark and the threshold, and turns
// writable below the mark; nothing acknowledged is lost across it.
func TestReadOnlyDiskUsage(t *testing.T) {
	var notes []bool
	env := readOnlyEnv(t, 0.5, &notes)
	s := env.open(t)
	m := map[int64][]byte{}
	addModel(t, s, m, 0, 50, 1)
	require.NoError(t, s.Checkpoint())
	addModel(t, s, m, 50, 80, 1) // acknowledged, not checkpointed yet

	env.fillDisk(t, 0.95)
	s.CheckDisks()
	ro, reason := s.ReadOnly()
	require.True(t, ro)
	require.Contains(t, reason, "over diskUsageThreshold 90.0%")
	requireWritesRefused(t, s, m)
	require.NoError(t, s.Checkpoint(), "checkpoints of what was acknowledged go on")

	env.fillDisk(t, 0.85) // between the mark and the threshold
	s.CheckDisks()
	ro, _ = s.ReadOnly()
	require.True(t, ro, "above the low-water mark")

	env.fillDisk(t, 0.7)
	s.CheckDisks()
	ro, reason = s.ReadOnly()
	require.False(t, ro, reason)
	require.Empty(t, reason)
	addModel(t, s, m, 80, 100, 2)
	require.NoError(t, s.Checkpoint())
	require.Equal(t, []bool{true, false}, notes, "one notification per transition")

	s = env.crash(t, s, 3)
	for e, p := range m {
		requireEntry(t, s, 1, e, p)
	}
	require.NoError(t, s.Close())
}

// TestReadOnlyDiskFullAtOpen: a disk over the threshold at start makes
// the storage read-only from its first write (the monitor checks at
// Open).
func TestReadOnlyDiskFullAtOpen(t *testing.T) {
	var notes []bool
	env := readOnlyEnv(t, 0.99, &notes)
	env.addTweak(func(o *Options) { o.DiskCheckInterval = 1 << 40 }) // on, but never ticks in the test
	s := env.open(t)
	ro, _ := s.ReadOnly()
	require.True(t, ro)
	require.ErrorIs(t, s.AddEntry(1, 0, []byte("x")), ErrReadOnly)
	require.NoError(t, s.Close())
}

// TestReadOnlyEntryLogNoSpace: ENOSPC on the entry logs turns the storage
// read-only; the failed checkpoint still completes once space returns,
// and the storage is writable again by itself once the disk is below the
// low-water mark.
func TestReadOnlyEntryLogNoSpace(t *testing.T) {
	var notes []bool
	inj := &diskFull{covers: onEntryLogs}
	env := readOnlyEnv(t, 0.5, &notes)
	env.setFault(inj.fault)
	s := env.open(t)
	m := map[int64][]byte{}
	addModel(t, s, m, 0, 40, 1)
	inj.armed.Store(true)
	err := s.Checkpoint()
	require.True(t, vfs.IsNoSpace(err), "%v", err)
	ro, reason := s.ReadOnly()
	require.True(t, ro)
	require.Contains(t, reason, "no space left on device")
	requireWritesRefused(t, s, m)

	// The disk is freed but still above the low-water mark: the
	// checkpoint completes, the storage stays read-only.
	env.fillDisk(t, 0.85)
	s.CheckDisks()
	inj.free()
	require.NoError(t, s.Checkpoint())
	ro, _ = s.ReadOnly()
	require.True(t, ro, "still above the low-water mark")

	env.fillDisk(t, 0.5)
	s.CheckDisks()
	ro, reason = s.ReadOnly()
	require.False(t, ro, reason)
	addModel(t, s, m, 40, 60, 2)
	require.NoError(t, s.Checkpoint())
	s = env.crash(t, s, 5)
	for e, p := range m {
		requireEntry(t, s, 1, e, p)
	}
	require.NoError(t, s.Close())
}

// TestReadOnlyIndexNoSpace: ENOSPC in an index engine (lsm.ErrNoSpace)
// turns the storage read-only; once space returns and the engine has
// recovered, the first write passes (with no disk check: the refused
// write rechecks).
func TestReadOnlyIndexNoSpace(t *testing.T) {
	inj := &diskFull{covers: onIndexes}
	env := noSpaceEnv(inj)
	env.addTweak(func(o *Options) { o.DiskCheckInterval = -1 })
	s := env.open(t)
	m := map[int64][]byte{}
	addModel(t, s, m, 0, 40, 1)
	inj.armed.Store(true)
	require.Error(t, s.Checkpoint())
	ro, _ := s.ReadOnly()
	require.True(t, ro)
	requireWritesRefused(t, s, m)
	inj.free()
	waitFor(t, "the checkpoint and the engines to recover", func() bool {
		return s.Checkpoint() == nil && s.Dirs()[0].IndexError() == nil
	})
	waitFor(t, "a write accepted", func() bool { return s.AddEntry(1, 40, payload(1, 40, 1)) == nil })
	m[40] = payload(1, 40, 1)
	require.NoError(t, s.Checkpoint())
	s = env.crash(t, s, 9)
	for e, p := range m {
		requireEntry(t, s, 1, e, p)
	}
	require.NoError(t, s.Close())
}

// TestReadOnlyEIO: an I/O error on the entry logs (or in the engine)
// turns the storage read-only until an operator makes it writable: the
// disk falling below the low-water mark and a good checkpoint do not.
func TestReadOnlyEIO(t *testing.T) {
	for _, tc := range []struct {
		name   string
		covers func(string) bool
	}{{"entry log", onEntryLogs}, {"index", onIndexes}} {
		t.Run(tc.name, func(t *testing.T) {
			var notes []bool
			env := readOnlyEnv(t, 0.5, &notes)
			var mu sync.Mutex
			fire := false
			env.setFault(func(op vfs.Op) error {
				mu.Lock()
				defer mu.Unlock()
				if fire && tc.covers(op.Path) && (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync) {
					fire = false
					return errors.Wrap(syscall.EIO, "injected")
				}
				return nil
			})
			s := env.open(t)
			m := map[int64][]byte{}
			addModel(t, s, m, 0, 20, 1)
			require.NoError(t, s.Checkpoint())
			addModel(t, s, m, 20, 40, 1)
			mu.Lock()
			fire = true
			mu.Unlock()
			err := s.Checkpoint()
			require.Error(t, err)
			if tc.name == "index" {
				require.Error(t, s.Dirs()[0].IndexError(), "an engine I/O error is sticky")
			}
			ro, reason := s.ReadOnly()
			require.True(t, ro)
			require.True(t, strings.Contains(reason, "input/output error"), reason)
			requireWritesRefused(t, s, m)
			if tc.name == "entry log" {
				require.NoError(t, s.Checkpoint())
			}
			s.CheckDisks()
			ro, _ = s.ReadOnly()
			require.True(t, ro, "an I/O error stays")
			if tc.name == "index" {
				// The engine needs a restart: forcing writable does not
				// lift it.
				ro, _, err = s.SetReadOnly(false)
				require.NoError(t, err)
				require.True(t, ro)
				s = env.crash(t, s, 0)
			} else {
				ro, _, err = s.SetReadOnly(false)
				require.NoError(t, err)
				require.False(t, ro)
				addModel(t, s, m, 40, 50, 2)
				require.NoError(t, s.Checkpoint())
				s = env.crash(t, s, 11)
			}
			ro, _ = s.ReadOnly()
			require.False(t, ro, "a restart starts writable")
			for e, p := range m {
				if tc.name == "index" && e >= 20 {
					// The failed checkpoint's entries may be gone; what
					// an earlier checkpoint acknowledged must stay.
					continue
				}
				requireEntry(t, s, 1, e, p)
			}
			require.NoError(t, s.Close())
		})
	}
}

// TestReadOnlyForced: a forced read-only mode stays through disk checks
// until lifted; with readOnlyModeEnabled=false forcing it is refused.
func TestReadOnlyForced(t *testing.T) {
	var notes []bool
	env := readOnlyEnv(t, 0.5, &notes)
	s := env.open(t)
	m := map[int64][]byte{}
	addModel(t, s, m, 0, 10, 1)
	ro, reason, err := s.SetReadOnly(true)
	require.NoError(t, err)
	require.True(t, ro)
	require.Contains(t, reason, "forced")
	s.CheckDisks()
	requireWritesRefused(t, s, m)
	require.NoError(t, s.Checkpoint())

	// Forced and full: lifting the force leaves it read-only for space.
	env.fillDisk(t, 0.95)
	ro, reason, err = s.SetReadOnly(false)
	require.NoError(t, err)
	require.True(t, ro)
	require.NotContains(t, reason, "forced")
	env.fillDisk(t, 0.5)
	s.CheckDisks()
	ro, _ = s.ReadOnly()
	require.False(t, ro)
	require.Equal(t, []bool{true, false}, notes)
	require.NoError(t, s.AddEntry(1, 10, []byte("x")))
	require.NoError(t, s.Close())

	env.addTweak(func(o *Options) { o.ReadOnlyModeDisabled = true })
	s = env.open(t)
	_, _, err = s.SetReadOnly(true)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, s.Close())
}

// TestReadOnlyForceReadOnlyBookie: a storage opened with ForceReadOnly
// (forceReadOnlyBookie) is read-only from its open, through disk checks
// and restarts, reads and checkpoints go on, and it cannot be made
// writable (upstream refuses that too); it needs the read-only mode.
func TestReadOnlyForceReadOnlyBookie(t *testing.T) {
	var notes []bool
	env := readOnlyEnv(t, 0.5, &notes)
	s := env.open(t)
	m := map[int64][]byte{}
	addModel(t, s, m, 0, 10, 1)
	require.NoError(t, s.Close())

	env.addTweak(func(o *Options) { o.ForceReadOnly = true })
	s = env.open(t)
	ro, reason := s.ReadOnly()
	require.True(t, ro)
	require.Equal(t, "forced read-only by forceReadOnlyBookie=true", reason)
	requireWritesRefused(t, s, m)
	s.CheckDisks()
	ro, _, err := s.SetReadOnly(false)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.Contains(t, err.Error(), "cannot be made writable")
	require.True(t, ro)
	ro, _ = s.ReadOnly()
	require.True(t, ro)
	// Forcing it again is a no-op; a full disk adds its reason.
	ro, _, err = s.SetReadOnly(true)
	require.NoError(t, err)
	require.True(t, ro)
	env.fillDisk(t, 0.95)
	s.CheckDisks()
	_, reason = s.ReadOnly()
	require.Contains(t, reason, "forceReadOnlyBookie")
	require.Contains(t, reason, "over diskUsageThreshold")
	env.fillDisk(t, 0.5)
	s.CheckDisks()
	requireWritesRefused(t, s, m)
	require.NoError(t, s.Checkpoint())
	require.Equal(t, []bool{true}, notes, "read-only from the open, never writable")
	require.NoError(t, s.Close())

	env.addTweak(func(o *Options) { o.ReadOnlyModeDisabled = true })
	_, err = Open(env.options())
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.Contains(t, err.Error(), "ForceReadOnly (forceReadOnlyBookie) needs the read-only mode")
}

// TestReadOnlyOptions: thresholds out of range are refused, as upstream
// refuses them.
func TestReadOnlyOptions(t *testing.T) {
	for _, o := range []Options{
		{DiskUsageThreshold: 1},
		{DiskUsageThreshold: 0.5, DiskUsageWarnThreshold: 0.6},
		{DiskUsageThreshold: 0.5, DiskUsageLwmThreshold: 0.6},
		{DiskUsageThreshold: -0.1},
	} {
		o.LedgerDirs = []string{filepath.Join(t.TempDir(), "l")}
		_, err := Open(&o)
		require.ErrorIs(t, err, ErrInvalidArgument, "%+v", o)
		require.Contains(t, err.Error(), "disk usage thresholds")
	}
}

// TestReadOnlyDeleteLedger: ledgers can be deleted (and purged) while the
// storage is read-only for space: that is how an operator frees it.
func TestReadOnlyDeleteLedger(t *testing.T) {
	var notes []bool
	env := readOnlyEnv(t, 0.5, &notes)
	s := env.open(t)
	m := map[int64][]byte{}
	addModel(t, s, m, 0, 10, 1)
	require.NoError(t, s.AddEntry(2, 0, []byte("gone")))
	require.NoError(t, s.Checkpoint())
	env.fillDisk(t, 0.99)
	s.CheckDisks()
	existed, err := s.DeleteLedger(2)
	require.NoError(t, err)
	require.True(t, existed)
	require.NoError(t, s.Purge())
	_, err = s.GetEntry(2, 0)
	require.ErrorIs(t, err, ErrNoLedger)
	requireWritesRefused(t, s, m)
	require.NoError(t, s.Close())
}

package bookie

import (
	"strings"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// diskPerDir is a file system whose DiskUsage reports, for each
// directory prefix, the used fraction the test sets: directories on
// disks of their own (a MemFS is one disk).
type diskPerDir struct {
	vfs.FS
	mu   sync.Mutex
	used map[string]float64
}

func (f *diskPerDir) set(prefix string, used float64) {
	f.mu.Lock()
	f.used[prefix] = used
	f.mu.Unlock()
}

func (f *diskPerDir) DiskUsage(path string) (vfs.DiskUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	const total = 1 << 30
	for prefix, used := range f.used {
		if strings.HasPrefix(path, prefix+"/") || path == prefix {
			return vfs.DiskUsage{Total: total, Usable: uint64((1 - used) * total)}, nil
		}
	}
	return vfs.DiskUsage{Total: total, Usable: total}, nil
}

// TestReadOnlyOnlyWhenAllDisksFull is readOnlyModeOnAnyDiskFullEnabled
// false, upstream's behaviour then: a full directory takes no new ledger
// (new ones go to the next directory that is not full, the routing
// switching to recorded so that a restart finds them) and refuses adds to
// its own ledgers, while the storage stays writable; only when every
// directory is full is the storage read-only. Everything reads back after
// a restart, with every directory writable again.
func TestReadOnlyOnlyWhenAllDisksFull(t *testing.T) {
	env := newTestEnv("/d0", "/d1", "/d2")
	disks := &diskPerDir{used: map[string]float64{}}
	var notes []bool
	env.addTweak(func(o *Options) {
		disks.FS = o.FS
		o.FS = disks
		o.DiskCheckInterval = -1
		o.DiskUsageThreshold, o.DiskUsageWarnThreshold, o.DiskUsageLwmThreshold = 0.9, 0.85, 0.8
		o.ReadOnlyOnlyWhenAllDisksFull = true
		o.OnReadOnly = func(ro bool, _ string) { notes = append(notes, ro) }
	})
	s := env.open(t)
	addLedgers(t, s, 0, 6) // two ledgers in each directory

	disks.set("/d1", 0.95)
	s.CheckDisks()
	ro, _ := s.ReadOnly()
	require.False(t, ro, "one full directory: the storage stays writable")
	full, why := s.Dirs()[1].Full()
	require.True(t, full, "the full directory says so (the admin API's state and writable_dirs)")
	require.Equal(t, "/d1/current is 95.0% used, over diskUsageThreshold 90.0%", why)
	full, _ = s.Dirs()[0].Full()
	require.False(t, full)
	err := s.AddEntry(1, 100, []byte("x")) // ledger 1 lives in /d1
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorContains(t, err, "directory /d1/current is full")
	require.NoError(t, s.AddEntry(6, 0, payload(6, 0, 0)), "ledger 6 lives in /d0, which is not full")
	// The full directory's index disk has 5% of 1 GiB usable, less than
	// upstream's 100 MiB minUsableSizeForIndexFileCreation: no compaction.
	require.ErrorContains(t, s.Dirs()[1].CanCreateIndexFiles(), "less than minUsableSizeForIndexFileCreation")
	require.NoError(t, s.Dirs()[0].CanCreateIndexFiles())
	// New ledgers whose modulo directory is /d1 go to the next one.
	for _, l := range []int64{7, 10, 13} {
		for e := int64(0); e < 5; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
		require.Equal(t, "/d2", ledgerDirOf(t, s, l))
	}
	require.NoError(t, s.Checkpoint())
	requireLedgers(t, s, 0, 6)
	l, err := ondisk.ReadLayout(env.mem, "/d0/current")
	require.NoError(t, err)
	require.Equal(t, ondisk.RouteRecorded, l.Routing)

	// Every directory full: read-only.
	disks.set("/d0", 0.95)
	disks.set("/d2", 0.95)
	s.CheckDisks()
	ro, reason := s.ReadOnly()
	require.True(t, ro)
	require.Contains(t, reason, "/d0/current is 95.0% used")
	require.ErrorIs(t, s.AddEntry(16, 0, []byte("x")), ErrReadOnly)
	disks.set("/d0", 0.5)
	s.CheckDisks()
	ro, _ = s.ReadOnly()
	require.False(t, ro, "one directory below the low-water mark: writable again")
	full, _ = s.Dirs()[0].Full()
	require.False(t, full, "below the low-water mark: not full")
	require.Equal(t, []bool{true, false}, notes)
	require.NoError(t, s.Close())

	disks.set("/d1", 0.5)
	disks.set("/d2", 0.5)
	s = env.open(t)
	requireLedgers(t, s, 0, 6)
	for _, l := range []int64{7, 10, 13} {
		require.Equal(t, "/d2", ledgerDirOf(t, s, l), "found where it was placed")
		for e := int64(0); e < 5; e++ {
			requireEntry(t, s, l, e, payload(l, e, 0))
		}
	}
	require.NoError(t, s.AddEntry(1, 100, payload(1, 100, 0)), "/d1 takes writes again")
	require.NoError(t, s.Close())
}

// TestReadOnlyAnyDiskFullDefault: by default (upstream's
// readOnlyModeOnAnyDiskFullEnabled=true) one full directory turns the
// whole storage read-only.
func TestReadOnlyAnyDiskFullDefault(t *testing.T) {
	env := newTestEnv("/d0", "/d1")
	disks := &diskPerDir{used: map[string]float64{}}
	env.addTweak(func(o *Options) {
		disks.FS = o.FS
		o.FS = disks
		o.DiskCheckInterval = -1
		o.DiskUsageThreshold, o.DiskUsageWarnThreshold, o.DiskUsageLwmThreshold = 0.9, 0.85, 0.8
	})
	s := env.open(t)
	addLedgers(t, s, 0, 4)
	disks.set("/d1", 0.95)
	s.CheckDisks()
	ro, _ := s.ReadOnly()
	require.True(t, ro)
	require.ErrorIs(t, s.AddEntry(0, 100, []byte("x")), ErrReadOnly)
	full, _ := s.Dirs()[1].Full()
	require.True(t, full)
	require.NoError(t, s.Close())
}

package vfs

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOSDiskUsage(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	u, err := Default.DiskUsage(dir)
	require.NoError(t, err)
	require.NotZero(t, u.Total)
	require.LessOrEqual(t, u.Usable, u.Total)
	require.InDelta(t, 1-float64(u.Usable)/float64(u.Total), u.UsedFraction(), 1e-12)
	sub, err := Default.DiskUsage(filepath.Join(dir, "sub"))
	require.NoError(t, err)
	require.Equal(t, u.ID, sub.ID, "one file system")
	require.Equal(t, u.Total, sub.Total)

	_, err = Default.DiskUsage(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "missing")
}

func TestDiskUsageFraction(t *testing.T) {
	require.Zero(t, DiskUsage{}.UsedFraction(), "no size")
	require.Equal(t, 0.25, DiskUsage{Total: 1000, Usable: 750}.UsedFraction())
	require.EqualValues(t, 250, DiskUsage{Total: 1000, Usable: 750}.UsedBytes())
	require.EqualValues(t, 0, DiskUsage{Total: 10, Usable: 20}.UsedBytes())
}

// TestMemCapacity: writes fill a MemFS up to its capacity and no further,
// a write that does not fit writes what does and fails with ENOSPC, and
// removing or truncating files gives their space back (an open file's
// only once it is closed).
func TestMemCapacity(t *testing.T) {
	fs := NewMem()
	u, err := fs.DiskUsage("")
	require.NoError(t, err)
	require.EqualValues(t, unboundedCapacity, u.Total, "unbounded by default")
	require.EqualValues(t, u.Total, u.Usable)

	fs.SetCapacity(100)
	f, err := fs.Create("a")
	require.NoError(t, err)
	n, err := f.Write(make([]byte, 60))
	require.NoError(t, err)
	require.Equal(t, 60, n)
	requireUsage(t, fs, 100, 40)

	n, err = f.Write(make([]byte, 50))
	require.Equal(t, 40, n, "what fits is written")
	require.True(t, IsNoSpace(err), "%v", err)
	require.ErrorContains(t, err, "write a")
	requireUsage(t, fs, 100, 0)
	size, err := f.Size()
	require.NoError(t, err)
	require.EqualValues(t, 100, size)
	n, err = f.Write([]byte{1})
	require.Zero(t, n)
	require.True(t, IsNoSpace(err))

	// Removed while open: the bytes stay until the close.
	require.NoError(t, fs.Remove("a"))
	requireUsage(t, fs, 100, 0)
	require.NoError(t, f.Close())
	requireUsage(t, fs, 100, 100)

	// A second name does not count twice; truncation gives space back.
	writeFile(t, fs, "b", "0123456789", true)
	require.NoError(t, fs.Link("b", "c"))
	requireUsage(t, fs, 100, 90)
	writeFile(t, fs, "c", "", false)
	requireUsage(t, fs, 100, 100)

	// A capacity below what the files hold fails every write.
	writeFile(t, fs, "b", "0123456789", true)
	fs.SetCapacity(5)
	requireUsage(t, fs, 5, 0)
	g, err := fs.Create("d")
	require.NoError(t, err)
	_, err = g.Write([]byte{1})
	require.True(t, IsNoSpace(err))
	require.NoError(t, g.Close())
	fs.SetCapacity(0)
	requireUsage(t, fs, unboundedCapacity, unboundedCapacity-10)

	_, err = fs.DiskUsage("missing")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestMemCapacityCrash: a crash clone has its original's capacity, and
// counts only the bytes that survived.
func TestMemCapacityCrash(t *testing.T) {
	fs := NewMem()
	fs.SetCapacity(1000)
	writeFile(t, fs, "synced", "0123456789", true)
	writeFile(t, fs, "unsynced", "0123456789", false)
	syncDir(t, fs, "")
	requireUsage(t, fs, 1000, 980)
	requireUsage(t, fs.CrashClone(CrashOptions{}), 1000, 990)
}

func requireUsage(t *testing.T, fs *MemFS, total, usable uint64) {
	t.Helper()
	u, err := fs.DiskUsage("/")
	require.NoError(t, err)
	require.Equal(t, DiskUsage{Total: total, Usable: usable}, u, "%s", fs)
}

// TestMemCapacityModel runs random creations, writes, closes, removals,
// renames, links and capacity changes against a model of which inodes hold
// space, and checks DiskUsage and every write's outcome against it.
func TestMemCapacityModel(t *testing.T) {
	seeds, steps := 4, 2000
	if *long {
		seeds, steps = 20, 10000
	}
	for seed := range int64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testMemCapacityModel(t, seed, steps) })
	}
}

func testMemCapacityModel(t *testing.T, seed int64, steps int) {
	type inode struct{ size int64 }
	type handle struct {
		f    File
		node *inode
	}
	rng := rand.New(rand.NewSource(seed))
	fs := NewMem()
	names := map[string]*inode{}
	var handles []handle
	var capacity int64
	used := func() int64 {
		seen := map[*inode]bool{}
		var n int64
		for _, in := range names {
			if !seen[in] {
				seen[in], n = true, n+in.size
			}
		}
		for _, h := range handles {
			if !seen[h.node] {
				seen[h.node], n = true, n+h.node.size
			}
		}
		return n
	}
	randName := func() string { return string(rune('a' + rng.Intn(5))) }
	for step := range steps {
		switch rng.Intn(8) {
		case 0, 1:
			name := randName()
			f, err := fs.Create(name)
			require.NoError(t, err)
			in := names[name]
			if in == nil {
				in = &inode{}
				names[name] = in
			}
			in.size = 0
			handles = append(handles, handle{f, in})
		case 2, 3:
			if len(handles) == 0 {
				continue
			}
			h := handles[rng.Intn(len(handles))]
			data := make([]byte, rng.Intn(40))
			want := int64(len(data))
			if capacity > 0 {
				want = min(want, max(capacity-used(), 0))
			}
			n, err := h.f.Write(data)
			require.EqualValues(t, want, n, "step %d", step)
			require.Equal(t, int64(n) < int64(len(data)), IsNoSpace(err), "step %d: %v", step, err)
			h.node.size += int64(n)
		case 4:
			if len(handles) == 0 {
				continue
			}
			i := rng.Intn(len(handles))
			require.NoError(t, handles[i].f.Close())
			handles = append(handles[:i], handles[i+1:]...)
		case 5:
			name := randName()
			err := fs.Remove(name)
			require.Equal(t, names[name] == nil, err != nil, "step %d: remove %s: %v", step, name, err)
			delete(names, name)
		case 6:
			from, to := randName(), randName()
			if rng.Intn(2) == 0 {
				err := fs.Rename(from, to)
				require.Equal(t, names[from] == nil, err != nil, "step %d: rename: %v", step, err)
				// Two names of one inode stay as they are, as POSIX says.
				if err == nil && names[from] != names[to] {
					names[to] = names[from]
					delete(names, from)
				}
			} else {
				err := fs.Link(from, to)
				require.Equal(t, names[from] == nil || names[to] != nil, err != nil, "step %d: link: %v", step, err)
				if err == nil {
					names[to] = names[from]
				}
			}
		case 7:
			capacity = []int64{0, 50, 200, 1000}[rng.Intn(4)]
			fs.SetCapacity(capacity)
		}
		u, err := fs.DiskUsage("")
		require.NoError(t, err)
		total := uint64(unboundedCapacity)
		if capacity > 0 {
			total = uint64(capacity)
		}
		require.Equal(t, total, u.Total, "step %d", step)
		require.EqualValues(t, min(uint64(used()), total), u.UsedBytes(), "step %d\n%s", step, fs)
	}
}

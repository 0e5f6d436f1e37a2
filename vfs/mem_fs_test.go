package vfs

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var long = flag.Bool("long", false, "run the randomized tests for longer")

// writeFile creates name holding data, syncing the file if sync is set.
func writeFile(t *testing.T, fs FS, name, data string, sync bool) {
	t.Helper()
	f, err := fs.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

// readFile returns the contents of name.
func readFile(fs FS, name string) (string, error) {
	f, err := fs.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return "", err
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return "", err
	}
	return string(buf), nil
}

func syncDir(t *testing.T, fs FS, dir string) {
	t.Helper()
	d, err := fs.OpenDir(dir)
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, d.Close())
}

func requireContents(t *testing.T, fs *MemFS, name, want string) {
	t.Helper()
	got, err := readFile(fs, name)
	require.NoError(t, err, "%s", fs)
	require.Equal(t, want, got, "contents of %s in\n%s", name, fs)
}

func requireMissing(t *testing.T, fs *MemFS, name string) {
	t.Helper()
	_, err := fs.Stat(name)
	require.ErrorIs(t, err, os.ErrNotExist, "%s in\n%s", name, fs)
}

func TestMemRoundTrip(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("/db", 0o755))
	f, err := fs.Create("/db/a")
	require.NoError(t, err)
	for _, s := range []string{"hello ", "", "world"} {
		n, err := f.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	size, err := f.Size()
	require.NoError(t, err)
	require.EqualValues(t, 11, size)
	buf := make([]byte, 5)
	n, err := f.ReadAt(buf, 6) // a Create handle also reads
	require.NoError(t, err)
	require.Equal(t, "world", string(buf[:n]))
	require.NoError(t, f.Close())
	// Leading separators are optional: both names refer to one file.
	requireContents(t, fs, "db/a", "hello world")

	fi, err := fs.Stat("/db/a")
	require.NoError(t, err)
	require.Equal(t, "a", fi.Name())
	require.EqualValues(t, 11, fi.Size())
	require.False(t, fi.IsDir())
	require.True(t, fi.Mode().IsRegular())
	fi, err = fs.Stat("/db")
	require.NoError(t, err)
	require.Equal(t, "db", fi.Name())
	require.True(t, fi.IsDir())
	require.True(t, fi.Mode().IsDir())

	// Create truncates.
	writeFile(t, fs, "/db/a", "new", false)
	requireContents(t, fs, "/db/a", "new")
}

func TestMemReadAt(t *testing.T) {
	fs := NewMem()
	writeFile(t, fs, "f", "0123456789", false)
	f, err := fs.Open("f")
	require.NoError(t, err)
	defer f.Close()
	for _, c := range []struct {
		off, len int
		want     string
		eof      bool
	}{
		{off: 0, len: 10, want: "0123456789"},
		{off: 2, len: 3, want: "234"},
		{off: 8, len: 2, want: "89"},
		{off: 8, len: 5, want: "89", eof: true},
		{off: 10, len: 1, want: "", eof: true},
		{off: 50, len: 4, want: "", eof: true},
		{off: 50, len: 0, want: ""},
	} {
		buf := make([]byte, c.len)
		n, err := f.ReadAt(buf, int64(c.off))
		require.Equal(t, c.want, string(buf[:n]), "%+v", c)
		if c.eof {
			require.Equal(t, io.EOF, err, "%+v", c)
		} else {
			require.NoError(t, err, "%+v", c)
		}
	}
	_, err = f.ReadAt(make([]byte, 1), -1)
	require.Error(t, err, "negative offset")
}

func TestMemErrors(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("d/sub", 0o755))
	writeFile(t, fs, "d/f", "x", false)
	writeFile(t, fs, "g", "", false)

	for _, name := range []string{"missing", "d/missing", "missing/f"} {
		_, err := fs.Open(name)
		require.ErrorIs(t, err, os.ErrNotExist, "Open(%s)", name)
		_, err = fs.Stat(name)
		require.ErrorIs(t, err, os.ErrNotExist, "Stat(%s)", name)
		require.ErrorIs(t, fs.Remove(name), os.ErrNotExist, "Remove(%s)", name)
		require.NoError(t, fs.RemoveAll(name), "RemoveAll(%s)", name)
	}
	_, err := fs.Open("missing")
	var pathErr *os.PathError
	require.ErrorAs(t, err, &pathErr)
	require.Equal(t, "missing", pathErr.Path)

	openDir := func() File { d, err := fs.Open("d"); require.NoError(t, err); return d }
	openFile := func() File { f, err := fs.Open("d/f"); require.NoError(t, err); return f }
	failures := map[string]func() error{
		"create in a missing dir":     func() error { _, err := fs.Create("nodir/f"); return err },
		"create under a file":         func() error { _, err := fs.Create("d/f/g"); return err },
		"create over a dir":           func() error { _, err := fs.Create("d/sub"); return err },
		"remove a non-empty dir":      func() error { return fs.Remove("d") },
		"remove the root":             func() error { return fs.Remove("/") },
		"remove-all the root":         func() error { return fs.RemoveAll(".") },
		"rename over a dir":           func() error { return fs.Rename("d/f", "d/sub") },
		"rename a dir over a file":    func() error { return fs.Rename("d/sub", "g") },
		"rename a dir into itself":    func() error { return fs.Rename("d", "d/sub/d") },
		"rename a missing file":       func() error { return fs.Rename("d/nope", "d/g") },
		"rename into a missing dir":   func() error { return fs.Rename("d/f", "nodir/f") },
		"mkdir-all through a file":    func() error { return fs.MkdirAll("d/f/x", 0o755) },
		"open-dir of a file":          func() error { _, err := fs.OpenDir("d/f"); return err },
		"list a file":                 func() error { _, err := fs.List("d/f"); return err },
		"list a missing dir":          func() error { _, err := fs.List("nodir"); return err },
		"a path above the root":       func() error { _, err := fs.Create("../f"); return err },
		"read a directory":            func() error { _, err := openDir().ReadAt(make([]byte, 1), 0); return err },
		"write a read-only file":      func() error { _, err := openFile().Write([]byte("y")); return err },
		"write a directory":           func() error { _, err := openDir().Write([]byte("y")); return err },
		"lock a directory":            func() error { _, err := fs.Lock("d"); return err },
		"lock in a missing directory": func() error { _, err := fs.Lock("nodir/LOCK"); return err },
	}
	for name, fn := range failures {
		require.Error(t, fn(), name)
	}
	requireContents(t, fs, "d/f", "x")
	names, err := fs.List("d")
	require.NoError(t, err)
	require.Equal(t, []string{"f", "sub"}, names)

	// Every operation on a closed file fails with os.ErrClosed.
	f, err := fs.Create("d/closed")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	closedOps := map[string]func() error{
		"read":  func() error { _, err := f.ReadAt(make([]byte, 1), 0); return err },
		"write": func() error { _, err := f.Write([]byte("x")); return err },
		"sync":  f.Sync,
		"size":  func() error { _, err := f.Size(); return err },
		"close": f.Close,
	}
	for name, fn := range closedOps {
		require.ErrorIs(t, fn(), os.ErrClosed, name)
	}
}

// TestMemCreateExclusive: CreateExclusive refuses every existing name, and
// the name it creates is, like any other, durable once its directory is
// synced.
func TestMemCreateExclusive(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("d/sub", 0o755))
	writeFile(t, fs, "d/f", "old", true)
	for _, name := range []string{"d/f", "d/sub", "d"} {
		_, err := fs.CreateExclusive(name)
		require.ErrorIs(t, err, os.ErrExist, name)
	}
	_, err := fs.CreateExclusive("nodir/f")
	require.ErrorIs(t, err, os.ErrNotExist)
	requireContents(t, fs, "d/f", "old")

	f, err := fs.CreateExclusive("d/new")
	require.NoError(t, err)
	_, err = f.Write([]byte("new"))
	require.NoError(t, err)
	got := make([]byte, 3)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err, "the file is open for reading too")
	require.Equal(t, "new", string(got))
	require.NoError(t, f.Sync())
	requireMissing(t, fs.CrashClone(CrashOptions{}), "d/new")
	syncDir(t, fs, "d")
	requireContents(t, fs.CrashClone(CrashOptions{}), "d/new", "new")
	require.NoError(t, f.Close())
	_, err = fs.CreateExclusive("d/new")
	require.ErrorIs(t, err, os.ErrExist)

	// A removed name can be created again.
	require.NoError(t, fs.Remove("d/new"))
	f, err = fs.CreateExclusive("d/new")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	requireContents(t, fs, "d/new", "")
}

func TestMemRenameAndRemove(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("a", 0o755))
	require.NoError(t, fs.MkdirAll("b", 0o755))
	writeFile(t, fs, "a/x", "x", false)
	writeFile(t, fs, "b/y", "y", false)

	require.NoError(t, fs.Rename("a/x", "b/y")) // replaces y
	requireContents(t, fs, "b/y", "x")
	requireMissing(t, fs, "a/x")
	require.NoError(t, fs.Rename("b/y", "b/y")) // renaming a file onto itself is a no-op
	requireContents(t, fs, "b/y", "x")

	require.NoError(t, fs.Rename("b", "a/b")) // directories move with their contents
	requireContents(t, fs, "a/b/y", "x")

	// An open file keeps working after its name is removed.
	f, err := fs.Create("a/b/z")
	require.NoError(t, err)
	require.NoError(t, fs.RemoveAll("a"))
	requireMissing(t, fs, "a/b/z")
	_, err = f.Write([]byte("still here"))
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	require.EqualValues(t, 10, size)
	require.NoError(t, f.Close())
	names, err := fs.List("/")
	require.NoError(t, err)
	require.Empty(t, names)
}

func TestMemLock(t *testing.T) {
	fs := NewMem()
	l, err := fs.Lock("LOCK")
	require.NoError(t, err)
	_, err = fs.Lock("/LOCK")
	require.ErrorIs(t, err, ErrLockHeld)
	require.ErrorContains(t, err, "lock /LOCK is held by another holder")
	_, err = fs.Stat("LOCK")
	require.NoError(t, err, "Lock creates its file")
	require.NoError(t, l.Close())
	require.Error(t, l.Close(), "second Close of a lock")

	l2, err := fs.Lock("LOCK")
	require.NoError(t, err)
	// A crash releases every lock.
	l3, err := fs.CrashClone(CrashOptions{}).Lock("LOCK")
	require.NoError(t, err)
	require.NoError(t, l2.Close())
	require.NoError(t, l3.Close())
}

// TestMemConcurrent runs writers, readers and listers on different files at
// once; run it with -race.
func TestMemConcurrent(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("d", 0o755))
	const writers, writes = 4, 200
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for w := range writers {
		name := fmt.Sprintf("d/%d", w)
		f, err := fs.Create(name)
		require.NoError(t, err)
		wg.Go(func() { errs <- appendBytes(f, writes) })
		wg.Go(func() { errs <- readGrowingFile(fs, name, writes) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for w := range writers {
		fi, err := fs.Stat(fmt.Sprintf("d/%d", w))
		require.NoError(t, err)
		require.EqualValues(t, writes, fi.Size())
	}
}

// appendBytes writes the bytes 0, 1, ... count-1 to f one at a time, syncing
// now and then, and closes f.
func appendBytes(f File, count int) error {
	for i := range count {
		if _, err := f.Write([]byte{byte(i)}); err != nil {
			return err
		}
		if i%50 == 0 {
			if err := f.Sync(); err != nil {
				return err
			}
		}
	}
	return f.Close()
}

// readGrowingFile reads name while appendBytes writes it, checking every
// byte it sees, and lists its directory in between.
func readGrowingFile(fs FS, name string, count int) error {
	r, err := fs.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	buf := make([]byte, count)
	for range count {
		n, err := r.ReadAt(buf, 0)
		if err != nil && err != io.EOF {
			return err
		}
		for i := range n {
			if buf[i] != byte(i) {
				return fmt.Errorf("%s: byte %d is %d", name, i, buf[i])
			}
		}
		if _, err := fs.List(filepath.Dir(name)); err != nil {
			return err
		}
	}
	return nil
}

func TestMemCrashFileBytes(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("db", 0o755))
	f, err := fs.Create("db/log")
	require.NoError(t, err)
	syncDir(t, fs, "db")
	_, err = f.Write([]byte("synced;"))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	_, err = f.Write([]byte("unsynced"))
	require.NoError(t, err)

	crashed := fs.CrashClone(CrashOptions{})
	requireContents(t, crashed, "db/log", "synced;")
	// The old FS is untouched, and its open file writes to it only.
	requireContents(t, fs, "db/log", "synced;unsynced")
	_, err = f.Write([]byte("!"))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	requireContents(t, fs, "db/log", "synced;unsynced!")
	requireContents(t, crashed, "db/log", "synced;")

	// A truncation is not durable until the file is synced.
	writeFile(t, fs, "db/log", "short", false)
	requireContents(t, fs.CrashClone(CrashOptions{}), "db/log", "synced;unsynced!")
	writeFile(t, fs, "db/log", "short", true)
	requireContents(t, fs.CrashClone(CrashOptions{}), "db/log", "short")

	// The clone is durable as it stands: crashing it again changes nothing.
	requireContents(t, crashed.CrashClone(CrashOptions{}), "db/log", "synced;")
}

func TestMemCrashDirEntries(t *testing.T) {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("db", 0o755))
	writeFile(t, fs, "db/created", "c", true)
	writeFile(t, fs, "db/kept", "k", true)
	writeFile(t, fs, "db/removed", "r", true)
	syncDir(t, fs, "db")

	writeFile(t, fs, "db/lost", "l", true)
	writeFile(t, fs, "db/tmp", "new", true)
	require.NoError(t, fs.Rename("db/tmp", "db/kept"))
	require.NoError(t, fs.Remove("db/removed"))
	require.NoError(t, fs.Rename("db/created", "db/moved"))

	dump := fs.String()
	require.Contains(t, dump, "/db/lost size=1 synced=1 [name not durable]")
	require.Contains(t, dump, "/db/removed size=1 synced=1 [removed; name durable until dir sync]")
	require.Contains(t, dump, "/db/kept size=3 synced=3 [replaced; old inode durable until dir sync]")

	// Without a directory sync every name change is undone.
	crashed := fs.CrashClone(CrashOptions{})
	requireMissing(t, crashed, "db/lost")
	requireMissing(t, crashed, "db/moved")
	requireContents(t, crashed, "db/kept", "k")
	requireContents(t, crashed, "db/removed", "r")
	requireContents(t, crashed, "db/created", "c")

	// After it, every change is kept.
	syncDir(t, fs, "db")
	crashed = fs.CrashClone(CrashOptions{})
	requireContents(t, crashed, "db/lost", "l")
	requireContents(t, crashed, "db/kept", "new")
	requireContents(t, crashed, "db/moved", "c")
	requireMissing(t, crashed, "db/removed")
	requireMissing(t, crashed, "db/created")
	names, err := crashed.List("db")
	require.NoError(t, err)
	require.Equal(t, []string{"kept", "lost", "moved"}, names)

	// MkdirAll'd directories survive without a sync.
	require.NoError(t, fs.MkdirAll("db/sub/deeper", 0o755))
	fi, err := fs.CrashClone(CrashOptions{}).Stat("db/sub/deeper")
	require.NoError(t, err)
	require.True(t, fi.IsDir())
}

func TestMemCrashTornTail(t *testing.T) {
	const synced, tail = "synced", "+0123456789"
	fs := NewMem()
	w, err := fs.Create("log")
	require.NoError(t, err)
	_, err = w.Write([]byte(synced))
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	writeFile(t, fs, "rewritten", "old contents", true)
	syncDir(t, fs, "/")
	_, err = w.Write([]byte(tail))
	require.NoError(t, err)
	writeFile(t, fs, "rewritten", "new", false) // not a pure append

	// Without Rand the whole tail survives.
	whole := fs.CrashClone(CrashOptions{KeepUnsyncedTail: true})
	requireContents(t, whole, "log", synced+tail)
	requireContents(t, whole, "rewritten", "old contents")

	rng := rand.New(rand.NewSource(1))
	lengths := map[int]bool{}
	for range 200 {
		crashed := fs.CrashClone(CrashOptions{Rand: rng, KeepUnsyncedTail: true})
		got, err := readFile(crashed, "log")
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(synced+tail, got) && len(got) >= len(synced),
			"torn file %q is not the synced bytes plus a prefix of the tail", got)
		lengths[len(got)] = true
		requireContents(t, crashed, "rewritten", "old contents")
	}
	// Every length from the synced bytes alone to the whole file shows up.
	require.Len(t, lengths, len(tail)+1)
}

// TestMemMatchesOS applies the same random operations to a MemFS and to the
// operating system's file system and checks they agree on every result.
func TestMemMatchesOS(t *testing.T) {
	seeds, steps := 1, 3000
	if *long {
		seeds, steps = 20, 20000
	}
	for seed := range int64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testMemMatchesOS(t, seed, steps) })
	}
}

func testMemMatchesOS(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	mem := NewMem()
	osName := func(name string) string { return filepath.Join(root, name) }
	// Names overlap ("a" is both a directory and a file name) so that
	// file/directory conflicts come up.
	dirs := []string{"", "a", "a/b", "c"}
	bases := []string{"x", "y", "a", "c"}
	randDir := func() string { return dirs[rng.Intn(len(dirs))] }
	randPath := func() string { return filepath.Join(randDir(), bases[rng.Intn(len(bases))]) }

	// At most one file is open for writing: os.File writes at its own
	// offset, so two handles on one inode would not append the way the
	// File interface promises.
	var memW, osW File
	closeWriter := func() {
		if memW != nil {
			require.NoError(t, memW.Close())
			require.NoError(t, osW.Close())
			memW, osW = nil, nil
		}
	}
	// successes counts the operations that succeeded on both, by kind, to
	// check that the workload does more than fail.
	successes := map[string]int{}
	agree := func(what string, memErr, osErr error) bool {
		t.Helper()
		if (memErr == nil) != (osErr == nil) ||
			errors.Is(memErr, os.ErrNotExist) != errors.Is(osErr, os.ErrNotExist) ||
			errors.Is(memErr, os.ErrExist) != errors.Is(osErr, os.ErrExist) {
			t.Fatalf("%s: MemFS error %v, OS error %v\n%s", what, memErr, osErr, mem)
		}
		if memErr == nil {
			successes[strings.Fields(what)[0]]++
		}
		return memErr == nil
	}

	for step := range steps {
		switch rng.Intn(11) {
		case 0:
			d := randDir()
			agree("mkdir-all "+d, mem.MkdirAll(d, 0o755), os.MkdirAll(osName(d), 0o755))
		case 1:
			closeWriter()
			p := randPath()
			create, memCreate, what := Default.Create, mem.Create, "create "
			if rng.Intn(2) == 0 {
				create, memCreate, what = Default.CreateExclusive, mem.CreateExclusive, "create-exclusive "
			}
			mf, memErr := memCreate(p)
			of, osErr := create(osName(p))
			if agree(what+p, memErr, osErr) {
				memW, osW = mf, of
			}
		case 2, 3:
			if memW != nil {
				data := make([]byte, rng.Intn(100))
				rng.Read(data)
				size, err := memW.Size()
				require.NoError(t, err)
				if rng.Intn(3) == 0 && size > 0 {
					// Over bytes already written (WriteAt past the end is
					// TestMemWriteAtMatchesOS's: Write then differs).
					off := rng.Int63n(size)
					data = data[:min(int64(len(data)), size-off)]
					_, memErr := memW.WriteAt(data, off)
					_, osErr := osW.WriteAt(data, off)
					agree("write-at", memErr, osErr)
					continue
				}
				_, memErr := memW.Write(data)
				_, osErr := osW.Write(data)
				agree("write", memErr, osErr)
			}
		case 4:
			p := randPath()
			agree("remove "+p, mem.Remove(p), os.Remove(osName(p)))
		case 5:
			p := randPath()
			if rng.Intn(2) == 0 {
				p = randDir()
			}
			if p != "" {
				agree("remove-all "+p, mem.RemoveAll(p), os.RemoveAll(osName(p)))
			}
		case 6:
			from, to := randPath(), randPath()
			if rng.Intn(3) == 0 {
				from = randDir()
			}
			if from != "" {
				agree("rename "+from+" "+to, mem.Rename(from, to), os.Rename(osName(from), osName(to)))
			}
		case 7:
			p := randPath()
			if fi, err := mem.Stat(p); err == nil && fi.IsDir() {
				continue // reading a directory fails differently; Stat covers it
			}
			memData, memErr := readFile(mem, p)
			osData, osErr := readFile(Default, osName(p))
			if agree("read "+p, memErr, osErr) {
				require.Equal(t, osData, memData, "step %d: contents of %s", step, p)
			}
		case 8:
			p := randPath()
			memFI, memErr := mem.Stat(p)
			osFI, osErr := os.Stat(osName(p))
			if agree("stat "+p, memErr, osErr) {
				require.Equal(t, osFI.Name(), memFI.Name(), "step %d: stat %s", step, p)
				require.Equal(t, osFI.IsDir(), memFI.IsDir(), "step %d: stat %s", step, p)
				if !memFI.IsDir() {
					require.Equal(t, osFI.Size(), memFI.Size(), "step %d: stat %s", step, p)
				}
			}
		case 9:
			d := randDir()
			memNames, memErr := mem.List(d)
			osNames, osErr := Default.List(osName(d))
			if agree("list "+d, memErr, osErr) {
				require.Equal(t, osNames, memNames, "step %d: list %q", step, d)
			}
		case 10:
			if memW != nil && rng.Intn(2) == 0 {
				if rng.Intn(2) == 0 {
					agree("datasync", memW.Datasync(), osW.Datasync())
				} else {
					agree("sync", memW.Sync(), osW.Sync())
				}
				continue
			}
			d := randDir()
			if fi, err := mem.Stat(d); err == nil && !fi.IsDir() {
				continue // the OS opens a file as a directory; MemFS refuses
			}
			agree("sync-dir "+d, syncDirErr(mem, d), syncDirErr(Default, osName(d)))
		}
	}
	closeWriter()
	for _, kind := range []string{"create", "create-exclusive", "write", "write-at", "datasync", "remove", "remove-all", "rename", "read", "stat", "list", "sync", "sync-dir"} {
		require.NotZero(t, successes[kind], "no %s succeeded: the workload needs tuning (%v)", kind, successes)
	}
	compareTrees(t, mem, root, "")
}

func syncDirErr(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// compareTrees checks that dir holds the same names and bytes in mem as
// under root on the OS.
func compareTrees(t *testing.T, mem *MemFS, root, dir string) {
	t.Helper()
	memNames, err := mem.List(dir)
	require.NoError(t, err)
	osNames, err := Default.List(filepath.Join(root, dir))
	require.NoError(t, err)
	require.Equal(t, osNames, memNames, "list %q", dir)
	for _, name := range memNames {
		p := filepath.Join(dir, name)
		fi, err := mem.Stat(p)
		require.NoError(t, err)
		if fi.IsDir() {
			compareTrees(t, mem, root, p)
			continue
		}
		memData, err := readFile(mem, p)
		require.NoError(t, err)
		osData, err := readFile(Default, filepath.Join(root, p))
		require.NoError(t, err)
		require.Equal(t, osData, memData, "contents of %s", p)
	}
}

// BenchmarkMemAppendSync measures the cost MemFS adds to a WAL-like pattern:
// 4 KiB appends with a sync every 16 of them, starting a new file every
// 4 MiB as a log rotation would.
func BenchmarkMemAppendSync(b *testing.B) {
	fs := NewMem()
	var f File
	block := make([]byte, 4096)
	b.SetBytes(int64(len(block)))
	for i := 0; b.Loop(); i++ {
		if i%1024 == 0 {
			var err error
			f, err = fs.Create("log")
			require.NoError(b, err)
		}
		_, err := f.Write(block)
		require.NoError(b, err)
		if i%16 == 15 {
			require.NoError(b, f.Sync())
		}
	}
}

func TestLink(t *testing.T) {
	for name, fs := range map[string]FS{"mem": NewMem(), "os": Default} {
		t.Run(name, func(t *testing.T) {
			dir := "linkdir"
			if name == "os" {
				dir = filepath.Join(t.TempDir(), "linkdir")
			}
			require.NoError(t, fs.MkdirAll(dir, 0o755))
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			f, err := fs.Create(a)
			require.NoError(t, err)
			_, err = f.Write([]byte("hello"))
			require.NoError(t, err)
			require.NoError(t, f.Sync())
			require.NoError(t, f.Close())
			require.NoError(t, fs.Link(a, b))
			require.Error(t, fs.Link(a, b), "the new name must not exist")
			require.Error(t, fs.Link(filepath.Join(dir, "missing"), filepath.Join(dir, "c")))
			require.NoError(t, fs.Remove(a))
			g, err := fs.Open(b)
			require.NoError(t, err)
			buf := make([]byte, 5)
			_, err = g.ReadAt(buf, 0)
			require.NoError(t, err)
			require.Equal(t, "hello", string(buf))
			require.NoError(t, g.Close())
		})
	}
}

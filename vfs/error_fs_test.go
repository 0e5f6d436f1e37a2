package vfs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// opCase sets up one operation of a kind on fs (opening whatever file it
// needs) and returns the operation, ready to run.
type opCase struct {
	path  string
	setup func(t *testing.T, fs FS) func() error
}

func fsOp(fn func(fs FS) error) func(*testing.T, FS) func() error {
	return func(_ *testing.T, fs FS) func() error { return func() error { return fn(fs) } }
}

func fileOp(open func(FS) (File, error), fn func(File) error) func(*testing.T, FS) func() error {
	return func(t *testing.T, fs FS) func() error {
		f, err := open(fs)
		require.NoError(t, err)
		return func() error { return fn(f) }
	}
}

func openF(fs FS) (File, error)   { return fs.Open("d/f") }
func createW(fs FS) (File, error) { return fs.Create("d/w") }

// createAndWriteW leaves unsynced bytes in d/w, which a failed Sync must not
// make durable.
func createAndWriteW(fs FS) (File, error) {
	f, err := fs.Create("d/w")
	if err == nil {
		_, err = f.Write([]byte("abc"))
	}
	return f, err
}

func newTestMem(t *testing.T) *MemFS {
	fs := NewMem()
	require.NoError(t, fs.MkdirAll("d", 0o755))
	writeFile(t, fs, "d/f", "x", true)
	return fs
}

// TestErrorFSEachOp fails each kind of operation in turn and checks the
// error and that the inner FS saw nothing of the failed call.
func TestErrorFSEachOp(t *testing.T) {
	opCases := map[OpKind]opCase{
		OpCreate:          {"d/new", fsOp(func(fs FS) error { _, err := fs.Create("d/new"); return err })},
		OpCreateExclusive: {"d/new", fsOp(func(fs FS) error { _, err := fs.CreateExclusive("d/new"); return err })},
		OpOpen:            {"d/f", fsOp(func(fs FS) error { _, err := fs.Open("d/f"); return err })},
		OpOpenDir:         {"d", fsOp(func(fs FS) error { _, err := fs.OpenDir("d"); return err })},
		OpRemove:          {"d/f", fsOp(func(fs FS) error { return fs.Remove("d/f") })},
		OpRemoveAll:       {"d", fsOp(func(fs FS) error { return fs.RemoveAll("d") })},
		OpRename:          {"d/g", fsOp(func(fs FS) error { return fs.Rename("d/f", "d/g") })},
		OpLink:            {"d/g", fsOp(func(fs FS) error { return fs.Link("d/f", "d/g") })},
		OpMkdirAll:        {"e/e", fsOp(func(fs FS) error { return fs.MkdirAll("e/e", 0o755) })},
		OpList:            {"d", fsOp(func(fs FS) error { _, err := fs.List("d"); return err })},
		OpStat:            {"d/f", fsOp(func(fs FS) error { _, err := fs.Stat("d/f"); return err })},
		OpLock:            {"d/LOCK", fsOp(func(fs FS) error { _, err := fs.Lock("d/LOCK"); return err })},
		OpRead:            {"d/f", fileOp(openF, func(f File) error { _, err := f.ReadAt(make([]byte, 1), 0); return err })},
		OpWrite:           {"d/w", fileOp(createW, func(f File) error { _, err := f.Write([]byte("abc")); return err })},
		OpSync:            {"d/w", fileOp(createAndWriteW, File.Sync)},
		OpClose:           {"d/f", fileOp(openF, File.Close)},
		OpSize:            {"d/f", fileOp(openF, func(f File) error { _, err := f.Size(); return err })},
		OpDiskUsage:       {"d", fsOp(func(fs FS) error { _, err := fs.DiskUsage("d"); return err })},
	}
	for kind := range numOpKinds {
		c, ok := opCases[kind]
		require.True(t, ok, "no test case for %s", kind)
		t.Run(kind.String(), func(t *testing.T) {
			// Control: with nothing injected the operation succeeds.
			mem := newTestMem(t)
			run := c.setup(t, NewErrorFS(mem, OnOp(kind, "no such path")))
			require.NoError(t, run())

			mem = newTestMem(t)
			run = c.setup(t, NewErrorFS(mem, OnOp(kind, c.path)))
			before := mem.String()
			err := run()
			require.ErrorIs(t, err, ErrInjected)
			require.ErrorContains(t, err, kind.String())
			require.ErrorContains(t, err, c.path)
			require.Equal(t, before, mem.String(), "the failed %s changed the inner FS", kind)
		})
	}
}

// TestErrorFSCloseStillCloses checks that an injected Close failure still
// releases the inner file and lock.
func TestErrorFSCloseStillCloses(t *testing.T) {
	mem := newTestMem(t)
	efs := NewErrorFS(mem, OnOp(OpClose, ""))
	f, err := efs.Open("d/f")
	require.NoError(t, err)
	require.ErrorIs(t, f.Close(), ErrInjected)
	_, err = f.(*errorFile).inner.Size()
	require.ErrorIs(t, err, os.ErrClosed, "inner file still open after a failed Close")
	l, err := efs.Lock("LOCK")
	require.NoError(t, err)
	require.ErrorIs(t, l.Close(), ErrInjected)
	l2, err := mem.Lock("LOCK")
	require.NoError(t, err)
	require.NoError(t, l2.Close())
}

// workload runs a fixed sequence of operations touching every kind, going on
// after failures, and returns the errors it met.
func workload(fs FS) []error {
	var errs []error
	check := func(err error) bool {
		if err != nil {
			errs = append(errs, err)
		}
		return err == nil
	}
	check(fs.MkdirAll("d", 0o755))
	if f, err := fs.Create("d/f"); check(err) {
		_, err = f.Write([]byte("hello"))
		check(err)
		check(f.Sync())
		check(f.Close())
	}
	if d, err := fs.OpenDir("d"); check(err) {
		check(d.Sync())
		check(d.Close())
	}
	check(fs.Rename("d/f", "d/g"))
	if f, err := fs.Open("d/g"); check(err) {
		_, err = f.ReadAt(make([]byte, 5), 0)
		check(err)
		_, err = f.Size()
		check(err)
		check(f.Close())
	}
	_, err := fs.Stat("d/g")
	check(err)
	_, err = fs.List("d")
	check(err)
	if l, err := fs.Lock("d/LOCK"); check(err) {
		check(l.Close())
	}
	check(fs.Remove("d/g"))
	check(fs.RemoveAll("d"))
	return errs
}

// TestOnIndex fails every operation of the workload in turn and checks that
// each run fails exactly the operation with that index.
func TestOnIndex(t *testing.T) {
	var ops []Op
	counter := OnIndex(-1)
	record := InjectorFunc(func(op Op) error {
		ops = append(ops, op)
		return counter.MaybeError(op)
	})
	require.Empty(t, workload(NewErrorFS(NewMem(), record)), "workload without injection")
	require.EqualValues(t, len(ops), counter.Ops())
	require.GreaterOrEqual(t, len(ops), int(numOpKinds))
	for i, op := range ops {
		inj := OnIndex(int64(i))
		errs := workload(NewErrorFS(NewMem(), inj))
		var injected []error
		for _, err := range errs {
			if errors.Is(err, ErrInjected) {
				injected = append(injected, err)
			}
		}
		require.Len(t, injected, 1, "op %d (%s)", i, op)
		require.ErrorContains(t, injected[0], op.String(), "op %d", i)
		require.LessOrEqual(t, inj.Ops(), int64(len(ops)), "op %d", i)
	}
}

// TestOnIndexConcurrent checks that exactly one of many concurrent
// operations fails.
func TestOnIndexConcurrent(t *testing.T) {
	const goroutines, opsEach = 8, 100
	inj := OnIndex(goroutines * opsEach / 2)
	efs := NewErrorFS(newTestMem(t), inj)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	for range goroutines {
		wg.Go(func() {
			for range opsEach {
				if _, err := efs.Stat("d/f"); err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	require.Len(t, failures, 1)
	require.ErrorIs(t, failures[0], ErrInjected)
	require.EqualValues(t, goroutines*opsEach, inj.Ops())
}

func TestToggle(t *testing.T) {
	toggle := NewToggle(OnOp(OpStat, ""))
	efs := NewErrorFS(newTestMem(t), toggle)
	for _, on := range []bool{false, true, false, true} {
		if on {
			toggle.On()
		} else {
			toggle.Off()
		}
		_, err := efs.Stat("d/f")
		if on {
			require.ErrorIs(t, err, ErrInjected)
		} else {
			require.NoError(t, err)
		}
	}

	// While off, an IndexInjector inside does not count.
	index := OnIndex(0)
	toggle = NewToggle(index)
	efs = NewErrorFS(newTestMem(t), toggle)
	_, err := efs.Stat("d/f")
	require.NoError(t, err)
	toggle.On()
	_, err = efs.Stat("d/f")
	require.ErrorIs(t, err, ErrInjected, "first op after switching on")
}

func TestInjectorFunc(t *testing.T) {
	errDiskFull := errors.New("disk full")
	inj := InjectorFunc(func(op Op) error {
		if op.Kind == OpRename && op.NewPath == "CURRENT" {
			return errDiskFull
		}
		return nil
	})
	mem := NewMem()
	efs := NewErrorFS(mem, inj)
	writeFile(t, efs, "CURRENT.tmp", "MANIFEST-1", true)
	err := efs.Rename("CURRENT.tmp", "CURRENT")
	require.ErrorIs(t, err, ErrInjected)
	require.ErrorIs(t, err, errDiskFull)
	require.ErrorContains(t, err, `rename "CURRENT.tmp" -> "CURRENT"`)
	require.NoError(t, efs.Rename("CURRENT.tmp", "CURRENT2"))
}

// TestErrorFSShortWrite: a Write failed with ErrShortWrite leaves half of
// its bytes in the file, and the error says what failed.
func TestErrorFSShortWrite(t *testing.T) {
	mem := NewMem()
	armed := true
	efs := NewErrorFS(mem, InjectorFunc(func(op Op) error {
		if op.Kind == OpWrite && armed {
			armed = false
			return ErrShortWrite
		}
		return nil
	}))
	f, err := efs.Create("log")
	require.NoError(t, err)
	n, err := f.Write([]byte("0123456789"))
	require.ErrorIs(t, err, ErrShortWrite)
	require.ErrorIs(t, err, ErrInjected)
	require.ErrorContains(t, err, `write "log"`)
	require.Equal(t, 5, n)
	n, err = f.Write([]byte("abc"))
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.NoError(t, f.Close())
	requireContents(t, mem, "log", "01234abc")
}

// TestErrorFSOverOS checks the wrapper on the operating system's FS.
func TestErrorFSOverOS(t *testing.T) {
	dir := t.TempDir()
	efs := NewErrorFS(Default, OnOp(OpSync, "log"))
	f, err := efs.Create(dir + "/log")
	require.NoError(t, err)
	_, err = f.Write([]byte("data"))
	require.NoError(t, err)
	require.ErrorIs(t, f.Sync(), ErrInjected)
	require.NoError(t, f.Close())
	got, err := readFile(efs, dir+"/log")
	require.NoError(t, err)
	require.Equal(t, "data", got)
	require.Equal(t, "OpKind(99)", fmt.Sprint(OpKind(99)))
}

package vfs

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemWriteAtMatchesOS writes a file only with WriteAt, over its bytes
// and past its end (leaving gaps of zeros), on the OS and on a MemFS, and
// compares them after every write.
func TestMemWriteAtMatchesOS(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	mem := NewMem()
	osPath := filepath.Join(t.TempDir(), "f")
	mf, err := mem.Create("f")
	require.NoError(t, err)
	of, err := Default.Create(osPath)
	require.NoError(t, err)
	for i := range 300 {
		size, err := mf.Size()
		require.NoError(t, err)
		off := rng.Int63n(size + 64)
		data := make([]byte, rng.Intn(64))
		rng.Read(data)
		mn, merr := mf.WriteAt(data, off)
		on, oerr := of.WriteAt(data, off)
		require.NoError(t, merr)
		require.NoError(t, oerr)
		require.Equal(t, on, mn)
		if i%7 == 0 {
			require.NoError(t, mf.Datasync())
			require.NoError(t, of.Datasync())
		}
		memData, err := readFile(mem, "f")
		require.NoError(t, err)
		osData, err := readFile(Default, osPath)
		require.NoError(t, err)
		require.Equal(t, osData, memData, "after write %d (%d bytes at %d)", i, len(data), off)
	}
	require.NoError(t, mf.Close())
	require.NoError(t, of.Close())
}

// TestMemCrashWriteAt checks what a power loss keeps of a file written in
// place: a pre-allocated region of zeros that was synced stays; bytes
// written into it since the last sync (Sync or Datasync) are dropped, the
// ones written before it stay; and growing past the synced length is
// dropped too. Torn tails (KeepUnsyncedTail) apply to appends only: a file
// overwritten since its last sync keeps exactly its synced bytes.
func TestMemCrashWriteAt(t *testing.T) {
	for _, datasync := range []bool{false, true} {
		fs := NewMem()
		f, err := fs.Create("j")
		require.NoError(t, err)
		syncDir(t, fs, "")
		sync := f.Sync
		if datasync {
			sync = f.Datasync
		}
		zeros := make([]byte, 64)
		_, err = f.WriteAt(zeros, 0) // pre-allocate
		require.NoError(t, err)
		crash := func() string {
			t.Helper()
			for _, opts := range []CrashOptions{{}, {KeepUnsyncedTail: true}} {
				c := fs.CrashClone(opts)
				got, err := readFile(c, "j")
				require.NoError(t, err)
				if opts.KeepUnsyncedTail {
					continue
				}
				return got
			}
			return ""
		}
		require.Equal(t, "", crash(), "the pre-allocation was never synced")
		require.NoError(t, sync())
		require.Equal(t, string(zeros), crash())

		_, err = f.WriteAt([]byte("abc"), 0)
		require.NoError(t, err)
		require.Equal(t, string(zeros), crash(), "unsynced bytes written into synced zeros")
		require.NoError(t, sync())
		want := "abc" + string(zeros[3:])
		require.Equal(t, want, crash())

		_, err = f.WriteAt([]byte("def"), 3)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("xyz"), 70) // past the end: 6 zeros, then xyz
		require.NoError(t, err)
		require.Equal(t, want, crash(), "an in-place write and a growth, both unsynced")
		c := fs.CrashClone(CrashOptions{KeepUnsyncedTail: true})
		got, err := readFile(c, "j")
		require.NoError(t, err)
		require.Equal(t, want, got, "a file overwritten since its sync keeps its synced bytes, torn tails or not")
		require.NoError(t, sync())
		want = "abcdef" + string(zeros[6:]) + string(make([]byte, 6)) + "xyz"
		require.Equal(t, want, crash())

		// Appends after in-place writes are captured by the next sync too.
		_, err = f.Write([]byte("!"))
		require.NoError(t, err)
		require.Equal(t, want, crash())
		require.NoError(t, sync())
		require.Equal(t, want+"!", crash())
		current, err := readFile(fs, "j")
		require.NoError(t, err)
		require.Equal(t, want+"!", current)
		require.NoError(t, f.Close())
	}
}

// TestMemCreateAfterWriteAt checks that truncating a file whose synced
// bytes are a copy of their own (after a WriteAt over them) and writing it
// again is captured by the next sync whole.
func TestMemCreateAfterWriteAt(t *testing.T) {
	fs := NewMem()
	writeFile(t, fs, "f", "0123456789", true)
	syncDir(t, fs, "")
	f, err := fs.Create("f")
	require.NoError(t, err)
	_, err = f.Write([]byte("abcdefghij"))
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("XY"), 2)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	f2, err := fs.Create("f") // truncate, then rewrite shorter
	require.NoError(t, err)
	_, err = f2.Write([]byte("uvw"))
	require.NoError(t, err)
	require.NoError(t, f2.Sync())
	c := fs.CrashClone(CrashOptions{})
	got, err := readFile(c, "f")
	require.NoError(t, err)
	require.Equal(t, "uvw", got)
	require.NoError(t, f.Close())
	require.NoError(t, f2.Close())
}

// TestMemWriteAtCapacity checks that a WriteAt that grows a file on a full
// MemFS writes what fits and fails with ENOSPC, and that one within the
// file's bytes needs no room.
func TestMemWriteAtCapacity(t *testing.T) {
	fs := NewMem()
	fs.SetCapacity(100)
	f, err := fs.Create("f")
	require.NoError(t, err)
	n, err := f.WriteAt(make([]byte, 80), 0)
	require.NoError(t, err)
	require.Equal(t, 80, n)
	n, err = f.WriteAt(bytes.Repeat([]byte{1}, 30), 75)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, 25, n)
	n, err = f.WriteAt([]byte{2}, 200)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Zero(t, n)
	n, err = f.WriteAt(bytes.Repeat([]byte{3}, 10), 0)
	require.NoError(t, err, "overwriting needs no room")
	require.Equal(t, 10, n)
	size, err := f.Size()
	require.NoError(t, err)
	require.EqualValues(t, 100, size)
	require.NoError(t, f.Close())
}

// TestErrorFSWriteAtAndDatasync checks that WriteAt is an OpWrite (a short
// write writes half) and Datasync an OpSync, so that injecting "writes
// fail" or "syncs fail" covers them.
func TestErrorFSWriteAtAndDatasync(t *testing.T) {
	mem := NewMem()
	efs := NewErrorFS(mem, InjectorFunc(func(op Op) error {
		switch op.Kind {
		case OpWrite:
			return ErrShortWrite
		case OpSync:
			return syscall.EIO
		}
		return nil
	}))
	f, err := efs.Create("f")
	require.NoError(t, err)
	n, err := f.WriteAt([]byte("abcd"), 2)
	require.ErrorIs(t, err, ErrInjected)
	require.ErrorIs(t, err, ErrShortWrite)
	require.Equal(t, 2, n)
	got, err := readFile(mem, "f")
	require.NoError(t, err)
	require.Equal(t, "\x00\x00ab", got)
	err = f.Datasync()
	require.ErrorIs(t, err, ErrInjected)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorContains(t, err, `sync "f"`)
	require.Equal(t, "", fs2str(mem.CrashClone(CrashOptions{})), "the failed Datasync synced nothing")
	require.NoError(t, f.Close())

	nospace := NewErrorFS(NewMem(), InjectorFunc(func(op Op) error {
		if op.Kind == OpWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	f, err = nospace.Create("g")
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 8), 0)
	require.True(t, IsNoSpace(err), "%v", err)
	require.NoError(t, f.Close())
}

// fs2str returns the contents of "f" in fs, or "" if it is missing.
func fs2str(fs *MemFS) string {
	s, _ := readFile(fs, "f")
	return s
}

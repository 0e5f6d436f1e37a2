package vfs

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOSLockNamesHolder: the holder writes its pid into the lock file, and
// a second Lock (flock conflicts between two opens even in one process)
// fails at once naming it.
func TestOSLockNamesHolder(t *testing.T) {
	name := filepath.Join(t.TempDir(), "LOCK")
	// A stale pid from an earlier holder is replaced.
	require.NoError(t, os.WriteFile(name, []byte("999999999\n"), 0o644))
	l, err := Default.Lock(name)
	require.NoError(t, err)
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, string(lockFileContents()), string(data))

	_, err = Default.Lock(name)
	require.ErrorIs(t, err, ErrLockHeld)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK)
	var held *LockHeldError
	require.ErrorAs(t, err, &held)
	require.Equal(t, os.Getpid(), held.PID)
	require.EqualError(t, err, "lock "+name+" is held by process "+itoa(os.Getpid()))

	require.NoError(t, l.Close())
	l, err = Default.Lock(name)
	require.NoError(t, err, "released")
	require.NoError(t, l.Close())
}

func TestParseLockHolder(t *testing.T) {
	for in, want := range map[string]int{"123\n": 123, " 7 ": 7, "": 0, "x": 0, "-5": 0, "0": 0} {
		require.Equal(t, want, parseLockHolder([]byte(in)), "%q", in)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

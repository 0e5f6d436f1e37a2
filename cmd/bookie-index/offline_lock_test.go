package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestOfflineToolsRefuseLiveDirectory: with serve running on the
// directories, db, compact, check, gc, check-ledgers-index and rebuild fail at once naming the process
// that holds them, and change nothing; once it stops they work.
func TestOfflineToolsRefuseLiveDirectory(t *testing.T) {
	s := newServeSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, []string{"--conf", s.confPath}, &stderr, func(string) { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve returned %v\n%s", err, stderr.String())
	}
	holder := fmt.Sprintf("process %d holds %s", os.Getpid(), lsm.LockPath(s.locations[0]))
	for _, sub := range []string{"props", "check", "scan"} {
		code, out, errOut := runCmd("db", sub, s.locations[0])
		require.Equal(t, 1, code, "db %s: %s", sub, out)
		require.Contains(t, errOut, holder, "db %s", sub)
		require.Empty(t, out, "db %s", sub)
	}
	code, _, errOut := runCmd("compact", "--conf", s.confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, holder)
	code, _, errOut = runCmd("check", "--conf", s.confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, fmt.Sprintf("is held by process %d", os.Getpid()))
	code, _, errOut = runCmd("gc", "--conf", s.confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, fmt.Sprintf("process %d holds", os.Getpid()))
	code, _, errOut = runCmd("check-ledgers-index", "--conf", s.confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, fmt.Sprintf("process %d holds", os.Getpid()))
	code, _, errOut = runCmd("rebuild", "--conf", s.confPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, fmt.Sprintf("process %d holds", os.Getpid()))
	matches, err := filepath.Glob(s.locations[0] + ".BACKUP-*")
	require.NoError(t, err)
	require.Empty(t, matches, "a refused rebuild moved nothing")

	cancel()
	require.NoError(t, <-done)
	require.Contains(t, mustRun(t, "db", "props", s.locations[0]), "1000 entries")
}

// TestDBToolNamesOtherProcess: the pid in the message is the holder's, a
// process other than the tool's.
func TestDBToolNamesOtherProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locations")
	buildDB(t, dir, 2, 10)
	pid := holdLock(t, lsm.LockPath(dir))
	code, out, errOut := runCmd("db", "props", dir)
	require.Equal(t, 1, code, out)
	require.Contains(t, errOut, fmt.Sprintf("process %d holds %s", pid, lsm.LockPath(dir)))
	require.Contains(t, errOut, "stop it first")
}

// holdLock starts this test binary again as a process that takes the lock
// at path and holds it until the test ends; it returns its pid.
func holdLock(t *testing.T, path string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldLockHelper$")
	cmd.Env = append(os.Environ(), "BOOKIE_INDEX_TEST_HOLD_LOCK="+path)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	return cmd.Process.Pid
}

// TestHoldLockHelper is the process holdLock starts; run directly it does
// nothing.
func TestHoldLockHelper(t *testing.T) {
	path := os.Getenv("BOOKIE_INDEX_TEST_HOLD_LOCK")
	if path == "" {
		return
	}
	l, err := vfs.Default.Lock(path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
	_ = l.Close()
	os.Exit(0)
}

// copyKilledDir copies the files of a database directory a live process
// holds, as a SIGKILL would leave them (without the lock), and returns the
// copy.
func copyKilledDir(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	require.NoError(t, os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
	return dst
}

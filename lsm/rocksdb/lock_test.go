package rocksdb

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// lockHelperEnv names the LOCK file the helper process locks as RocksDB
// does (fcntl F_SETLK) before it prints "locked" and waits for the end of
// its standard input.
const lockHelperEnv = "ROCKSDB_LOCK_HELPER_FILE"

// TestLockHelperProcess is the helper process of TestLockDir (it does
// nothing in a normal run).
func TestLockHelperProcess(t *testing.T) {
	path := os.Getenv(lockHelperEnv)
	if path == "" {
		t.Skip("the helper process of TestLockDir")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(2)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		os.Stdout.WriteString("refused\n")
		os.Exit(0)
	}
	os.Stdout.WriteString("locked\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// lockAsRocksDB starts a process that locks path as RocksDB does; it
// returns what the process printed ("locked" or "refused") and a function
// that ends it.
func lockAsRocksDB(t *testing.T, path string) (string, int, func()) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	stop := func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	return line, cmd.Process.Pid, stop
}

// TestLockDir: LockDir fails while another process holds RocksDB's lock on
// the database (naming it), takes it once the process is gone, keeps
// others from taking it, and never writes the LOCK file.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, LockFileName)
	require.NoError(t, os.WriteFile(lockPath, []byte("RocksDB's bytes"), 0o644))

	got, pid, stop := lockAsRocksDB(t, lockPath)
	require.Equal(t, "locked\n", got)
	_, err := LockDir(vfs.Default, dir)
	require.ErrorIs(t, err, vfs.ErrLockHeld)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK)
	var held *vfs.LockHeldError
	require.ErrorAs(t, err, &held)
	require.Equal(t, pid, held.PID)
	require.Equal(t, lockPath, held.Path)
	// A BSD flock, which the repository's own databases take, does not
	// see RocksDB's lock: why LockDir exists.
	fl, err := vfs.Default.Lock(lockPath)
	require.NoError(t, err, "flock and fcntl locks are independent")
	require.NoError(t, fl.Close())
	require.NoError(t, os.WriteFile(lockPath, []byte("RocksDB's bytes"), 0o644))
	stop()

	l, err := LockDir(vfs.Default, dir)
	require.NoError(t, err)
	got, _, _ = lockAsRocksDB(t, lockPath)
	require.Equal(t, "refused\n", got, "RocksDB cannot open the database while LockDir holds it")
	require.NoError(t, l.Close())
	got, _, _ = lockAsRocksDB(t, lockPath)
	require.Equal(t, "locked\n", got, "released by Close")

	b, err := os.ReadFile(lockPath)
	require.NoError(t, err)
	require.Equal(t, "RocksDB's bytes", string(b), "LockDir never writes LOCK")

	// A database without LOCK gets an empty one, as RocksDB would create.
	other := t.TempDir()
	l, err = LockDir(vfs.Default, other)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	b, err = os.ReadFile(filepath.Join(other, LockFileName))
	require.NoError(t, err)
	require.Empty(t, b)

	_, err = LockDir(vfs.Default, filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// Another FS: its own Lock.
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/db", 0o755))
	l, err = LockDir(mem, "/db")
	require.NoError(t, err)
	_, err = LockDir(mem, "/db")
	require.ErrorIs(t, err, vfs.ErrLockHeld)
	require.NoError(t, l.Close())
}

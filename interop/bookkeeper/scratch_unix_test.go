//go:build unix

package bookkeeper

import (
	"os"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
)

// scratchDir returns a directory for BookKeeper's databases during a
// trace: in /dev/shm when it has room (every upstream write is a synced
// RocksDB write, and a memory file system makes the fsyncs free), else
// the test's temporary directory.
func scratchDir(t *testing.T) string {
	if u, err := vfs.Default.DiskUsage("/dev/shm"); err == nil && u.Usable >= 512<<20 {
		if dir, err := os.MkdirTemp("/dev/shm", "bookie-index-interop-"); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

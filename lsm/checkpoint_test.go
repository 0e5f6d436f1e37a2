package lsm

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func checkpointKey(i uint64) []byte { return binary.BigEndian.AppendUint64([]byte("k"), i) }

// checkpointPrefix opens the checkpoint at dir and returns n such that it
// holds exactly keys 0..n-1, each with its value; it fails the test if the
// keys are not a prefix.
func checkpointPrefix(t *testing.T, fs FS, dir string) uint64 {
	t.Helper()
	c, err := Open(dir, smallOptions(fs))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	require.NoError(t, c.Check())
	it, err := c.NewIter(nil)
	require.NoError(t, err)
	var n uint64
	for ok := it.First(); ok; ok = it.Next() {
		require.Equal(t, checkpointKey(n), it.Key(), "%s: key %d of the checkpoint: a hole, not a prefix", dir, n)
		require.Equal(t, fmt.Sprintf("v%d", n), string(it.Value()))
		n++
	}
	require.NoError(t, it.Close())
	return n
}

// TestCheckpointDuringWrites: checkpoints taken while a writer writes keys
// 0, 1, 2, ... (flushes and compactions running) each open, pass Check and
// hold a prefix of the keys at least as long as what was acknowledged
// before the checkpoint began. They stay readable after the source
// compacts their tables away and is removed.
func TestCheckpointDuringWrites(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)

	var acked atomic.Uint64 // keys 0..acked-1 are acknowledged
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		var b Batch
		for i := uint64(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			b.Reset()
			b.Set(checkpointKey(i), []byte(fmt.Sprintf("v%d", i)))
			if err := d.Apply(&b, NoSync); err != nil {
				writeErr = err
				return
			}
			acked.Store(i + 1)
		}
	}()
	const checkpoints = 6
	before := make([]uint64, checkpoints)
	for i := range checkpoints {
		for acked.Load() < uint64(i+1)*2000 {
			runtime.Gosched() // let the writer get ahead (and the memtables flush)
		}
		before[i] = acked.Load()
		info, err := d.Checkpoint(fmt.Sprintf("cp%d", i))
		require.NoError(t, err)
		require.Greater(t, info.Tables, 0)
		require.Equal(t, info.Tables, info.Linked, "on one file system every table is linked")
	}
	close(stop)
	wg.Wait()
	require.NoError(t, writeErr)

	// The source compacts everything: the checkpoints' tables are no
	// longer the source's, and the source goes.
	require.NoError(t, d.Compact(context.Background(), nil, nil))
	require.NoError(t, d.Close())
	require.NoError(t, fs.RemoveAll("db"))
	var last uint64
	for i := range checkpoints {
		n := checkpointPrefix(t, fs, fmt.Sprintf("cp%d", i))
		require.GreaterOrEqual(t, n, before[i], "checkpoint %d lost acknowledged writes", i)
		require.GreaterOrEqual(t, n, last, "checkpoints go forward")
		last = n
	}
}

// TestCheckpointWritable: a checkpoint is a database of its own: it takes
// writes, and reopens with them.
func TestCheckpointWritable(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	var b Batch
	for i := uint64(0); i < 100; i++ {
		b.Reset()
		b.Set(checkpointKey(i), []byte(fmt.Sprintf("v%d", i)))
		require.NoError(t, d.Apply(&b, Sync))
	}
	info, err := d.Checkpoint("cp")
	require.NoError(t, err)
	require.Equal(t, uint64(100), info.LastSeqNum)
	require.NoError(t, d.Close())

	c, err := Open("cp", smallOptions(fs))
	require.NoError(t, err)
	for i := uint64(100); i < 150; i++ {
		b.Reset()
		b.Set(checkpointKey(i), []byte(fmt.Sprintf("v%d", i)))
		require.NoError(t, c.Apply(&b, Sync))
	}
	require.NoError(t, c.Close())
	require.Equal(t, uint64(150), checkpointPrefix(t, fs, "cp"))
	require.Equal(t, uint64(100), checkpointPrefix(t, fs, "db"), "the source is unchanged")
}

// TestCheckpointReadOnly: a read-only DB whose WAL holds writes never
// flushed checkpoints them by copying the WAL.
func TestCheckpointReadOnly(t *testing.T) {
	fs := NewMemFS()
	opts := smallOptions(fs)
	opts.WriteBufferSize = 8 << 20 // nothing flushes
	d, err := Open("db", opts)
	require.NoError(t, err)
	var b Batch
	for i := uint64(0); i < 300; i++ {
		b.Reset()
		b.Set(checkpointKey(i), []byte(fmt.Sprintf("v%d", i)))
		require.NoError(t, d.Apply(&b, Sync))
	}
	require.NoError(t, d.Close())

	ro := smallOptions(fs)
	ro.ReadOnly = true
	r, err := Open("db", ro)
	require.NoError(t, err)
	info, err := r.Checkpoint("cp")
	require.NoError(t, err)
	require.Equal(t, 1, info.WALs)
	require.NoError(t, r.Close())
	require.Equal(t, uint64(300), checkpointPrefix(t, fs, "cp"))
}

// TestCheckpointRefusesExistingDir: a checkpoint goes into a new
// directory, never into one that exists (or the staging directory of an
// interrupted one), and not from a closed DB.
func TestCheckpointRefusesExistingDir(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	_, err = d.Checkpoint("db")
	require.ErrorContains(t, err, "exists (a checkpoint goes into a new directory)")
	_, err = d.Checkpoint("cp")
	require.NoError(t, err)
	_, err = d.Checkpoint("cp")
	require.ErrorContains(t, err, "exists (a checkpoint goes into a new directory)")
	require.NoError(t, fs.MkdirAll("cp3.tmp", 0o755))
	_, err = d.Checkpoint("cp3")
	require.ErrorContains(t, err, "checkpoint directory cp3.tmp exists")
	require.NoError(t, d.Close())
	_, err = d.Checkpoint("cp2")
	require.True(t, errors.Is(err, ErrClosed), "%v", err)
}

// TestCheckpointCrash: a crash right after Checkpoint returns loses
// nothing of the checkpoint.
func TestCheckpointCrash(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("db", smallOptions(mem))
	require.NoError(t, err)
	var b Batch
	for i := uint64(0); i < 5000; i++ {
		b.Reset()
		b.Set(checkpointKey(i), []byte(fmt.Sprintf("v%d", i)))
		require.NoError(t, d.Apply(&b, NoSync))
	}
	_, err = d.Checkpoint("cp")
	require.NoError(t, err)
	crashed := mem.CrashClone(vfs.CrashOptions{})
	require.NoError(t, d.Close())
	require.Equal(t, uint64(5000), checkpointPrefix(t, crashed, "cp"))
}

// TestCheckpointFaults: when hard links fail the tables are copied; every
// other failure of a file operation of the checkpoint fails it, leaves
// neither the checkpoint nor its staging directory, and leaves the source
// serving. Each operation of a checkpoint is failed in turn.
func TestCheckpointFaults(t *testing.T) {
	mem := vfs.NewMem()
	var fail atomic.Int64 // fail the n-th operation in a checkpoint directory; -1: none
	var ops atomic.Int64
	fail.Store(-1)
	linkFails := atomic.Bool{}
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if !strings.Contains(op.Path+op.NewPath, "cp") {
			return nil
		}
		if op.Kind == vfs.OpLink && linkFails.Load() {
			return vfs.ErrInjected
		}
		if ops.Add(1)-1 == fail.Load() {
			return vfs.ErrInjected
		}
		return nil
	}))
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	var b Batch
	for i := uint64(0); i < 3000; i++ {
		b.Reset()
		b.Set(checkpointKey(i), []byte(fmt.Sprintf("v%d", i)))
		require.NoError(t, d.Apply(&b, NoSync))
	}

	linkFails.Store(true)
	info, err := d.Checkpoint("cp-copied")
	require.NoError(t, err)
	require.Greater(t, info.Tables, 0)
	require.Zero(t, info.Linked, "every link failed: copies")
	linkFails.Store(false)
	require.Equal(t, uint64(3000), checkpointPrefix(t, mem, "cp-copied"))

	ops.Store(0)
	_, err = d.Checkpoint("cp-count")
	require.NoError(t, err)
	total := ops.Load()
	require.Greater(t, total, int64(5))
	for n := int64(0); n < total; n++ {
		ops.Store(0)
		fail.Store(n)
		dir := fmt.Sprintf("cp-%d", n)
		_, err := d.Checkpoint(dir)
		fail.Store(-1)
		if err == nil {
			// The failed operation was one whose failure is harmless (a
			// failed link is copied instead): the checkpoint is whole.
			require.Equal(t, uint64(3000), checkpointPrefix(t, mem, dir), "operation %d", n)
			continue
		}
		require.True(t, errors.Is(err, vfs.ErrInjected), "operation %d: %v", n, err)
		for _, p := range []string{dir, dir + ".tmp"} {
			_, serr := mem.Stat(p)
			if p == dir && serr == nil {
				// Only the final directory sync can fail after the
				// rename: the checkpoint is there and whole.
				require.Equal(t, uint64(3000), checkpointPrefix(t, mem, dir), "operation %d", n)
				continue
			}
			require.Error(t, serr, "operation %d left %s", n, p)
		}
	}
	_, err = d.Get(checkpointKey(42))
	require.NoError(t, err, "the source still serves")
}

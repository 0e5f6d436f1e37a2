package lsm

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// crashBatchKeys is how many keys each crash-test batch writes.
const crashBatchKeys = 20

func crashKey(batch, i int) []byte {
	return []byte(fmt.Sprintf("b%06d-%02d", batch, i))
}

// TestCrashRecovery crashes the in-memory file system (dropping or
// tearing everything not synced) at random moments while several
// goroutines write, flushes and compactions run; then it reopens the
// crashed copy and checks that every batch acknowledged as synced before
// the crash is there in full, and that no batch is partly visible.
func TestCrashRecovery(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	fs := vfs.NewMem()
	opts := func(fs FS) *Options {
		o := smallOptions(fs)
		o.WriteBufferSize = 64 << 10
		return o
	}
	d, err := Open("db", opts(fs))
	require.NoError(t, err)
	var nextBatch atomic.Int64
	var ackedMu sync.Mutex
	acked := map[int]bool{} // synced batches acknowledged
	written := 0            // batches started so far (upper bound on ids)

	for round := 0; round < 12; round++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				r := rand.New(rand.NewSource(seed))
				for {
					select {
					case <-stop:
						return
					default:
					}
					id := int(nextBatch.Add(1))
					var b Batch
					for i := 0; i < crashBatchKeys; i++ {
						v := make([]byte, 8+r.Intn(200))
						binary.BigEndian.PutUint64(v, uint64(id))
						b.Set(crashKey(id, i), v)
					}
					sync := r.Intn(3) > 0
					if err := d.Apply(&b, &WriteOptions{Sync: sync}); err != nil {
						return // the DB is closing
					}
					if sync {
						ackedMu.Lock()
						acked[id] = true
						ackedMu.Unlock()
					}
				}
			}(rng.Int63())
		}
		time.Sleep(time.Duration(5+rng.Intn(30)) * time.Millisecond)
		// Everything acknowledged so far must survive the crash.
		ackedMu.Lock()
		mustSurvive := make(map[int]bool, len(acked))
		for id := range acked {
			mustSurvive[id] = true
		}
		ackedMu.Unlock()
		crashed := fs.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewSource(rng.Int63())), KeepUnsyncedTail: rng.Intn(2) == 0})
		close(stop)
		wg.Wait()
		require.NoError(t, d.Close())
		written = int(nextBatch.Load())

		d, err = Open("db", opts(crashed))
		require.NoError(t, err, "round %d: recovery", round)
		checkCrashState(t, d, written, mustSurvive, round)
		fs = crashed
		ackedMu.Lock()
		acked = mustSurvive // batches acked after the crash point may be gone
		ackedMu.Unlock()
	}
	require.NoError(t, d.Close())
}

func checkCrashState(t *testing.T, d *DB, written int, mustSurvive map[int]bool, round int) {
	present := 0
	for id := 1; id <= written; id++ {
		n := 0
		for i := 0; i < crashBatchKeys; i++ {
			v, err := d.Get(crashKey(id, i))
			if errors.Is(err, ErrNotFound) {
				continue
			}
			require.NoError(t, err)
			require.Equal(t, uint64(id), binary.BigEndian.Uint64(v))
			n++
		}
		require.True(t, n == 0 || n == crashBatchKeys, "round %d: batch %d partly visible (%d of %d keys)", round, id, n, crashBatchKeys)
		if mustSurvive[id] {
			require.Equal(t, crashBatchKeys, n, "round %d: synced batch %d lost", round, id)
		}
		if n > 0 {
			present++
		}
	}
	t.Logf("round %d: %d of %d batches present, %d had to be", round, present, written, len(mustSurvive))
}

// TestWALFailureIsSticky injects a WAL write failure: the failing write and
// every later one fail, the failed batch is not visible, earlier data stays
// readable, and after reopening nothing acknowledged is lost.
func TestWALFailureIsSticky(t *testing.T) {
	mem := vfs.NewMem()
	toggle := vfs.NewToggle(vfs.InjectorFunc(func(op vfs.Op) error {
		if (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync) && len(op.Path) > 4 && op.Path[len(op.Path)-4:] == ".log" {
			return errors.Newf("injected failure of %s", op)
		}
		return nil
	}))
	fs := vfs.NewErrorFS(mem, toggle)
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	require.NoError(t, d.Apply(&b, Sync))

	toggle.On()
	b.Reset()
	b.Set([]byte("b"), []byte("2"))
	err = d.Apply(&b, Sync)
	require.Error(t, err)
	require.True(t, errors.Is(err, vfs.ErrInjected), "%v", err)
	toggle.Off()
	b.Reset()
	b.Set([]byte("c"), []byte("3"))
	require.Error(t, d.Apply(&b, Sync), "writes stay failed")

	v, err := d.Get([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	_, err = d.Get([]byte("b"))
	require.True(t, errors.Is(err, ErrNotFound), "the failed batch is not visible")
	_ = d.Close()

	d, err = Open("db", smallOptions(mem))
	require.NoError(t, err)
	v, err = d.Get([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	require.NoError(t, d.Close())
}

// TestFlushFailureIsSticky fails the table write of a flush.
func TestFlushFailureIsSticky(t *testing.T) {
	mem := vfs.NewMem()
	toggle := vfs.NewToggle(vfs.OnOp(vfs.OpCreate, ".sst"))
	fs := vfs.NewErrorFS(mem, toggle)
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	require.NoError(t, d.Apply(&b, Sync))
	toggle.On()
	err = d.Flush()
	require.True(t, errors.Is(err, vfs.ErrInjected), "%v", err)
	b.Reset()
	b.Set([]byte("b"), []byte("2"))
	require.Error(t, d.Apply(&b, Sync))
	v, err := d.Get([]byte("a"))
	require.NoError(t, err, "reads keep working")
	require.Equal(t, "1", string(v))
	toggle.Off()
	_ = d.Close()
	d, err = Open("db", smallOptions(mem))
	require.NoError(t, err)
	v, err = d.Get([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	require.NoError(t, d.Close())
}

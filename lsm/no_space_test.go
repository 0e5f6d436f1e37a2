package lsm

import (
	"context"
	stderrors "errors"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// diskFull is an injector for out-of-space sweeps: while armed, it counts
// the space-consuming operations (create, write, sync, rename, link) whose
// path contains one of pathContains (any path if it is empty), and fails
// number failAt with ENOSPC; from
// then on every space-consuming operation fails, whatever its path, until
// free is called (space returned).
type diskFull struct {
	pathContains []string
	failAt       int64
	armed, full  atomic.Bool
	ops          atomic.Int64
	failed       atomic.Int64 // operations failed, the first included
	// failedFile is the file of the first failed write or sync, if it was
	// a file's; rewrites counts writes and syncs of that file since, which
	// must stay 0 (a failed file is never written again: after a failed
	// fsync, a retried one may report lost data durable).
	failedFile atomic.Pointer[string]
	rewrites   atomic.Int64
}

func consumesSpace(k vfs.OpKind) bool {
	switch k {
	case vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpLink:
		return true
	}
	return false
}

func (f *diskFull) MaybeError(op vfs.Op) error {
	if !consumesSpace(op.Kind) {
		return nil
	}
	if p := f.failedFile.Load(); p != nil && op.Path == *p && (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync) {
		f.rewrites.Add(1)
	}
	if f.full.Load() {
		f.failed.Add(1)
		return syscall.ENOSPC
	}
	if !f.armed.Load() || !(f.counts(op.Path) || op.NewPath != "" && f.counts(op.NewPath)) {
		return nil
	}
	if f.ops.Add(1)-1 == f.failAt {
		if (op.Kind == vfs.OpWrite || op.Kind == vfs.OpSync) && strings.Contains(op.Path, ".") {
			path := op.Path // a file, not the directory
			f.failedFile.Store(&path)
		}
		f.full.Store(true)
		f.failed.Add(1)
		return syscall.ENOSPC
	}
	return nil
}

// counts reports whether operations on path are counted.
func (f *diskFull) counts(path string) bool {
	for _, p := range f.pathContains {
		if strings.Contains(path, p) {
			return true
		}
	}
	return len(f.pathContains) == 0
}

// free returns the space and stops counting.
func (f *diskFull) free() {
	f.armed.Store(false)
	f.full.Store(false)
}

// noSpaceModel is the acknowledged state of a sweep's DB, and the values
// of failed writes (which a crash may or may not keep).
type noSpaceModel struct {
	rng    *rand.Rand
	acked  map[string]string
	failed map[string][]string
	next   int
}

func newNoSpaceModel(seed int64) *noSpaceModel {
	return &noSpaceModel{rng: rand.New(rand.NewSource(seed)), acked: map[string]string{}, failed: map[string][]string{}}
}

// apply writes a synced batch of n keys and records it if acknowledged.
func (m *noSpaceModel) apply(d *DB, n int) error {
	var b Batch
	kv := map[string]string{}
	for range n {
		// Half overwrite an earlier key, so flushes and compactions drop
		// shadowed versions.
		k := fmt.Sprintf("key%06d", m.next)
		if m.next > 0 && m.rng.Intn(2) == 0 {
			k = fmt.Sprintf("key%06d", m.rng.Intn(m.next))
		} else {
			m.next++
		}
		v := fmt.Sprintf("%s-%d-%s", k, m.rng.Int63(), strings.Repeat("v", m.rng.Intn(200)))
		b.Set([]byte(k), []byte(v))
		kv[k] = v
	}
	if err := d.Apply(&b, Sync); err != nil {
		for k, v := range kv {
			m.failed[k] = append(m.failed[k], v)
		}
		return err
	}
	for k, v := range kv {
		m.acked[k] = v
	}
	return nil
}

// applySorted writes a synced batch of n new keys in increasing order,
// after every key written before, and records it if acknowledged.
func (m *noSpaceModel) applySorted(d *DB, n int) error {
	var b Batch
	kv := map[string]string{}
	for range n {
		k := fmt.Sprintf("key%06d", m.next)
		m.next++
		v := fmt.Sprintf("%s-%d", k, m.rng.Int63())
		b.Set([]byte(k), []byte(v))
		kv[k] = v
	}
	if err := d.Apply(&b, Sync); err != nil {
		for k, v := range kv {
			m.failed[k] = append(m.failed[k], v)
		}
		return err
	}
	for k, v := range kv {
		m.acked[k] = v
	}
	return nil
}

// check reads back every acknowledged key, and only those.
func (m *noSpaceModel) check(t *testing.T, d *DB, what string) {
	t.Helper()
	for k, v := range m.acked {
		got, err := d.Get([]byte(k))
		require.NoError(t, err, "%s: key %s", what, k)
		require.Equal(t, v, string(got), "%s: key %s", what, k)
	}
	it, err := d.NewIter(nil)
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		_, acked := m.acked[string(it.Key())]
		require.True(t, acked, "%s: key %s was never acknowledged", what, it.Key())
		n++
	}
	require.NoError(t, it.Close())
	require.Equal(t, len(m.acked), n, what)
}

// checkAfterCrash reads back every acknowledged key after a crash: its
// value is the acknowledged one or that of a later write that failed (a
// failed write may survive a crash, all or nothing).
func (m *noSpaceModel) checkAfterCrash(t *testing.T, d *DB, what string) {
	t.Helper()
	for k, v := range m.acked {
		got, err := d.Get([]byte(k))
		require.NoError(t, err, "%s: key %s", what, k)
		if string(got) != v {
			require.Contains(t, m.failed[k], string(got), "%s: key %s", what, k)
		}
	}
}

// noSpaceOptions retry quickly, so that a sweep of hundreds of failures
// stays fast.
func noSpaceOptions(fs FS) *Options {
	o := noCompactions(smallOptions(fs))
	o.NoSpaceRetryInterval = time.Millisecond
	o.NoSpaceRetryMaxInterval = 4 * time.Millisecond
	return o
}

// requireNoSpace checks that err says the DB is out of space.
func requireNoSpace(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	require.True(t, errors.Is(err, ErrNoSpace), "%s: %v", what, err)
	require.True(t, stderrors.Is(err, ErrNoSpace), "%s: stdlib errors.Is: %v", what, err)
	require.True(t, errors.Is(err, syscall.ENOSPC), "%s: %v", what, err)
}

// requireNoStrayTables fails if the directory holds table files no level does: the
// retries must not leave tables behind on a full disk.
func requireNoStrayTables(t *testing.T, d *DB, fs FS, what string) {
	t.Helper()
	live := 0
	for _, l := range d.Metrics().Levels {
		live += l.Tables
	}
	require.Len(t, filesOf(t, fs, ".sst"), live, "%s: stray tables", what)
}

// noSpaceSweep runs phase with ENOSPC injected at each space-consuming
// operation on a path containing one of pathContains (any, if none) in
// turn, the disk staying
// full until the DB has failed and retried a few times. Then space
// returns: the DB must take writes again without a restart, hold every
// acknowledged write and nothing else, leave no stray table, close
// cleanly, and reopen (after a crash of everything unsynced) with the same
// contents. A crash while still out of space must lose nothing
// acknowledged either.
func noSpaceSweep(t *testing.T, pathContains []string, setup func(d *DB, m *noSpaceModel), phase func(d *DB, m *noSpaceModel) error) {
	// Every operation in turn; a sample under -short or the race
	// detector, which keeps CI fast.
	stride := int64(1)
	switch {
	case raceEnabled:
		stride = 10
	case testing.Short():
		stride = 5
	}
	failures := 0
	for failAt := int64(0); ; failAt += stride {
		what := fmt.Sprintf("ENOSPC at operation %d", failAt)
		mem := vfs.NewMem()
		inj := &diskFull{pathContains: pathContains, failAt: failAt}
		d, err := Open("db", noSpaceOptions(vfs.NewErrorFS(mem, inj)))
		require.NoError(t, err)
		m := newNoSpaceModel(failAt)
		setup(d, m)

		inj.armed.Store(true)
		err = phase(d, m)
		inj.armed.Store(false)
		if !inj.full.Load() {
			require.NoError(t, err, "without a failure")
			require.NoError(t, d.Close())
			require.Greater(t, failures*int(stride), 2, "the phase never failed")
			t.Logf("%d operations failed in turn", failures)
			return
		}
		failures++
		if err != nil {
			requireNoSpace(t, err, what)
		}
		if bg := d.BackgroundError(); bg != nil {
			requireNoSpace(t, bg, what+": BackgroundError")
			// Writes fail fast, reads go on, and retries fail meanwhile.
			requireNoSpace(t, m.apply(d, 1), what+": write while out of space")
			m.check(t, d, what+": while out of space")
			before := inj.failed.Load()
			waitUntil(t, "a retry", func() bool { return inj.failed.Load() > before })
		}
		// A crash now, torn unsynced tails and all, loses nothing
		// acknowledged.
		crashed := mem.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewSource(failAt)), KeepUnsyncedTail: true})
		cd, err := Open("db", noSpaceOptions(crashed))
		require.NoError(t, err, "%s: open after a crash while out of space", what)
		m.checkAfterCrash(t, cd, what+": crash while out of space")
		require.NoError(t, cd.Close())

		inj.free()
		waitUntil(t, "recovery", func() bool { return d.BackgroundError() == nil })
		require.False(t, d.Metrics().OutOfSpace)

		require.NoError(t, m.apply(d, 50), "%s: write after recovery", what)
		require.NoError(t, d.Flush(), what)
		require.NoError(t, d.Compact(context.Background(), nil, nil), what)
		m.check(t, d, what+": after recovery")
		requireNoStrayTables(t, d, mem, what)
		// Nor WALs or manifests: the failed ones are obsolete now.
		waitUntil(t, what+": one WAL and one manifest left", func() bool {
			return len(filesOf(t, mem, ".log")) == 1 && len(filesOf(t, mem, "MANIFEST-")) == 1 && len(filesOf(t, mem, ".synced")) == 2
		})
		if p := inj.failedFile.Load(); p != nil {
			require.Zero(t, inj.rewrites.Load(), "%s: %s was written again after its write or sync failed", what, *p)
		}
		require.NoError(t, d.Close(), what)

		d, err = Open("db", noSpaceOptions(mem.CrashClone(vfs.CrashOptions{})))
		require.NoError(t, err, what)
		m.check(t, d, what+": reopened")
		require.NoError(t, d.Close())
	}
}

// TestNoSpaceFlush fails each operation of a flush (table, directory sync,
// manifest) with ENOSPC.
func TestNoSpaceFlush(t *testing.T) {
	noSpaceSweep(t, nil,
		func(d *DB, m *noSpaceModel) { require.NoError(t, m.apply(d, 200)) },
		func(d *DB, m *noSpaceModel) error { return d.Flush() })
}

// TestNoSpaceCompaction fails each operation of a compaction (tables,
// directory sync, manifest) with ENOSPC.
func TestNoSpaceCompaction(t *testing.T) {
	noSpaceSweep(t, nil,
		func(d *DB, m *noSpaceModel) {
			for range 3 {
				require.NoError(t, m.apply(d, 60))
				require.NoError(t, d.Flush())
			}
		},
		func(d *DB, m *noSpaceModel) error { return d.Compact(context.Background(), nil, nil) })
}

// TestNoSpaceManifest fails each operation on the manifest, CURRENT and
// the synced-length files during flushes (after a failed edit, the next
// one rotates to a new manifest).
func TestNoSpaceManifest(t *testing.T) {
	noSpaceSweep(t, []string{"MANIFEST", "CURRENT", ".synced"},
		func(d *DB, m *noSpaceModel) {},
		func(d *DB, m *noSpaceModel) error {
			for range 4 {
				if err := m.apply(d, 20); err != nil {
					return err
				}
				if err := d.Flush(); err != nil {
					return err
				}
			}
			return nil
		})
}

// TestNoSpaceWAL fails each operation on WAL files and their synced-length
// files (writes, syncs, marks, and the creation of the next WAL at
// memtable switches) with ENOSPC while synced batches are written.
func TestNoSpaceWAL(t *testing.T) {
	noSpaceSweep(t, []string{".log", ".synced"},
		func(d *DB, m *noSpaceModel) {},
		func(d *DB, m *noSpaceModel) error {
			// About three memtables' worth: WAL switches happen.
			for range 60 {
				if err := m.apply(d, 20); err != nil {
					return err
				}
			}
			return nil
		})
}

// TestNoSpaceWALSortedBatches is TestNoSpaceWAL with checkpoint-like
// batches: each of overlapMinOps or more sorted keys after every earlier
// one, whose memtable run is built while its WAL record is written and
// synced (logAndApply). A run whose WAL write or sync failed must never
// become visible, before or after recovery, nor reach a table.
func TestNoSpaceWALSortedBatches(t *testing.T) {
	noSpaceSweep(t, []string{".log", ".synced"},
		func(d *DB, m *noSpaceModel) {},
		func(d *DB, m *noSpaceModel) error {
			for range 6 {
				if err := m.applySorted(d, overlapMinOps+100); err != nil {
					return err
				}
			}
			return nil
		})
}

// TestNoSpaceBackgroundCompaction fills the disk for background
// compactions only: they pause with backoff (no tight loop), writes go on,
// the state is reported, and compactions resume once space returns.
func TestNoSpaceBackgroundCompaction(t *testing.T) {
	mem := vfs.NewMem()
	var creates atomic.Int64
	var full atomic.Bool
	// Only compaction outputs fail: flushes (which happen while the
	// memtable switches below) go on.
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if full.Load() && op.Kind == vfs.OpCreate && strings.HasSuffix(op.Path, ".sst") && compactingNow() {
			creates.Add(1)
			return syscall.ENOSPC
		}
		return nil
	}))
	o := smallOptions(fs) // L0 trigger 2
	o.NoSpaceRetryInterval = 20 * time.Millisecond
	o.NoSpaceRetryMaxInterval = 80 * time.Millisecond
	d, err := Open("db", o)
	require.NoError(t, err)
	m := newNoSpaceModel(1)
	full.Store(true)
	for range 3 {
		require.NoError(t, m.apply(d, 200))
		require.NoError(t, d.Flush())
	}
	waitUntil(t, "a failed compaction", func() bool { return d.Metrics().CompactionsOutOfSpace })
	requireNoSpace(t, d.BackgroundError(), "BackgroundError")
	require.NoError(t, m.apply(d, 10), "writes go on while only compactions fail")
	time.Sleep(300 * time.Millisecond)
	// 20, 40, 80, 80, ... ms: about 5 attempts in 300 ms, not thousands.
	require.Less(t, creates.Load(), int64(12), "compaction retries back off")
	require.GreaterOrEqual(t, d.Metrics().Levels[0].Tables, 2)

	full.Store(false)
	waitUntil(t, "compactions to resume", func() bool {
		met := d.Metrics()
		return !met.CompactionsOutOfSpace && met.Levels[0].Tables < 2
	})
	require.NoError(t, d.WaitForCompactions(context.Background()))
	require.NoError(t, d.BackgroundError())
	// Tables a concurrent Metrics call kept referenced are deleted at the
	// next flush or compaction.
	require.NoError(t, m.apply(d, 1))
	require.NoError(t, d.Flush())
	require.NoError(t, d.WaitForCompactions(context.Background()))
	requireNoStrayTables(t, d, mem, "after compactions resumed")
	m.check(t, d, "after compactions resumed")
	require.NoError(t, d.Close())
}

// compactingNow reports whether the calling goroutine runs a compaction:
// a stack check, so that a test can fail compaction outputs only (their
// names look like a flush's).
func compactingNow() bool {
	buf := make([]byte, 16<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), "writeCompactionOutputs")
}

// TestNoSpaceCloseWhileFull closes a DB that is still out of space: Close
// returns the failure promptly, and a reopen once space is back has every
// acknowledged write.
func TestNoSpaceCloseWhileFull(t *testing.T) {
	mem := vfs.NewMem()
	inj := &diskFull{pathContains: []string{".log"}, failAt: 3}
	o := noSpaceOptions(vfs.NewErrorFS(mem, inj))
	d, err := Open("db", o)
	require.NoError(t, err)
	m := newNoSpaceModel(2)
	inj.armed.Store(true)
	for range 10 {
		_ = m.apply(d, 5)
	}
	require.True(t, inj.full.Load())
	requireNoSpace(t, d.BackgroundError(), "BackgroundError")
	done := make(chan error)
	go func() { done <- d.Close() }()
	select {
	case err := <-done:
		requireNoSpace(t, err, "Close")
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs while out of space")
	}
	d, err = Open("db", noSpaceOptions(mem.CrashClone(vfs.CrashOptions{})))
	require.NoError(t, err)
	m.check(t, d, "reopened")
	require.NoError(t, d.Close())
}

package lsm

// Tests written during the review of the engine's core. Each one reproduced
// a bug the review found, failed until it was fixed, and is named after the
// invariant it now guards. Some drive internal steps (an Apply stopped
// between its phases, a compaction picked by hand, a file operation held
// back) to reproduce deterministically an interleaving that concurrency or
// timing produces in production; they wait for the DB to reach a point
// through hooks and state, never for a fixed time.

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/wal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// inFlightApply is an Apply stopped between its phases, as a committer
// that the scheduler deschedules would leave it: beginApply takes the
// sequence numbers and enqueues the batch on the WAL (the part under
// commitMu); apply inserts it into the memtable; publish makes it visible.
type inFlightApply struct {
	d     *DB
	b     *Batch
	mem   *memTable
	w     *wal.Writer
	n     uint64
	first base.SeqNum
}

func beginApply(t *testing.T, d *DB, b *Batch) *inFlightApply {
	t.Helper()
	d.commitMu.Lock()
	defer d.commitMu.Unlock()
	mem, w, err := d.makeRoomForWrite(batchMemSize(&b.b))
	require.NoError(t, err)
	a := &inFlightApply{d: d, b: b, mem: mem, w: w, first: d.mu.nextSeq}
	d.mu.nextSeq += base.SeqNum(b.Count())
	b.b.SetSeqNum(a.first)
	a.n, err = w.Enqueue(b.b.Repr())
	require.NoError(t, err)
	mem.reserve()
	return a
}

func (a *inFlightApply) apply(t *testing.T) {
	t.Helper()
	require.NoError(t, a.w.Wait(a.n, true))
	require.NoError(t, a.d.applyToMemTable(a.mem, &a.b.b))
	a.mem.release()
}

func (a *inFlightApply) publish(t *testing.T) {
	t.Helper()
	require.NoError(t, a.d.publish(a.first, a.first+base.SeqNum(a.b.Count())-1))
}

func reviewSet(t *testing.T, d *DB, key, value string) {
	t.Helper()
	var b Batch
	b.Set([]byte(key), []byte(value))
	require.NoError(t, d.Apply(&b, NoSync))
}

func reviewGet(t *testing.T, d *DB, key string, ro *ReadOptions) string {
	t.Helper()
	v, err := d.GetAppend(nil, []byte(key), ro)
	if errors.Is(err, ErrNotFound) {
		return "<not found>"
	}
	require.NoError(t, err)
	return string(v)
}

// waitUntil polls cond for up to 5 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// reachedWaitToPublish returns a channel closed the first time a flush or
// an Ingest of d waits for earlier batches to publish. Call it before the
// DB has work in flight.
func reachedWaitToPublish(d *DB) <-chan struct{} {
	reached := make(chan struct{})
	var once sync.Once
	d.waitingToPublish = func() { once.Do(func() { close(reached) }) }
	return reached
}

// noCompactions keeps L0 from compacting on its own.
func noCompactions(o *Options) *Options {
	o.Level0FileNumCompactionTrigger = 100
	o.Level0SlowdownWritesTrigger = 100
	o.Level0StopWritesTrigger = 100
	return o
}

// A flush waits until the batches of its memtable are published, not only
// applied, before it drops the versions they shadow. The review found a
// flush that waited only for the batches to be applied: a batch can be
// applied and unpublished (its committer between mem.release and publish,
// or waiting to publish behind an earlier batch), and the flush, which saw
// no snapshot, dropped the older version of a key that the unpublished
// batch shadowed; until the batch published, reads at visibleSeq (and
// snapshots taken meanwhile) found neither version.
func TestFlushWaitsForShadowingBatchToPublish(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	waiting := reachedWaitToPublish(d)
	reviewSet(t, d, "k", "old")
	var b Batch
	b.Set([]byte("k"), []byte("new"))
	a := beginApply(t, d, &b)
	a.apply(t)
	// The flush must wait for the batch to be visible before it drops
	// the older version.
	flushed := make(chan error, 1)
	go func() { flushed <- d.Flush() }()
	select {
	case <-waiting:
	case err := <-flushed:
		t.Fatalf("the flush did not wait for the unpublished batch (err %v)", err)
	}
	s, err := d.NewSnapshot()
	require.NoError(t, err)
	got, gotSnap := reviewGet(t, d, "k", nil), reviewGet(t, d, "k", &ReadOptions{Snapshot: s})
	require.NoError(t, s.Close())
	require.Equal(t, "old", got, "a key with a committed value reads as absent")
	require.Equal(t, "old", gotSnap, "a snapshot reads a committed key as absent")
	select {
	case err := <-flushed:
		t.Fatalf("the flush did not wait for the unpublished batch (err %v)", err)
	default:
	}
	a.publish(t)
	require.NoError(t, <-flushed)
	require.Equal(t, "new", reviewGet(t, d, "k", nil))
}

// Ingest waits for the batches that took their sequence numbers before it
// to publish, so that none lands in the memtable after its overlap check.
// The review found an Ingest that checked the memtable for overlap under
// commitMu while a batch that had taken its sequence number before was not
// in the memtable yet: the ingested table was rewritten at a newer sequence
// number into L0 while the older batch landed in the memtable above it, and
// Get returned the batch's value until a flush, then the ingested one.
func TestIngestWaitsForEarlierBatches(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", noCompactions(smallOptions(fs)))
	require.NoError(t, err)
	defer d.Close()
	waiting := reachedWaitToPublish(d)
	reviewSet(t, d, "k2", "table")
	require.NoError(t, d.Flush()) // so that the ingested table overlaps a table

	var b Batch
	b.Set([]byte("k1"), []byte("batch"))
	a := beginApply(t, d, &b) // committed (sequence number taken), not applied yet

	writeTable(t, fs, "in.sst", "k1", "ingest", "k3", "ingest")
	done := make(chan error, 1)
	go func() { done <- d.Ingest([]string{"in.sst"}) }()
	// Ingest waits for the batch, which committed first, to be visible.
	select {
	case <-waiting:
	case err := <-done:
		t.Fatalf("Ingest did not wait for an earlier batch (err %v)", err)
	}
	a.apply(t)
	a.publish(t)
	require.NoError(t, <-done)
	require.Equal(t, "ingest", reviewGet(t, d, "k1", nil), "the ingest is newer than the batch")

	before := reviewGet(t, d, "k1", nil)
	require.NoError(t, d.Flush())
	after := reviewGet(t, d, "k1", nil)
	require.Equal(t, before, after, "the value of k1 changed without a write (the ingest is newer than the batch)")
}

// Ingest waits for running compactions before it moves a table into the
// last level. The review found an Ingest that did not: a running compaction
// into that level was about to install an output spanning the ingested
// range (its inputs had a gap there), its edit broke L1+ disjointness, the
// manifest refused it and the DB stopped accepting writes.
func TestIngestWaitsForRunningCompaction(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", noCompactions(smallOptions(fs)))
	require.NoError(t, err)
	defer d.Close()
	reviewSet(t, d, "a", "1")
	require.NoError(t, d.Flush())
	reviewSet(t, d, "z", "1")
	require.NoError(t, d.Flush())

	// The background job picks the L0 compaction into the base level (the
	// last level of a small DB)...
	d.mu.Lock()
	v := d.mu.versions.Current()
	_, baseLevel := d.levelTargets(v)
	c := &compaction{startLevel: 0, outputLevel: baseLevel, reason: "L0 tables"}
	c.inputs[0] = append([]*manifest.TableMeta(nil), v.Tables(0)...)
	c = d.finishPick(v, c)
	v.Unref()
	require.NotNil(t, c)
	d.mu.compactions++
	d.mu.Unlock()

	// ... and while it runs, a table in the gap between its inputs is
	// ingested: the ingest waits for the compaction.
	writeTable(t, fs, "in.sst", "m", "ingested")
	done := make(chan error, 1)
	go func() { done <- d.Ingest([]string{"in.sst"}) }()
	// Ingest marks itself ingesting under d.mu and waits on d.mu.cond in
	// the same critical section: once the flag is seen, it waits.
	waitUntil(t, "the Ingest to wait for the compaction", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.mu.ingesting
	})
	err = d.runCompaction(context.Background(), c)
	d.mu.Lock()
	d.mu.compactions--
	d.mu.cond.Broadcast()
	d.mu.Unlock()
	require.NoError(t, err, "the compaction could not install its output")
	require.NoError(t, <-done)
	require.Equal(t, "ingested", reviewGet(t, d, "m", nil))
	var b Batch
	b.Set([]byte("x"), []byte("1"))
	require.NoError(t, d.Apply(&b, NoSync), "writes stopped")
}

// A failed Ingest leaves the caller's files in place, so that it can retry.
// The review found a moved table renamed into the DB directory (where the
// next Open deleted it, as it was not live) and a rewritten table's source
// removed before the manifest edit was durable.
func TestFailedIngestKeepsInputFiles(t *testing.T) {
	mem := vfs.NewMem()
	toggle := vfs.NewToggle(vfs.OnOp(vfs.OpSync, "MANIFEST"))
	fs := vfs.NewErrorFS(mem, toggle)
	d, err := Open("db", noCompactions(smallOptions(fs)))
	require.NoError(t, err)
	reviewSet(t, d, "a", "1")
	require.NoError(t, d.Flush())

	writeTable(t, mem, "moved.sst", "m", "1")     // overlaps nothing: moved
	writeTable(t, mem, "rewritten.sst", "a", "2") // overlaps "a": rewritten
	toggle.On()
	err = d.Ingest([]string{"moved.sst", "rewritten.sst"})
	toggle.Off()
	require.True(t, errors.Is(err, vfs.ErrInjected), "%v", err)
	_ = d.Close()
	for _, p := range []string{"moved.sst", "rewritten.sst"} {
		_, err := mem.Stat(p)
		require.NoError(t, err, "the failed Ingest took the caller's %s", p)
	}
}

// A failed Ingest publishes the sequence number it took for a rewrite, so
// later writes go on. The review found an Ingest that took the number
// before rewriting its table and, when the rewrite failed, returned without
// publishing it: visibleSeq never reached it and every later Apply waited
// forever in publish.
func TestFailedIngestRewriteDoesNotBlockWrites(t *testing.T) {
	mem := vfs.NewMem()
	toggle := vfs.NewToggle(vfs.OnOp(vfs.OpCreate, "db/"))
	fs := vfs.NewErrorFS(mem, toggle)
	d, err := Open("db", noCompactions(smallOptions(fs)))
	require.NoError(t, err)
	reviewSet(t, d, "a", "1")
	require.NoError(t, d.Flush())

	writeTable(t, mem, "in.tbl", "a", "2") // overlaps: rewritten into db/
	toggle.On()
	err = d.Ingest([]string{"in.tbl"})
	toggle.Off()
	require.True(t, errors.Is(err, vfs.ErrInjected), "%v", err)

	done := make(chan error, 1)
	go func() {
		var b Batch
		b.Set([]byte("b"), []byte("1"))
		done <- d.Apply(&b, NoSync)
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
		require.NoError(t, d.Close())
	case <-time.After(500 * time.Millisecond):
		d.fail(errors.New("review: unblocking the hung Apply"))
		<-done
		_ = d.Close()
		t.Fatal("Apply hangs after a failed Ingest")
	}
}

// A snapshot sees exactly what was written before it, ingested tables
// included. The review found a table that overlapped nothing ingested at
// sequence number 0 into the last level, so that snapshots taken before the
// Ingest saw its keys.
func TestSnapshotDoesNotSeeLaterIngest(t *testing.T) {
	fs := NewMemFS()
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	defer d.Close()
	reviewSet(t, d, "a", "1")
	s, err := d.NewSnapshot()
	require.NoError(t, err)
	defer s.Close()
	writeTable(t, fs, "in.sst", "m", "ingested")
	require.NoError(t, d.Ingest([]string{"in.sst"}))
	require.Equal(t, "ingested", reviewGet(t, d, "m", nil))
	require.Equal(t, "<not found>", reviewGet(t, d, "m", &ReadOptions{Snapshot: s}),
		"a snapshot taken before the Ingest sees the ingested key")
}

// A newer version of a key never lands below an older one when the base
// level moves down. With dynamic level bytes the base level moves down when
// the largest level shrinks (here: a range of it is deleted and compacted
// away). The review found the L0 compaction then going straight to the new
// base level, below tables left in the levels above it: Get (which stops at
// the first level holding the key) returned the old value, and those
// levels' targets were infinite, so nothing ever compacted them.
func TestBaseLevelMovingDownKeepsNewestValue(t *testing.T) {
	fs := NewMemFS()
	o := smallOptions(fs)
	o.NumLevels = 3
	o.Level0FileNumCompactionTrigger = 1
	o.Compression = NoCompression
	d, err := Open("db", o)
	require.NoError(t, err)
	defer d.Close()
	ctx := context.Background()
	quiet := func() {
		waitUntil(t, "compactions", func() bool {
			m := d.Metrics()
			return m.CompactionsRunning == 0 && m.Levels[0].Tables == 0
		})
	}

	// 1. More than MaxBytesForLevelBase in the last level: base level 1.
	rng := rand.New(rand.NewSource(1))
	value := make([]byte, 1000)
	for i := 0; i < 1300; i++ {
		_, _ = rng.Read(value)
		var b Batch
		b.Set([]byte(fmt.Sprintf("a%06d", i)), value)
		require.NoError(t, d.Apply(&b, NoSync))
	}
	require.NoError(t, d.Compact(ctx, nil, nil))
	quiet()
	require.Greater(t, d.Metrics().Levels[2].Bytes, uint64(1<<20))

	// 2. k=old goes to the base level, L1.
	reviewSet(t, d, "k", "old")
	require.NoError(t, d.Flush())
	quiet()
	require.Equal(t, 1, d.Metrics().Levels[1].Tables)

	// 3. The bulk is deleted and compacted away: the base level becomes L2.
	var b Batch
	b.DeleteRange([]byte("a"), []byte("b"))
	require.NoError(t, d.Apply(&b, NoSync))
	require.NoError(t, d.Compact(ctx, []byte("a"), []byte("b")))
	quiet()

	// 4. k=new: its L0 table goes to L2, below k=old in L1.
	reviewSet(t, d, "k", "new")
	require.NoError(t, d.Flush())
	quiet()
	m := d.Metrics()
	t.Logf("tables per level: %d %d %d", m.Levels[0].Tables, m.Levels[1].Tables, m.Levels[2].Tables)
	require.Equal(t, "new", reviewGet(t, d, "k", nil))
}

// A synced write acknowledged after a WAL switch makes the writes
// acknowledged before it durable too. The review found the writes of the
// previous WAL left to the flush to sync: a crash recovered the later,
// synced batch without the earlier one, a hole in the commit order that no
// reader could have observed before the crash.
func TestSyncedWriteAfterWALSwitchSyncsEarlierWrites(t *testing.T) {
	mem := vfs.NewMem()
	var oldWAL atomic.Value // path of the WAL whose syncs are held back
	oldWAL.Store("")
	syncing, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpSync && op.Path == oldWAL.Load().(string) {
			once.Do(func() { close(syncing) })
			<-gate // a slow fsync of the old WAL
		}
		return nil
	}))
	d, err := Open("db", smallOptions(fs))
	require.NoError(t, err)
	reviewSet(t, d, "first", "1") // acknowledged, not synced
	d.mu.Lock()
	oldWAL.Store(manifest.FilePath("db", manifest.FileKindLog, d.mu.mem.walNum))
	d.mu.Unlock()

	// A batch larger than the memtable switches to a new memtable and WAL.
	// The old WAL's fsync is held back; the synced write must wait for it.
	applied := make(chan error, 1)
	go func() {
		var b Batch
		b.Set([]byte("second"), make([]byte, 70<<10))
		applied <- d.Apply(&b, Sync) // acknowledged as durable
	}()
	var crashed *vfs.MemFS
	select {
	case err := <-applied:
		// Acknowledged before the old WAL's sync even started: crash
		// now, with the earlier write not durable.
		require.NoError(t, err)
		crashed = mem.CrashClone(vfs.CrashOptions{})
		close(gate)
	case <-syncing:
		select {
		case err := <-applied: // acknowledged while the old WAL's sync is held back
			require.NoError(t, err)
			crashed = mem.CrashClone(vfs.CrashOptions{})
			close(gate)
		default:
			close(gate)
			require.NoError(t, <-applied)
			crashed = mem.CrashClone(vfs.CrashOptions{})
		}
	}
	require.NoError(t, d.Close())

	d, err = Open("db", smallOptions(crashed))
	require.NoError(t, err)
	defer d.Close()
	require.NotEqual(t, "<not found>", reviewGet(t, d, "second", nil), "the synced batch survives")
	require.Equal(t, "1", reviewGet(t, d, "first", nil), "an earlier batch is lost while a later synced one survived")
}

// A background compaction that fails (here: on a corrupt table) is not
// retried in a loop: the failure becomes the DB's sticky error. The review
// found the failed compaction picked again at once by the goroutine that
// ran it, the same failure repeating in a tight loop, pinning a CPU and
// flooding the log.
func TestFailedCompactionIsNotRetriedInALoop(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("db", smallOptions(mem)) // L0 trigger 2
	require.NoError(t, err)
	defer d.Close()
	writeBatches(t, d, 200)
	require.NoError(t, d.Flush())
	tables := filesOf(t, mem, ".sst")
	require.Len(t, tables, 1)
	flipByte(t, mem, tables[0], 0.2) // inside a data block
	writeBatches(t, d, 10)
	require.NoError(t, d.Flush()) // two L0 tables: the L0 compaction starts
	// A loop never sets the sticky error (waitUntil fails after 5 s).
	waitUntil(t, "the compaction to fail and stop writes", func() bool {
		return d.stickyErr() != nil && d.Metrics().CompactionsRunning == 0
	})
	require.ErrorIs(t, d.stickyErr(), ErrCorruption)
	d.mu.Lock()
	d.maybeScheduleCompactionLocked()
	running := d.mu.compactions
	d.mu.Unlock()
	require.Zero(t, running, "a compaction was scheduled again after the failure")
}

// The in-place rewrite of a table that range tombstones above cover waits
// for the snapshots that still see its entries. The review found the
// rewrite running while a snapshot was open: it kept the entries the
// snapshot saw and the table's own newer tombstones, so the output was a
// new tombstone-bearing table, which changed the tombstone fingerprint,
// which rescanned, which found the output just as covered, which rewrote it
// again — forever, while the snapshot was open.
func TestDeletionRewriteWaitsForSnapshots(t *testing.T) {
	fs := NewMemFS()
	o := noCompactions(smallOptions(fs))
	o.NumLevels = 3
	d, err := Open("db", o)
	require.NoError(t, err)
	defer d.Close()
	ctx := context.Background()

	for i := 0; i < 500; i++ {
		reviewSet(t, d, fmt.Sprintf("k%04d", i), strings.Repeat("v", 100))
	}
	s, err := d.NewSnapshot()
	require.NoError(t, err)
	defer s.Close()
	// The table's own tombstone, newer than the snapshot.
	var b Batch
	b.DeleteRange([]byte("z0"), []byte("z1"))
	require.NoError(t, d.Apply(&b, NoSync))
	require.NoError(t, d.Compact(ctx, nil, nil)) // everything in L2
	// A newer tombstone above covering the table's entries.
	b.Reset()
	b.DeleteRange([]byte("k"), []byte("l"))
	require.NoError(t, d.Apply(&b, NoSync))
	require.NoError(t, d.Flush())

	// Scheduling twice must leave the DB idle with no new compaction: a
	// rewrite loop never lets it go idle (waitUntil fails after 5 s).
	idle := func() int64 {
		d.mu.Lock()
		d.maybeScheduleCompactionLocked()
		d.mu.Unlock()
		waitUntil(t, "compactions to stop", func() bool { return d.Metrics().CompactionsRunning == 0 })
		return d.Metrics().Compactions
	}
	first := idle()
	second := idle()
	require.Equal(t, first, second, "in-place rewrites keep running (%d, then %d)", first, second)
}

// An in-place rewrite keeps the entries of a snapshot taken while it runs.
// The review found a rewrite that read the open snapshots, then opened its
// input table, then read the tombstones of the levels above from the
// version current at that later moment: a snapshot taken in between,
// followed by a range deletion flushed to L0, was not in its snapshot list,
// but the deletion was applied, and the rewrite dropped entries the
// snapshot still saw.
func TestInPlaceRewriteKeepsEntriesOfNewSnapshot(t *testing.T) {
	mem := vfs.NewMem()
	var target atomic.Value // path of the table whose first open is held back
	target.Store("")
	blocked, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if op.Kind == vfs.OpOpen && op.Path == target.Load().(string) {
			once.Do(func() { close(blocked) })
			<-gate
		}
		return nil
	}))
	o := noCompactions(smallOptions(fs))
	o.NumLevels = 3
	d, err := Open("db", o)
	require.NoError(t, err)
	defer d.Close()
	reviewSet(t, d, "k", "v")
	require.NoError(t, d.Compact(context.Background(), nil, nil))

	// The deletion-compaction picker chooses the last-level table.
	d.mu.Lock()
	v := d.mu.versions.Current()
	tables := v.Tables(2)
	require.Len(t, tables, 1)
	tbl := tables[0]
	v.Unref()
	tbl.SetCompacting(true)
	c := &compaction{startLevel: 2, outputLevel: 2, reason: "range deletions", inPlace: true}
	c.inputs[0] = []*manifest.TableMeta{tbl}
	c.setBounds()
	d.mu.compactions++
	d.mu.Unlock()
	d.tableCache.evict(tbl.FileNum) // its first open comes in the compaction
	target.Store(manifest.FilePath("db", manifest.FileKindTable, tbl.FileNum))
	done := make(chan error, 1)
	go func() { done <- d.runCompaction(context.Background(), c) }()

	<-blocked // the rewrite has read the (empty) snapshot list
	s, err := d.NewSnapshot()
	require.NoError(t, err)
	defer s.Close()
	var b Batch
	b.DeleteRange([]byte("a"), []byte("z"))
	require.NoError(t, d.Apply(&b, NoSync))
	require.NoError(t, d.Flush())
	close(gate)
	require.NoError(t, <-done)
	d.mu.Lock()
	d.mu.compactions--
	d.mu.Unlock()

	require.Equal(t, "<not found>", reviewGet(t, d, "k", nil))
	require.Equal(t, "v", reviewGet(t, d, "k", &ReadOptions{Snapshot: s}), "the snapshot lost a key it saw")
}

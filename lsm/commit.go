package lsm

import (
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/batch"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/memtable"
	"github.com/bookie-index/bookie-index/lsm/internal/wal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// memEntryOverhead is what the memtable is charged per entry on top of its
// key and value: a 20-byte node header, a tower of two 4-byte links and
// 8-byte alignment. Towers average 4/3 links (p = 1/4), so over a memtable
// of thousands of entries the real use stays below the charge; the arena
// also gets memArenaSlack extra room for the variance of small memtables.
const (
	memEntryOverhead = 36
	memArenaSlack    = 1.25
)

// batchMemSize is the memtable charge of a batch.
func batchMemSize(b *batch.Batch) int64 {
	// Len is the encoding: per op a kind byte and two varint lengths
	// (at most 3 bytes each here) around the key and value bytes.
	return int64(b.Len()) + int64(b.Count())*memEntryOverhead
}

// Apply commits a batch atomically: it is written to the WAL (and synced,
// with wo.Sync), inserted into the memtable and made visible to readers in
// commit order. Concurrent synced Applies share WAL fsyncs.
//
// A WAL or memtable failure is sticky: this and every later write fails
// with it, and the failed batch never becomes visible; reads keep working.
// A WAL failure for lack of space is not: writes fail with an error
// matching ErrNoSpace until the DB has switched to a new WAL (see
// background_error.go).
func (d *DB) Apply(b *Batch, wo *WriteOptions) error {
	if b == nil {
		return errors.New("lsm: Apply of a nil batch")
	}
	if err := b.Err(); err != nil {
		return errors.Wrap(err, "lsm: invalid batch")
	}
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	if b.b.HasMerge() && d.opts.MergeOperator == nil {
		return errMergeNoOperator
	}
	sync := wo != nil && wo.Sync
	if b.Empty() {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.checkOpenLocked("Apply")
	}
	var start time.Time // read only with statistics: no clock on the hot path otherwise
	if d.opts.EnableStatistics {
		start = time.Now()
	}
	count := base.SeqNum(b.Count())

	d.commitMu.Lock()
	mem, w, err := d.makeRoomForWrite(batchMemSize(&b.b))
	if err != nil {
		d.commitMu.Unlock()
		return err
	}
	if b.b.HasMerge() {
		if err := d.bindMergeOperator(); err != nil {
			d.commitMu.Unlock()
			return err
		}
	}
	first := d.mu.nextSeq // guarded by commitMu
	d.mu.nextSeq += count
	b.b.SetSeqNum(first)
	n, err := w.Enqueue(b.b.Repr())
	if err != nil {
		// Nothing was enqueued: give the sequence numbers back (commitMu
		// is still held, so nobody took a later one).
		d.mu.nextSeq = first
		d.commitMu.Unlock()
		err = errors.Wrap(err, "lsm: WAL")
		d.failWAL(w, err)
		return d.walErr(err)
	}
	mem.reserve()
	d.commitMu.Unlock()

	err, memErr := d.logAndApply(mem, w, n, sync, &b.b)
	if err != nil {
		// The WAL is broken; the batch applied nothing. Its failure is
		// recorded before the memtable is released, so that recovery
		// never flushes that memtable without knowing its WAL failed.
		err = errors.Wrap(err, "lsm: WAL")
		d.failWAL(w, err)
		mem.release()
		if !vfs.IsNoSpace(err) {
			return err
		}
		// Later batches wait for this one to publish: pass its sequence
		// numbers (it holds nothing readers could see).
		if perr := d.publish(first, first+count-1); perr != nil {
			return perr
		}
		return d.walErr(err)
	}
	mem.release()
	if memErr != nil {
		d.fail(memErr)
		return memErr
	}
	if err := d.publish(first, first+count-1); err != nil {
		return err
	}
	d.metrics.batches.Add(1)
	d.metrics.keysWritten.Add(int64(count))
	if sync {
		d.metrics.syncedBatches.Add(1)
	}
	if d.opts.EnableStatistics {
		d.metrics.commitNanos.Add(time.Since(start).Nanoseconds())
	}
	return nil
}

// overlapMinOps is the smallest batch whose memtable insert runs while
// its WAL record is written and synced (logAndApply): below it the insert
// is too short to pay for the goroutine that waits for the WAL.
const overlapMinOps = 1024

// logAndApply waits for record n of WAL w (written, and synced with sync)
// and inserts batch b into mem. It returns the WAL's failure, with nothing
// of the batch in mem, or the memtable's.
//
// A batch of sorted point entries after everything in the memtable (a
// checkpoint's locations) is appended in one pass (memtable.AddSorted),
// and from overlapMinOps operations on its run is built in the arena while
// the WAL record is written and synced, on another goroutine: unlinked,
// no reader, iterator or flush can reach it, and it is linked in only
// once the WAL holds the batch, or freed if the WAL failed. The insert
// then overlaps the fsync instead of following it (docs/design.md, "The
// load's write path: what paid"). Any other batch is inserted after the
// WAL, entry by entry.
func (d *DB) logAndApply(mem *memTable, w *wal.Writer, n uint64, sync bool, b *batch.Batch) (walErr, memErr error) {
	if b.Count() < overlapMinOps {
		if err := w.Wait(n, sync); err != nil {
			return err, nil
		}
		return nil, d.applyToMemTable(mem, b)
	}
	logged := make(chan error, 1)
	go func() { logged <- w.Wait(n, sync) }()
	mem.applyMu.Lock()
	defer mem.applyMu.Unlock()
	var run memtable.SortedRun
	sr := b.Reader()
	prepared, err := mem.mt.PrepareSorted(b.SeqNum(), &sr, &run)
	if walErr := <-logged; walErr != nil {
		if prepared {
			mem.mt.DiscardSorted(&run)
		}
		return walErr, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, "lsm: decoding a batch being applied")
	}
	if prepared {
		mem.mt.PublishSorted(&run)
		mem.noteSeqNum(b.SeqNum() + base.SeqNum(b.Count()) - 1)
		return nil, nil
	}
	return nil, applyEachLocked(mem, b)
}

// applyToMemTable inserts a committed batch: one of sorted point entries
// after everything in the memtable in one pass (memtable.AddSorted), any
// other entry by entry.
func (d *DB) applyToMemTable(m *memTable, b *batch.Batch) error {
	seq := b.SeqNum()
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	sr := b.Reader()
	added, err := m.mt.AddSorted(seq, &sr)
	if err != nil {
		return errors.Wrap(err, "lsm: decoding a batch being applied")
	}
	if added {
		m.noteSeqNum(seq + base.SeqNum(b.Count()) - 1)
		return nil
	}
	return applyEachLocked(m, b)
}

// applyEachLocked inserts a committed batch entry by entry. The caller
// holds m.applyMu.
func applyEachLocked(m *memTable, b *batch.Batch) error {
	r := b.Reader()
	seq := b.SeqNum()
	for {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			return errors.Wrap(err, "lsm: decoding a batch being applied")
		}
		if !ok {
			return nil
		}
		if err := m.add(seq, kind, key, value); err != nil {
			return errors.Wrap(err, "lsm: memtable")
		}
		seq++
	}
}

// publish makes batch [first, last] visible once every earlier batch is.
func (d *DB) publish(first, last base.SeqNum) error {
	d.publishMu.Lock()
	defer d.publishMu.Unlock()
	for d.visibleSeq.Load() != uint64(first)-1 {
		if err := d.stickyErr(); err != nil {
			// An earlier batch failed and will never publish.
			return err
		}
		d.published.Wait()
	}
	d.visibleSeq.Store(uint64(last))
	d.published.Broadcast()
	return nil
}

// stickyErr returns the sticky background error, if any (not an
// out-of-space one, which goes away).
func (d *DB) stickyErr() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.bgErr
}

// fail records a failure of a write or of background work and wakes
// everyone waiting: a failure for lack of space starts the recovery loop
// (see background_error.go); any other is sticky.
func (d *DB) fail(err error) {
	d.mu.Lock()
	d.failLocked(err)
	d.mu.Unlock()
}

// failLocked is fail with d.mu held.
func (d *DB) failLocked(err error) {
	if d.mu.bgErr == nil && vfs.IsNoSpace(err) {
		d.noSpaceLocked(err)
		return
	}
	if d.mu.bgErr == nil {
		d.mu.bgErr = err
		d.opts.Logger.Error("lsm: writes stopped after a failure", "err", err)
	}
	d.wakeWaitersLocked()
}

// walErr is the error a write gets for a failed WAL write: one matching
// ErrNoSpace if it failed for lack of space.
func (d *DB) walErr(err error) error {
	if vfs.IsNoSpace(err) {
		return base.NoSpaceError("lsm: out of space: the WAL failed; the DB switches to a new one once space returns", err)
	}
	return err
}

// waitPublished waits until every batch up to seq is visible, or the DB
// failed (then that batch may never publish).
func (d *DB) waitPublished(seq base.SeqNum) error {
	d.publishMu.Lock()
	defer d.publishMu.Unlock()
	for d.visibleSeq.Load() < uint64(seq) {
		if err := d.stickyErr(); err != nil {
			return err
		}
		if d.waitingToPublish != nil {
			d.waitingToPublish()
		}
		d.published.Wait()
	}
	return nil
}

// makeRoomForWrite returns the memtable and WAL for a batch of size bytes,
// charging the memtable. It switches to a new memtable and WAL when the
// current one is full, and delays or stops the write while memtables or L0
// tables pile up. d.commitMu must be held.
func (d *DB) makeRoomForWrite(size int64) (*memTable, *wal.Writer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	slowedDown := false
	for {
		if err := d.checkOpenLocked("Apply"); err != nil {
			return nil, nil, err
		}
		if err := d.writeErrLocked(); err != nil {
			return nil, nil, err
		}
		m := d.mu.mem
		if m.charged+size <= m.budget {
			m.charged += size
			return m, d.mu.wal, nil
		}
		// The memtable is full, or the batch is larger than a memtable:
		// switch to one big enough.
		l0 := d.l0CountLocked()
		if !slowedDown && l0 >= d.opts.Level0SlowdownWritesTrigger && l0 < d.opts.Level0StopWritesTrigger {
			slowedDown = true
			d.metrics.writeSlowdowns.Add(1)
			d.mu.Unlock()
			time.Sleep(time.Millisecond)
			d.mu.Lock()
			continue
		}
		if l0 >= d.opts.Level0StopWritesTrigger && d.mu.space.compactionErr != nil {
			// The compactions that would make room fail for lack of
			// space: refuse rather than wait for them.
			return nil, nil, base.NoSpaceError("lsm: out of space: L0 is at the stop trigger and compactions wait for space", d.mu.space.compactionErr)
		}
		if len(d.mu.imm)+1 >= d.opts.MaxWriteBufferNumber || l0 >= d.opts.Level0StopWritesTrigger {
			d.metrics.writeStops.Add(1)
			start := time.Now()
			d.maybeScheduleFlushLocked()
			d.mu.cond.Wait()
			d.metrics.stallNanos.Add(time.Since(start).Nanoseconds())
			continue
		}
		if err := d.switchMemTableLocked(size); err != nil {
			return nil, nil, err
		}
	}
}

func (d *DB) l0CountLocked() int {
	v := d.readState.Load().version
	return v.NumTables(0)
}

// switchMemTableLocked makes the mutable memtable immutable and starts a
// new one, with a new WAL, big enough for at least a batch of minSize.
// d.mu is held (and released around I/O); d.commitMu too, so no batch can
// enqueue meanwhile.
//
// The old WAL is closed (written and fsynced) before the new one takes a
// write: a synced write in the new WAL then implies that every write
// before it is durable too, so recovery never finds a later batch without
// an earlier one.
func (d *DB) switchMemTableLocked(minSize int64) error {
	walNum := d.mu.versions.NextFileNum()
	oldWAL := d.mu.wal
	d.mu.Unlock()
	err := oldWAL.Close()
	var w *wal.Writer
	if err == nil {
		w, err = d.createWAL(walNum)
	}
	d.mu.Lock()
	if err != nil {
		err = errors.Wrap(err, "lsm: switching WALs")
		if vfs.IsNoSpace(err) {
			// The old WAL is closed or broken and there is no new one.
			d.mu.space.walBroken = true
		}
		d.failLocked(err)
		return d.walErr(err)
	}
	d.metrics.retiredWAL(oldWAL)
	old := d.mu.mem
	if !old.empty() || old.charged > 0 {
		d.mu.imm = append(d.mu.imm, old)
	} else {
		// Nothing to flush: its WAL can go once its writers are done.
		d.bgWG.Add(1)
		go d.removeWAL(old)
		old.unref() // no longer listed (no writer charged it)
	}
	d.mu.mem = d.newMemTable(max(minSize, d.opts.WriteBufferSize), walNum)
	d.mu.wal = w
	d.updateReadStateLocked()
	d.maybeScheduleFlushLocked()
	return nil
}

// newMemTable makes a memtable whose budget is size bytes of charges.
func (d *DB) newMemTable(size int64, walNum uint64) *memTable {
	m := newMemTable(int64(float64(size)*memArenaSlack)+1<<16, walNum, &d.spareMem)
	m.budget = size
	return m
}

// createWAL creates WAL walNum and its synced-length file and makes their
// names durable.
func (d *DB) createWAL(walNum uint64) (*wal.Writer, error) {
	syncedPath := manifest.FilePath(d.dir, manifest.FileKindSyncedLength, walNum)
	sf, err := d.fs.Create(syncedPath)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: creating %s", syncedPath)
	}
	path := manifest.FilePath(d.dir, manifest.FileKindLog, walNum)
	f, err := d.fs.Create(path)
	if err != nil {
		_ = sf.Close()
		_ = d.fs.Remove(syncedPath)
		return nil, errors.Wrapf(err, "lsm: creating WAL %s", path)
	}
	if err := d.makeNamesDurable(); err != nil {
		_ = f.Close()
		_ = sf.Close()
		// Empty, and named by nothing: retries on a full disk must not
		// leave a pair each.
		_ = d.fs.Remove(path)
		_ = d.fs.Remove(syncedPath)
		return nil, err
	}
	return wal.NewWriter(f, wal.Options{SyncedLength: sf}), nil
}

// makeNamesDurable syncs the DB's directory: the creations, renames and
// removals of names in it become durable.
func (d *DB) makeNamesDurable() error { return errors.Wrap(vfs.SyncDir(d.fs, d.dir), "lsm") }

// removeWAL removes the (closed) WAL of an empty memtable.
func (d *DB) removeWAL(m *memTable) {
	defer d.bgWG.Done()
	m.waitForWriters()
	_ = d.fs.Remove(manifest.FilePath(d.dir, manifest.FileKindLog, m.walNum))
	_ = d.fs.Remove(manifest.FilePath(d.dir, manifest.FileKindSyncedLength, m.walNum))
}

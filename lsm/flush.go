package lsm

import (
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/memtable"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// writeL0Table writes a memtable's entries and range tombstones to a new
// table and returns its metadata (nil if nothing is left to write). Like a
// compaction, the flush keeps one version of a key per snapshot stripe and
// drops entries the memtable's own range tombstones delete.
func (d *DB) writeL0Table(m *memTable) (*manifest.TableMeta, error) {
	if m.empty() {
		return nil, nil
	}
	d.mu.Lock()
	ci := &compactionIter{snapshots: d.snapshotSeqsLocked(), tombs: m.rangeDelSet()}
	d.mu.Unlock()
	out, err := d.newTableOutput()
	if err != nil {
		return nil, err
	}
	var it memtable.Iterator
	m.mt.InitPointIter(&it)
	in := newCompactionInput(d, ci, &it)
	for k, tr, v, ok := in.First(); ok; k, tr, v, ok = in.Next() {
		if err := out.add(k, tr, v); err != nil {
			out.abort()
			return nil, err
		}
	}
	if ci.tombs != nil {
		if err := out.addTombstones(ci.outputTombstones(ci.tombs.Fragments())); err != nil {
			out.abort()
			return nil, err
		}
	}
	return out.finish()
}

// maybeScheduleFlushLocked starts the flush job if there are immutable
// memtables and none is running. d.mu must be held.
func (d *DB) maybeScheduleFlushLocked() {
	if d.mu.flushing || len(d.mu.imm) == 0 || d.mu.closed || d.writeErrLocked() != nil || d.opts.ReadOnly {
		return
	}
	d.mu.flushing = true
	d.bgWG.Add(1)
	go d.flushLoop()
}

// flushLoop flushes immutable memtables, oldest first, until none is left.
func (d *DB) flushLoop() {
	defer d.bgWG.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() {
		d.mu.flushing = false
		d.mu.cond.Broadcast()
	}()
	// An out-of-space failure stops it too: the recovery loop flushes then.
	for len(d.mu.imm) > 0 && !d.mu.closed && d.writeErrLocked() == nil {
		m := d.mu.imm[0]
		d.mu.Unlock()
		err := d.flushMemTable(m)
		d.mu.Lock()
		if err != nil {
			d.mu.Unlock()
			d.fail(err)
			d.mu.Lock()
			return
		}
	}
}

// flushMemTable writes m to L0 and installs it, dropping m from the
// immutable memtables and its WAL from the live ones.
func (d *DB) flushMemTable(m *memTable) error {
	start := time.Now()
	// Every batch of the memtable must be applied and visible: the flush
	// drops versions shadowed by newer ones, which must not happen while
	// the newer one is still invisible to readers.
	m.waitForWriters()
	if err := d.waitPublished(base.SeqNum(m.maxSeq.Load())); err != nil {
		return err
	}
	meta := m.flushed
	if meta == nil {
		var err error
		if meta, err = d.writeL0Table(m); err != nil {
			return errors.Wrap(err, "lsm: flush")
		}
		if meta != nil {
			if err := d.makeNamesDurable(); err != nil {
				// The name may not be durable: write the table again.
				d.removeFile(manifest.FilePath(d.dir, manifest.FileKindTable, meta.FileNum))
				return err
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	edit := &manifest.VersionEdit{}
	if meta != nil {
		edit.NewTables = []manifest.NewTable{{Level: 0, Meta: meta}}
	}
	// WALs before the next memtable's are now obsolete.
	if len(d.mu.imm) > 1 {
		edit.LogNumber = d.mu.imm[1].walNum
	} else {
		edit.LogNumber = d.mu.mem.walNum
	}
	edit.LastSeqNum = max(base.SeqNum(d.visibleSeq.Load()), base.SeqNum(m.maxSeq.Load()))
	if err := d.mu.versions.LogAndApply(edit); err != nil {
		if meta != nil && vfs.IsNoSpace(err) {
			// The table is durable; the retry writes only the edit.
			m.flushed = meta
		}
		return errors.Wrap(err, "lsm: flush")
	}
	d.removeOrphansLocked()
	d.mu.imm = d.mu.imm[1:]
	d.updateReadStateLocked()
	m.unref() // no longer listed
	d.metrics.flushes.Add(1)
	if meta != nil {
		d.metrics.flushBytes.Add(int64(meta.Size))
	}
	d.opts.Logger.Info("lsm: flushed a memtable", "table", meta, "duration", time.Since(start))
	d.mu.Unlock()
	d.deleteObsoleteFiles(false)
	d.mu.Lock()
	d.maybeScheduleCompactionLocked()
	d.mu.cond.Broadcast()
	return nil
}

// Flush makes the current memtable immutable and waits until every
// memtable is flushed to L0.
func (d *DB) Flush() error {
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	d.commitMu.Lock()
	d.mu.Lock()
	if err := d.checkOpenLocked("Flush"); err != nil {
		d.mu.Unlock()
		d.commitMu.Unlock()
		return err
	}
	err := d.waitForL0RoomLocked()
	if err == nil && !d.mu.mem.empty() {
		err = d.switchMemTableLocked(0)
	}
	d.commitMu.Unlock()
	if err == nil {
		err = d.waitForFlushesLocked("Flush")
	}
	d.mu.Unlock()
	return err
}

// waitForFlushesLocked waits until every immutable memtable is flushed,
// the DB fails or it closes; op names the caller in the error. d.mu must
// be held (the wait releases it).
func (d *DB) waitForFlushesLocked(op string) error {
	for len(d.mu.imm) > 0 {
		if err := d.writeErrLocked(); err != nil {
			return err
		}
		if d.mu.closed {
			return errors.Wrapf(ErrClosed, "lsm: %s", op)
		}
		d.maybeScheduleFlushLocked()
		d.mu.cond.Wait()
	}
	return nil
}

// waitForL0RoomLocked waits while L0 holds Level0StopWritesTrigger tables
// or more, running compactions to bring it down. Every path that adds an L0
// table of new data waits here as writes do (makeRoomForWrite): Flush,
// Ingest and the flush of the recovered WALs at open, which would
// otherwise add a table per open, however many L0 already holds, in a
// process that crashes before its compactions finish. (Background flushes
// of memtables already immutable do not wait: writes stop first, so they
// add at most MaxWriteBufferNumber-1 tables past the trigger.) It returns
// at once if no compaction can run, which would wait forever. d.mu must be
// held; it is released while waiting.
func (d *DB) waitForL0RoomLocked() error {
	stalled := false
	for {
		if err := d.checkOpenLocked("Flush"); err != nil {
			return err
		}
		// After a failure, no switch either: a failed WAL must stay the
		// newest until its memtable is flushed (see background_error.go).
		if err := d.writeErrLocked(); err != nil {
			return err
		}
		v := d.mu.versions.Current()
		n := v.NumTables(0)
		v.Unref()
		if n < d.opts.Level0StopWritesTrigger {
			return nil
		}
		if err := d.mu.space.compactionErr; err != nil {
			// The compactions that would make room fail for lack of
			// space: refuse rather than wait for them.
			return base.NoSpaceError("lsm: out of space: L0 is at the stop trigger and compactions wait for space", err)
		}
		d.maybeScheduleCompactionLocked()
		if d.mu.compactions == 0 && !d.mu.coverage.scanning {
			return nil
		}
		if !stalled {
			stalled = true
			d.metrics.writeStops.Add(1)
			d.opts.Logger.Info("lsm: waiting for L0 compactions before adding an L0 table", "l0Tables", n,
				"stopTrigger", d.opts.Level0StopWritesTrigger)
		}
		d.mu.cond.Wait()
	}
}

// waitForL0RoomAtOpen is waitForL0RoomLocked for the flush of the
// recovered WALs, before Open has a memtable or a WAL of its own. Then it
// waits for the compactions it started and holds off new ones until Open
// is done (d.mu.openFlush), so that the cleanup at open sees no table being
// written. On error it stops the compactions: Open then fails.
func (d *DB) waitForL0RoomAtOpen(recovered []*memTable) error {
	d.mu.Lock()
	d.mu.openFlush = true
	empty := true
	for _, m := range recovered {
		empty = empty && m.empty()
	}
	var err error
	if !empty {
		d.mu.openFlush = false
		err = d.waitForL0RoomLocked()
		d.mu.openFlush = true
		for err == nil && d.mu.compactions > 0 {
			d.mu.cond.Wait()
			err = d.mu.bgErr
		}
	}
	if err != nil {
		d.mu.closed = true
		d.stopIdleCompactionLocked()
	}
	d.mu.Unlock()
	if err != nil {
		d.bgCancel()
		d.bgWG.Wait()
	}
	return err
}

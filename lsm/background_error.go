package lsm

import (
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/wal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Out-of-space failures
//
// A full disk is the one write failure that goes away without a restart,
// so the engine recovers from it in place, as RocksDB's ErrorHandler does
// for its NoSpace errors; every other failure (EIO, corruption) stays
// sticky in d.mu.bgErr.
//
//   - A flush, a WAL write or sync, a WAL switch or a manifest write that
//     fails for lack of space sets d.mu.space.err: writes fail at once with
//     an error matching ErrNoSpace, reads go on, and no flush or compaction
//     is scheduled. The recovery loop retries after NoSpaceRetryInterval,
//     doubling up to NoSpaceRetryMaxInterval: it seals the mutable memtable
//     if its WAL failed, flushes every immutable memtable, writes a
//     manifest edit (after a failed manifest write this rotates to a new
//     manifest) and creates a new WAL; then writes are taken again.
//   - A WAL that failed a write or sync is never written again (after a
//     failed fsync the kernel may have dropped the dirty pages: a retried
//     fsync could report lost data durable). Its memtable is flushed before
//     the next WAL is even created, so the failed WAL (whose tail may be
//     torn) is always the newest at a crash until it is obsolete.
//   - A flush whose table was written but whose manifest edit failed keeps
//     the table and retries only the edit.
//   - A background compaction that fails for lack of space removes its
//     outputs (or, if its manifest edit failed, removes them once a later
//     edit succeeds: the failed one may be durable) and compactions pause
//     for the same backoff; writes go on until L0 reaches the stop trigger,
//     then fail with ErrNoSpace instead of waiting.

// spaceState is what the DB knows of its out-of-space failures. It is
// guarded by d.mu.
type spaceState struct {
	// err is the out-of-space failure writes are refused for; nil when
	// writes are taken.
	err error
	// walBroken: the WAL of the mutable memtable failed (or a WAL switch
	// did): it must take no more writes, and recovery seals its memtable.
	walBroken bool
	// recovering: the recovery loop runs.
	recovering bool

	// compactionErr is the last out-of-space failure of a background
	// compaction, until one succeeds; none is scheduled before
	// compactionRetryAt, and compactionTimer schedules them then.
	compactionErr     error
	compactionDelay   time.Duration
	compactionRetryAt time.Time
	compactionTimer   *time.Timer

	// orphans are the tables of compactions whose manifest edit failed
	// for lack of space: the edit may be durable, so they are removed
	// only once a later edit succeeded (it rotated the manifest).
	orphans []uint64
}

// BackgroundError returns why the DB refuses writes, or nil: a sticky
// failure (the DB must be reopened), or an out-of-space failure the DB is
// retrying (errors.Is(err, ErrNoSpace); writes succeed again once a retry
// does). A compaction that failed for lack of space is reported too, also
// matching ErrNoSpace, although writes go on until L0 fills up: the disk
// is full either way.
func (d *DB) BackgroundError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch s := &d.mu.space; {
	case d.mu.bgErr != nil:
		return d.mu.bgErr
	case s.err != nil:
		return noSpaceWriteErr(s.err)
	case s.compactionErr != nil:
		return base.NoSpaceError("lsm: out of space: compactions wait for space and retry", s.compactionErr)
	}
	return nil
}

// noSpaceWriteErr is the error a write gets while the DB is out of space.
func noSpaceWriteErr(cause error) error {
	return base.NoSpaceError("lsm: out of space: writes fail until a background retry succeeds", cause)
}

// writeErrLocked returns the error writes fail with now, or nil. d.mu is
// held.
func (d *DB) writeErrLocked() error {
	if d.mu.bgErr != nil {
		return d.mu.bgErr
	}
	if err := d.mu.space.err; err != nil {
		return noSpaceWriteErr(err)
	}
	return nil
}

// failWAL records the failure of a write or sync of WAL w.
func (d *DB) failWAL(w *wal.Writer, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if vfs.IsNoSpace(err) && d.mu.bgErr == nil {
		if w != d.mu.wal {
			// The recovery loop already sealed that WAL's memtable (and
			// waits for this writer before flushing it).
			return
		}
		d.mu.space.walBroken = true
	}
	d.failLocked(err)
}

// noSpaceLocked records an out-of-space failure of a flush, a WAL or the
// manifest and starts the recovery loop. d.mu is held.
func (d *DB) noSpaceLocked(err error) {
	d.metrics.noSpaceErrors.Add(1)
	s := &d.mu.space
	if s.err == nil {
		s.err = err
		d.opts.Logger.Warn("lsm: out of space; writes fail until a background retry succeeds", "err", err)
	}
	d.wakeWaitersLocked()
	if !s.recovering && !d.mu.closed {
		s.recovering = true
		d.bgWG.Add(1)
		go d.recoveryLoop()
	}
}

// recoveryLoop retries, with backoff, until the DB takes writes again, a
// sticky error replaces the out-of-space one, or the DB closes.
func (d *DB) recoveryLoop() {
	defer d.bgWG.Done()
	delay := d.opts.NoSpaceRetryInterval
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(delay)
		select {
		case <-d.bgCtx.Done():
			t.Stop()
			d.mu.Lock()
			d.mu.space.recovering = false
			d.mu.Unlock()
			return
		case <-t.C:
		}
		err := d.resume()
		d.mu.Lock()
		switch {
		case err == nil && d.mu.space.err == nil:
			d.mu.space.recovering = false
			d.mu.Unlock()
			return
		case err != nil && !vfs.IsNoSpace(err) && !errors.Is(err, ErrClosed):
			d.failLocked(errors.Wrap(err, "lsm: recovering from out of space"))
		}
		if d.mu.closed || d.mu.bgErr != nil {
			d.mu.space.recovering = false
			d.mu.Unlock()
			return
		}
		delay = min(2*delay, d.opts.NoSpaceRetryMaxInterval)
		d.metrics.noSpaceRetries.Add(1)
		if attempt&(attempt-1) == 0 || attempt%100 == 0 {
			// Attempts 1, 2, 4, 8, ... and every 100th: a disk that stays
			// full for hours does not flood the log.
			d.opts.Logger.Warn("lsm: still out of space; retrying", "attempt", attempt, "in", delay, "err", err)
		}
		d.mu.Unlock()
	}
}

// resume is one recovery attempt: seal the memtable of a failed WAL,
// flush every immutable memtable, write a manifest edit, create a WAL,
// and take writes again. It returns nil when writes are taken again.
func (d *DB) resume() error {
	d.commitMu.Lock()
	d.mu.Lock()
	if err := d.checkOpenLocked("recovery"); err != nil {
		d.mu.Unlock()
		d.commitMu.Unlock()
		return err
	}
	if d.mu.bgErr != nil {
		err := d.mu.bgErr
		d.mu.Unlock()
		d.commitMu.Unlock()
		return err
	}
	if d.mu.space.walBroken {
		// Seal the memtable of the failed WAL, even empty: its flush
		// records the log number of the next WAL, which makes the failed
		// one obsolete. That WAL is created only after the flush, so the
		// failed one, whose tail may be torn, stays the newest until then.
		old := d.mu.wal
		d.mu.imm = append(d.mu.imm, d.mu.mem)
		d.mu.mem = d.newMemTable(d.opts.WriteBufferSize, d.mu.versions.NextFileNum())
		d.mu.wal = nil
		d.mu.space.walBroken = false
		d.updateReadStateLocked()
		if old != nil {
			d.mu.Unlock()
			// Its error is the failure being recovered from (or ErrClosed,
			// if a failed switch closed it already).
			_ = old.Close()
			d.metrics.retiredWAL(old)
			d.mu.Lock()
		}
	}
	d.commitMu.Unlock()

	// Flush as the flush job (flushLoop stops on the error).
	for d.mu.flushing {
		d.mu.cond.Wait()
	}
	d.mu.flushing = true
	err := d.resumeFlushLocked()
	d.mu.flushing = false
	d.mu.cond.Broadcast()
	if err != nil {
		d.mu.Unlock()
		return err
	}
	if d.mu.space.walBroken {
		// A writer of the old WAL failed after the seal: go again.
		d.mu.Unlock()
		return base.NoSpaceError("lsm: a WAL failed during recovery", errors.New("retrying"))
	}
	d.mu.space.err = nil
	d.metrics.noSpaceRecoveries.Add(1)
	d.opts.Logger.Info("lsm: recovered from out of space; writes are taken again")
	d.mu.cond.Broadcast()
	d.maybeScheduleFlushLocked()
	d.maybeScheduleCompactionLocked()
	d.mu.Unlock()
	return nil
}

// resumeFlushLocked flushes every immutable memtable, then writes a
// manifest edit if no flush did (so that a failed manifest is replaced),
// removes orphaned tables and creates the WAL if the mutable memtable has
// none. d.mu is held and d.mu.flushing set; d.mu is released around I/O.
func (d *DB) resumeFlushLocked() error {
	flushed := false
	for len(d.mu.imm) > 0 {
		if d.mu.closed {
			return errors.Wrap(ErrClosed, "lsm: recovery")
		}
		m := d.mu.imm[0]
		d.mu.Unlock()
		err := d.flushMemTable(m)
		d.mu.Lock()
		if err != nil {
			return err
		}
		flushed = true
	}
	if !flushed {
		if err := d.mu.versions.LogAndApply(&manifest.VersionEdit{}); err != nil {
			return err
		}
	}
	d.removeOrphansLocked()
	if d.mu.wal == nil {
		num := d.mu.mem.walNum
		d.mu.Unlock()
		w, err := d.createWAL(num)
		d.mu.Lock()
		if err != nil {
			return err
		}
		d.mu.wal = w
	}
	return nil
}

// removeOrphansLocked removes the tables of compactions whose manifest
// edit failed for lack of space. Call it after a successful LogAndApply:
// that one rotated the manifest, so the failed edit can no longer be
// recovered. d.mu is held.
func (d *DB) removeOrphansLocked() {
	for _, num := range d.mu.space.orphans {
		d.removeFile(manifest.FilePath(d.dir, manifest.FileKindTable, num))
	}
	d.mu.space.orphans = nil
}

// compactionNoSpaceLocked pauses background compactions after one failed
// for lack of space, doubling the pause while they keep failing. d.mu is
// held.
func (d *DB) compactionNoSpaceLocked(err error) {
	d.metrics.noSpaceErrors.Add(1)
	s := &d.mu.space
	if s.compactionErr == nil {
		s.compactionDelay = d.opts.NoSpaceRetryInterval
		d.opts.Logger.Warn("lsm: a compaction failed for lack of space; compactions pause and retry", "err", err)
	} else {
		s.compactionDelay = min(2*s.compactionDelay, d.opts.NoSpaceRetryMaxInterval)
	}
	s.compactionErr = err
	s.compactionRetryAt = time.Now().Add(s.compactionDelay)
	if s.compactionTimer != nil {
		s.compactionTimer.Stop()
	}
	s.compactionTimer = time.AfterFunc(s.compactionDelay, func() {
		d.mu.Lock()
		d.maybeScheduleCompactionLocked()
		d.mu.Unlock()
	})
	d.mu.cond.Broadcast()
}

// compactionsPausedLocked reports whether compactions wait for space.
// d.mu is held.
func (d *DB) compactionsPausedLocked() bool {
	s := &d.mu.space
	return s.compactionErr != nil && time.Now().Before(s.compactionRetryAt)
}

// wakeWaitersLocked wakes everyone waiting on the DB's state: writers,
// Flush, and publishers (which wait on another lock, taken before d.mu,
// so they are woken from outside it). d.mu is held.
func (d *DB) wakeWaitersLocked() {
	d.mu.cond.Broadcast()
	go func() {
		d.publishMu.Lock()
		d.published.Broadcast()
		d.publishMu.Unlock()
	}()
}

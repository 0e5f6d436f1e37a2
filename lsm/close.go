package lsm

import (
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Close cancels manual and background compactions and waits for them and
// for a running flush, syncs and closes the WAL, and closes every file.
// Writes acknowledged before Close are durable (synced writes) or in the
// WAL (unsynced). Every call after Close returns an error marked ErrClosed.
// Close works in every state: while writes are refused (a sticky failure,
// or one for lack of space still being retried) it stops the retries,
// closes everything and returns that failure.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		return errors.Wrap(ErrClosed, "lsm: Close")
	}
	d.mu.closed = true
	d.closedFlag.Store(true)
	d.mu.cond.Broadcast()
	if t := d.mu.space.compactionTimer; t != nil {
		t.Stop()
	}
	d.stopIdleCompactionLocked()
	d.mu.Unlock()

	d.bgCancel()
	d.bgWG.Wait()

	// Holding commitMu, no new batch can enqueue. Batches already enqueued
	// may still be waiting on the WAL or publishing: closing the WAL writes
	// and syncs them, and their Wait still succeeds after the close.
	d.commitMu.Lock()
	defer d.commitMu.Unlock()
	d.publishMu.Lock()
	d.published.Broadcast()
	d.publishMu.Unlock()

	d.mu.Lock()
	// A failure writes still wait on is reported, not hidden: what it kept
	// from being flushed is in the WALs, replayed at the next open.
	err := d.writeErrLocked()
	if err != nil {
		err = errors.Wrap(err, "lsm: Close: closing with writes stopped by a failure")
	}
	if d.mu.wal != nil {
		if werr := d.mu.wal.Close(); err == nil {
			err = werr
		}
	}
	d.mu.Unlock()
	if d.mu.versions != nil {
		if cerr := d.mu.versions.Close(); err == nil {
			err = cerr
		}
	}
	d.tableCache.close()
	if d.ownsCache {
		// Every table is closed, so every block has left the cache: what
		// its allocator still holds is referenced by a handle nobody
		// released (an iterator left open, or a missing Release). That
		// memory is freed when the handle is released; invariants builds
		// report it.
		if cerr := d.cache.Close(); cerr != nil && base.InvariantsEnabled && err == nil {
			err = errors.Wrap(cerr, "lsm: Close")
		}
	}
	if d.lock != nil {
		if cerr := d.lock.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

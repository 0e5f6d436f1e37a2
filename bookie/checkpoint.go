package bookie

import (
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/cockroachdb/errors"
)

// Checkpoint makes every entry added before it durable and indexed
// (upstream's SingleDirectoryDbLedgerStorage.checkpoint/flush): it swaps
// the write caches and writes the one it swapped out. In order:
//
//  1. If the ledgers of the entries include one deleted and written
//     again whose old locations are not purged yet, purge first, so that
//     the purge cannot remove the new locations.
//  2. Append the entries to the entry log in (ledger, entry) order.
//  3. Fsync the entry log (flush-entrylog).
//  4. Write the ledgers index's changes, synced (flush-ledger-index):
//     every ledger with a location has its record.
//  5. Write the locations, synced (flush-locations-index). The index
//     never names entry-log bytes a crash could lose.
//  6. Empty the flushed cache.
//
// A checkpoint that fails keeps its cache and what it did: the next one
// resumes it before swapping, writing again only the entries no
// successful entry-log Flush covered (entries written twice are harmless:
// the index names the later copy), then the index steps. So retries on a
// full disk do not append the cache to the entry logs again and again.
// The background worker retries failed checkpoints with backoff
// (CheckpointRetryInterval doubling up to CheckpointRetryMaxInterval),
// not at every request. Whether or not there was anything to write, a
// purge of the deleted ledgers is queued after it, on a background worker.
func (d *DirStorage) Checkpoint() error {
	if err := d.enter("Checkpoint"); err != nil {
		return err
	}
	defer d.exit()
	return d.checkpoint()
}

func (d *DirStorage) checkpoint() error {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	defer d.requestPurge()
	// The source's position before the swap: whatever it holds before
	// the position is in one of the caches by now, and this checkpoint
	// writes both (upstream takes it before its swap too).
	taken := d.ckpt.take()
	err := d.checkpointLocked()
	d.noteCheckpointLocked(err)
	if err == nil {
		d.ckpt.done(d.index, taken)
	}
	return err
}

// checkpointLocked is checkpoint with d.flushMu held.
func (d *DirStorage) checkpointLocked() error {
	// A failed checkpoint left its cache: finish it first.
	if !d.flushCache.isEmpty() {
		if err := d.flushCacheLocked(); err != nil {
			return err
		}
	}
	// (Its ledgers may all have been deleted since: nothing to resume.)
	d.pending = nil
	d.cacheMu.Lock()
	swap := !d.writeCache.isEmpty()
	if swap {
		d.writeCache, d.flushCache = d.flushCache, d.writeCache
		close(d.roomCh)
		d.roomCh = make(chan struct{})
	} else {
		// Nothing was added since the last checkpoint: the caches give
		// the chunks of their last fills back.
		d.writeCache.release()
		d.flushCache.release()
	}
	d.cacheMu.Unlock()
	if !swap {
		// Nothing to write but ledger changes (a fence, a key).
		start := time.Now()
		err := d.ledgers.flush()
		d.stats.flushLedgerIdx.Done(err == nil, start)
		if err == nil {
			d.stats.lastCheckpointNanos.Store(time.Now().UnixNano())
		}
		return err
	}
	return d.flushCacheLocked()
}

// pendingCheckpoint is what a checkpoint of d.flushCache has done so
// far. A checkpoint that fails keeps it, so that the next one retries only
// what failed: entries whose records a successful entry-log Flush covered
// are not written again (on a full disk, rewriting the whole cache on each
// retry would fill the disk again), and only the index steps run.
type pendingCheckpoint struct {
	// entries are the cache's entries in (ledger, entry) order; locs[i]
	// is entries[i]'s location, for i < written.
	entries []cachedEntry
	locs    []entrylocation.EntryLocation
	written int
	// durable entries (a prefix of the written ones) are covered by a
	// successful entry-log Flush. Records written after it are written
	// again after a failure: the log that failed is abandoned, and what it
	// held past its last successful sync may be lost.
	durable int
	bytes   int64 // payload bytes of the entries
}

// flushCacheLocked writes d.flushCache out and empties it (steps 1 to 6
// of Checkpoint), resuming the failed checkpoint of the same cache if
// there is one. d.flushMu is held.
func (d *DirStorage) flushCacheLocked() (err error) {
	start := time.Now()
	defer func() {
		d.stats.flush.Done(err == nil, start)
		if err != nil {
			d.log.Warn("checkpoint failed; its entries stay cached and the next checkpoint retries what failed", "err", err)
		}
	}()
	c := d.flushCache
	if d.ledgers.anyPurgePending(c.ledgerIDs()) {
		if err := d.purgeLocked(); err != nil {
			return errors.Wrap(err, "bookie: checkpoint: purging deleted ledgers written again")
		}
	}
	p := d.pending
	if p == nil {
		entries := c.sortedEntries()
		p = &pendingCheckpoint{entries: entries, locs: make([]entrylocation.EntryLocation, len(entries))}
		for _, e := range entries {
			p.bytes += int64(len(e.payload))
		}
		d.pending = p
	}
	// A ledger deleted since the snapshot (or since the failed attempt)
	// has left the cache: drop its entries (a deletion from here on is
	// purged after this checkpoint).
	p.keepLedgers(c.ledgerIDs())

	for ; p.written < len(p.entries); p.written++ {
		e := p.entries[p.written]
		loc, err := d.entryLog.AddEntry(e.ledgerID, e.entryID, e.payload)
		if err != nil {
			p.written = p.durable
			return errors.Wrap(err, "bookie: checkpoint")
		}
		p.locs[p.written] = entrylocation.EntryLocation{LedgerID: e.ledgerID, EntryID: e.entryID, Location: loc}
	}
	if p.durable < p.written {
		step := time.Now()
		err = d.entryLog.Flush()
		d.stats.flushEntryLog.Done(err == nil, step)
		if err != nil {
			p.written = p.durable
			return errors.Wrap(err, "bookie: checkpoint")
		}
		p.durable = p.written
	}
	if h := d.hooks.Load(); h != nil && h.afterEntryLogFlush != nil {
		if err := h.afterEntryLogFlush(); err != nil {
			return err
		}
	}
	step := time.Now()
	err = d.ledgers.flush()
	d.stats.flushLedgerIdx.Done(err == nil, step)
	if err != nil {
		return errors.Wrap(err, "bookie: checkpoint")
	}
	step = time.Now()
	err = d.locations.UpdateLocations(p.locs[:p.written])
	d.stats.flushLocationsIndex.Done(err == nil, step)
	if err != nil {
		return errors.Wrap(err, "bookie: checkpoint")
	}
	// Copies of rewritten entries in the read cache are stale now.
	d.readCache.invalidate(p.entries)
	c.clear()
	d.pending = nil
	d.stats.flushBytes.Add(p.bytes)
	d.stats.flushSize.AddValue(true, p.bytes)
	d.stats.flushEntries.Add(int64(len(p.entries)))
	d.stats.lastCheckpointNanos.Store(time.Now().UnixNano())
	return nil
}

// keepLedgers drops the entries (and their locations) of ledgers not in
// ledgerIDs, keeping the order and the written and durable counts
// consistent.
func (p *pendingCheckpoint) keepLedgers(ledgerIDs []int64) {
	keep := make(map[int64]struct{}, len(ledgerIDs))
	for _, id := range ledgerIDs {
		keep[id] = struct{}{}
	}
	n, written, durable := 0, 0, 0
	for i, e := range p.entries {
		if _, ok := keep[e.ledgerID]; !ok {
			p.bytes -= int64(len(e.payload))
			continue
		}
		p.entries[n], p.locs[n] = e, p.locs[i]
		if i < p.written {
			written++
		}
		if i < p.durable {
			durable++
		}
		n++
	}
	clear(p.entries[n:])
	p.entries, p.locs = p.entries[:n], p.locs[:n]
	p.written, p.durable = written, durable
}

// purgeLocked removes the locations of the ledgers deleted so far from the
// index (one range deletion each, one synced batch) and records it in the
// ledgers index. d.flushMu is held: no checkpoint writes locations
// meanwhile.
func (d *DirStorage) purgeLocked() error {
	pending := d.ledgers.pendingPurge()
	if len(pending) == 0 {
		return nil
	}
	if err := d.locations.RemoveOffsetFromDeletedLedgers(); err != nil {
		d.stats.purgeFailures.Add(1)
		return err
	}
	ledgers := d.purgeableLocked(pending)
	d.holdPurged(pending, ledgers)
	if len(ledgers) == 0 {
		return nil
	}
	if err := d.ledgers.purged(ledgers, d.entryLog.Position()); err != nil {
		d.stats.purgeFailures.Add(1)
		return err
	}
	for _, id := range ledgers {
		d.held.Delete(id)
	}
	d.stats.purges.Add(1)
	d.stats.purgedLedgers.Add(int64(len(ledgers)))
	return nil
}

// purgeableLocked returns the ledgers of pending whose records a purge may
// remove: with a CheckpointSource, a deleted ledger's record (which says
// it is deleted) stays until a checkpoint taken after the deletion is
// reported complete, because a replay of the source from an earlier
// position meets the ledger's records and must know to skip them (a
// ledger without a record looks like one created after the position).
// Its locations are purged all the same. A ledger written again after its
// deletion always is: its old locations must go before its new ones are
// written. d.flushMu is held.
func (d *DirStorage) purgeableLocked(pending []int64) []int64 {
	if d.ckpt == nil {
		return pending
	}
	out := pending[:0:0]
	d.deletedMu.Lock()
	defer d.deletedMu.Unlock()
	for _, id := range pending {
		// A ledger deleted before the open is not in deletedAt: its
		// deletion is covered by the first report (0).
		if exists, _ := d.ledgers.state(id); !exists && !d.ckpt.covers(d.deletedAt[id]) {
			continue
		}
		delete(d.deletedAt, id)
		out = append(out, id)
	}
	return out
}

// holdPurged records the deleted ledgers of pending whose locations were
// just purged but whose records stay (those not in purgeable), so that the
// garbage collector takes them for dead: their records are kept for a
// replay's sake, not because the index may name their entries.
func (d *DirStorage) holdPurged(pending, purgeable []int64) {
	if len(pending) == len(purgeable) {
		return
	}
	recorded := make(map[int64]bool, len(purgeable))
	for _, id := range purgeable {
		recorded[id] = true
	}
	for _, id := range pending {
		if exists, _ := d.ledgers.state(id); recorded[id] || exists {
			continue
		}
		if _, was := d.held.LoadOrStore(id, struct{}{}); !was {
			d.heldEpoch.Add(1)
		}
	}
}

// Purge purges the deleted ledgers' locations now (the garbage
// collector's retry; checkpoints queue one after themselves).
func (d *DirStorage) Purge() error {
	if err := d.enter("Purge"); err != nil {
		return err
	}
	defer d.exit()
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	return d.purgeLocked()
}

// requestFlush wakes the checkpoint worker (a full write cache).
func (d *DirStorage) requestFlush() {
	select {
	case d.flushReq <- struct{}{}:
	default:
	}
}

// requestPurge wakes the purge worker.
func (d *DirStorage) requestPurge() {
	select {
	case d.purgeReq <- struct{}{}:
	default:
	}
}

// flushLoop checkpoints every FlushInterval and when the write cache is
// full, until stop. After a failed checkpoint it waits for the retry time
// first: requests meanwhile (every writer waiting for room sends one)
// coalesce into one retry.
//
// The time it spends in checkpoints a full write cache asked for is
// upstream's db-storage-thread-time: its db-storage executor runs only
// those (the periodic ones run on its sync thread).
func (d *DirStorage) flushLoop() {
	d.runEvery(d.opts.FlushInterval, d.flushReq, func(requested bool) {
		if wait := time.Until(time.Unix(0, d.retryAt.Load())); wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-d.stop:
				return
			case <-t.C:
			}
		}
		start := time.Now()
		_ = d.checkpoint() // logged; the next one retries
		if requested {
			d.stats.dbStorageThreadNanos.Add(int64(time.Since(start)))
		}
	})
}

// noteCheckpointLocked records a checkpoint's outcome: after a failure
// the worker's next retry waits CheckpointRetryInterval, doubled for each
// failure in a row up to CheckpointRetryMaxInterval. d.flushMu is held.
func (d *DirStorage) noteCheckpointLocked(err error) {
	if err == nil {
		if d.failures > 0 {
			d.log.Info("checkpoint succeeded after failing", "failures", d.failures)
		}
		d.failures, d.lastErr = 0, nil
		d.retryAt.Store(0)
		d.stats.checkpointFailures.Store(0)
		d.checkpointFailed.Store(false)
		d.clearNoSpace()
		return
	}
	d.checkpointFailed.Store(true)
	d.ro.noteWriteError(d.ledgerDir, err)
	d.failures++
	d.lastErr = err
	d.stats.checkpointFailures.Store(int64(d.failures))
	delay := d.opts.CheckpointRetryInterval
	for i := 1; i < d.failures && delay < d.opts.CheckpointRetryMaxInterval; i++ {
		delay *= 2
	}
	delay = min(delay, d.opts.CheckpointRetryMaxInterval)
	d.retryAt.Store(time.Now().Add(delay).UnixNano())
}

// CheckpointError returns the error of the last checkpoint if it failed,
// nil if it succeeded (or none ran). Errors.Is(err, lsm.ErrNoSpace) or
// syscall.ENOSPC tells a full disk, which retries fix once space returns.
func (d *DirStorage) CheckpointError() error {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	return d.lastErr
}

// purgeLoop purges after each checkpoint, and every GCWaitTime (the
// garbage collector: a purge that failed is retried), until stop.
func (d *DirStorage) purgeLoop() {
	d.runEvery(d.opts.GCWaitTime, d.purgeReq, func(bool) {
		d.flushMu.Lock()
		err := d.purgeLocked()
		d.flushMu.Unlock()
		if err != nil {
			d.log.Warn("Failed to cleanup db indexes; retrying at the next checkpoint or garbage collection", "err", err)
		}
	})
}

// runEvery is a background worker: it runs work every interval (never
// when interval <= 0) and on each request (work's argument says which),
// until stop.
func (d *DirStorage) runEvery(interval time.Duration, requests <-chan struct{}, work func(requested bool)) {
	defer d.bg.Done()
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		requested := false
		select {
		case <-d.stop:
			return
		case <-tick:
		case <-requests:
			requested = true
		}
		work(requested)
	}
}

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
// A checkpoint that fails keeps its cache: the next one writes it again
// before swapping (entries written twice are harmless: the index names
// the later copy). Whether or not there was anything to write, a purge of
// the deleted ledgers is queued after it, on a background worker.
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

	// A failed checkpoint left its cache: finish it first.
	if !d.flushCache.isEmpty() {
		if err := d.flushCacheLocked(); err != nil {
			return err
		}
	}
	d.cacheMu.Lock()
	swap := !d.writeCache.isEmpty()
	if swap {
		d.writeCache, d.flushCache = d.flushCache, d.writeCache
		close(d.roomCh)
		d.roomCh = make(chan struct{})
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

// flushCacheLocked writes d.flushCache out and empties it (steps 1 to 6
// of Checkpoint). d.flushMu is held.
func (d *DirStorage) flushCacheLocked() (err error) {
	start := time.Now()
	defer func() {
		d.stats.flush.Done(err == nil, start)
		if err != nil {
			d.log.Warn("checkpoint failed; its entries stay cached and the next checkpoint writes them again", "err", err)
		}
	}()
	c := d.flushCache
	entries := c.sortedEntries()
	if d.ledgers.anyPurgePending(c.ledgerIDs()) {
		if err := d.purgeLocked(); err != nil {
			return errors.Wrap(err, "bookie: checkpoint: purging deleted ledgers written again")
		}
	}
	// A ledger deleted since the snapshot has left the cache: drop its
	// entries (a deletion from here on is purged after this checkpoint).
	entries = keepLedgers(entries, c.ledgerIDs())

	locs := make([]entrylocation.EntryLocation, len(entries))
	var size int64
	for i, e := range entries {
		loc, err := d.entryLog.AddEntry(e.ledgerID, e.entryID, e.payload)
		if err != nil {
			return errors.Wrap(err, "bookie: checkpoint")
		}
		locs[i] = entrylocation.EntryLocation{LedgerID: e.ledgerID, EntryID: e.entryID, Location: loc}
		size += int64(len(e.payload))
	}
	step := time.Now()
	err = d.entryLog.Flush()
	d.stats.flushEntryLog.Done(err == nil, step)
	if err != nil {
		return errors.Wrap(err, "bookie: checkpoint")
	}
	if h := d.hooks.Load(); h != nil && h.afterEntryLogFlush != nil {
		if err := h.afterEntryLogFlush(); err != nil {
			return err
		}
	}
	step = time.Now()
	err = d.ledgers.flush()
	d.stats.flushLedgerIdx.Done(err == nil, step)
	if err != nil {
		return errors.Wrap(err, "bookie: checkpoint")
	}
	step = time.Now()
	err = d.locations.UpdateLocations(locs)
	d.stats.flushLocationsIndex.Done(err == nil, step)
	if err != nil {
		return errors.Wrap(err, "bookie: checkpoint")
	}
	// Copies of rewritten entries in the read cache are stale now.
	d.readCache.invalidate(entries)
	c.clear()
	d.stats.flushBytes.Add(size)
	d.stats.flushEntries.Add(int64(len(entries)))
	d.stats.lastCheckpointNanos.Store(time.Now().UnixNano())
	return nil
}

// purgeLocked removes the locations of the ledgers deleted so far from the
// index (one range deletion each, one synced batch) and records it in the
// ledgers index. d.flushMu is held: no checkpoint writes locations
// meanwhile.
func (d *DirStorage) purgeLocked() error {
	ledgers := d.ledgers.pendingPurge()
	if len(ledgers) == 0 {
		return nil
	}
	if err := d.locations.RemoveOffsetFromDeletedLedgers(); err != nil {
		d.stats.purgeFailures.Add(1)
		return err
	}
	if err := d.ledgers.purged(ledgers, d.entryLog.Position()); err != nil {
		d.stats.purgeFailures.Add(1)
		return err
	}
	d.stats.purges.Add(1)
	d.stats.purgedLedgers.Add(int64(len(ledgers)))
	return nil
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
// full, until stop.
func (d *DirStorage) flushLoop() {
	d.runEvery(d.opts.FlushInterval, d.flushReq, func() {
		_ = d.checkpoint() // logged; the next one retries
	})
}

// purgeLoop purges after each checkpoint, and every GCWaitTime (the
// garbage collector: a purge that failed is retried), until stop.
func (d *DirStorage) purgeLoop() {
	d.runEvery(d.opts.GCWaitTime, d.purgeReq, func() {
		d.flushMu.Lock()
		err := d.purgeLocked()
		d.flushMu.Unlock()
		if err != nil {
			d.log.Warn("Failed to cleanup db indexes; retrying at the next checkpoint or garbage collection", "err", err)
		}
	})
}

// runEvery is a background worker: it runs work every interval (never
// when interval <= 0) and on each request, until stop.
func (d *DirStorage) runEvery(interval time.Duration, requests <-chan struct{}, work func()) {
	defer d.bg.Done()
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-d.stop:
			return
		case <-tick:
		case <-requests:
		}
		work()
	}
}

// keepLedgers returns the entries of the given ledgers, in place.
func keepLedgers(entries []cachedEntry, ledgerIDs []int64) []cachedEntry {
	keep := make(map[int64]struct{}, len(ledgerIDs))
	for _, id := range ledgerIDs {
		keep[id] = struct{}{}
	}
	out := entries[:0]
	for _, e := range entries {
		if _, ok := keep[e.ledgerID]; ok {
			out = append(out, e)
		}
	}
	return out
}

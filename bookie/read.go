package bookie

import (
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/cockroachdb/errors"
)

// GetEntry returns a copy of an entry's payload; entryID LastEntry (-1)
// returns the ledger's last entry. It looks in the write cache, the cache
// being flushed, the read cache, then the index and the entry log, and
// after a read from the entry log reads ahead the entries that follow in
// the log. A ledger that does not exist is an error matching ErrNoLedger;
// an absent entry, ErrNoEntry.
func (d *DirStorage) GetEntry(ledgerID, entryID int64) ([]byte, error) {
	start := d.stats.readEntry.Start()
	var payload []byte
	var err error
	if entryID == LastEntry {
		_, payload, err = d.getLastEntry(ledgerID)
	} else {
		payload, err = d.getEntry(ledgerID, entryID)
	}
	d.stats.readEntry.Done(err == nil, start)
	return payload, err
}

// GetLastEntry returns a ledger's greatest entry id and a copy of its
// payload (upstream's getLastEntry, used for LAC reads, fencing and
// recovery).
func (d *DirStorage) GetLastEntry(ledgerID int64) (int64, []byte, error) {
	start := d.stats.readEntry.Start()
	entryID, payload, err := d.getLastEntry(ledgerID)
	d.stats.readEntry.Done(err == nil, start)
	return entryID, payload, err
}

func (d *DirStorage) getEntry(ledgerID, entryID int64) ([]byte, error) {
	if err := d.enter("GetEntry"); err != nil {
		return nil, err
	}
	defer d.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return nil, err
	}
	if entryID < 0 {
		return nil, errors.Wrapf(ErrInvalidArgument, "bookie: entry id %d of ledger %d is negative (entry ids must be >= 0; %d reads the last entry)", entryID, ledgerID, LastEntry)
	}
	if exists, _ := d.ledgers.state(ledgerID); !exists {
		return nil, noLedger(ledgerID)
	}
	return d.readEntryLocked(ledgerID, entryID)
}

// readEntryLocked reads an entry of an existing ledger; the caller is
// between enter and exit.
func (d *DirStorage) readEntryLocked(ledgerID, entryID int64) ([]byte, error) {
	d.cacheMu.RLock()
	wc, fc := d.writeCache, d.flushCache
	d.cacheMu.RUnlock()
	if p, ok := wc.get(ledgerID, entryID); ok {
		d.stats.writeCacheHits.Add(1)
		return p, nil
	}
	if p, ok := fc.get(ledgerID, entryID); ok {
		d.stats.writeCacheHits.Add(1)
		return p, nil
	}
	d.stats.writeCacheMisses.Add(1)
	// A ledger deleted and written again has only locations of its
	// earlier life in the index until the purge: do not read them. Asked
	// after the caches: a checkpoint that moved the entry from a cache to
	// the index purged before.
	if _, purgePending := d.ledgers.state(ledgerID); purgePending {
		return nil, noEntry(ledgerID, entryID)
	}
	if p, ok := d.readCache.get(ledgerID, entryID); ok {
		d.stats.readCacheHits.Add(1)
		return p, nil
	}
	d.stats.readCacheMisses.Add(1)

	epoch := d.readCache.currentEpoch()
	t := time.Now()
	location, err := d.locations.GetLocation(ledgerID, entryID)
	d.stats.readLocationsIndexNanos.Add(int64(time.Since(t)))
	if err != nil {
		if isCorruption(err) {
			return nil, d.readCorruption(err, ledgerID, entryID, 0, false)
		}
		return nil, err
	}
	if location == 0 {
		return nil, noEntry(ledgerID, entryID)
	}
	t = time.Now()
	payload, err := d.entryLog.ReadEntry(ledgerID, entryID, location)
	// Garbage collection moves entries and then removes their old log:
	// a read that looked the entry up before the move finds the log gone
	// and looks it up again.
	for retries := 0; err != nil && errors.Is(err, entrylog.ErrBadLocation) && retries < 3; retries++ {
		again, lerr := d.locations.GetLocation(ledgerID, entryID)
		if lerr != nil || again == location {
			break
		}
		if location = again; location == 0 {
			return nil, noEntry(ledgerID, entryID)
		}
		payload, err = d.entryLog.ReadEntry(ledgerID, entryID, location)
	}
	d.stats.readEntryLogNanos.Add(int64(time.Since(t)))
	if err != nil {
		if isCorruption(err) {
			return nil, d.readCorruption(err, ledgerID, entryID, location, true)
		}
		return nil, err
	}
	d.readCache.putIf(epoch, ledgerID, entryID, payload)
	d.readAhead(ledgerID, location, epoch)
	return payload, nil
}

// readAhead reads the records after location in its entry log into the
// read cache while they belong to the same ledger, up to the read-ahead
// limits (upstream's fillReadAheadCache). Unlike upstream it keeps only
// records that are their entry's current copy in the index: an entry
// written again later has a stale copy here. Errors only end it.
func (d *DirStorage) readAhead(ledgerID, location int64, epoch uint64) {
	limit := d.opts.ReadAheadBatchSize
	if limit <= 0 || d.readCache.segmentSize == 0 {
		return
	}
	maxBytes := d.opts.ReadAheadBatchBytes
	t := time.Now()
	var count int
	var bytes int64
	err := d.entryLog.ReadAfter(location, func(rec *entrylog.Record) bool {
		if rec.LedgerID != ledgerID || count >= limit || maxBytes > 0 && bytes >= maxBytes {
			return false
		}
		d.stats.readAheadIndexLookups.Add(1)
		if cur, err := d.locations.GetLocation(rec.LedgerID, rec.EntryID); err != nil || cur != rec.Location {
			return err == nil
		}
		d.readCache.putIf(epoch, rec.LedgerID, rec.EntryID, rec.Payload)
		count++
		bytes += int64(len(rec.Payload))
		return true
	})
	if err != nil {
		d.log.Debug("read-ahead stopped", "ledgerId", ledgerID, "location", entrylog.FormatLocation(location), "err", err)
	}
	d.stats.readAheadBatches.Add(1)
	d.stats.readAheadEntries.Add(int64(count))
	d.stats.readAheadBytes.Add(bytes)
	d.stats.readAheadBatchCount.AddValue(true, int64(count))
	d.stats.readAheadBatchSize.AddValue(true, bytes)
	d.stats.readAheadNanos.Add(int64(time.Since(t)))
}

func (d *DirStorage) getLastEntry(ledgerID int64) (int64, []byte, error) {
	if err := d.enter("GetLastEntry"); err != nil {
		return 0, nil, err
	}
	defer d.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return 0, nil, err
	}
	if exists, _ := d.ledgers.state(ledgerID); !exists {
		return 0, nil, noLedger(ledgerID)
	}
	d.cacheMu.RLock()
	wc, fc := d.writeCache, d.flushCache
	d.cacheMu.RUnlock()
	last, payload, found := wc.lastEntry(ledgerID)
	if e, p, ok := fc.lastEntry(ledgerID); ok && (!found || e > last) {
		last, payload, found = e, p, true
	}
	if _, purgePending := d.ledgers.state(ledgerID); !purgePending {
		// The index too: an entry written out of order may sit in a
		// cache below the ledger's last entry.
		e, err := d.locations.GetLastEntryInLedger(ledgerID)
		switch {
		case errors.Is(err, ErrNoEntry):
		case err != nil:
			return 0, nil, err
		case !found || e > last:
			p, err := d.readEntryLocked(ledgerID, e)
			if err != nil {
				return 0, nil, err
			}
			last, payload, found = e, p, true
		}
	}
	if !found {
		return 0, nil, noEntry(ledgerID, LastEntry)
	}
	return last, payload, nil
}

package bookie

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// compactionMarkerName is the file that names the log being compacted.
const compactionMarkerName = ondisk.CompactionMarkerName

// Compaction copies in chunks: each chunk is copied, made durable and
// indexed while the checkpoint lock is held, so a checkpoint waits for
// at most one chunk.
const (
	compactionChunkEntries = 1000
	compactionChunkBytes   = 4 << 20
)

// GC steps at which a test hook may stop a compaction (testHooks.gcStep).
const (
	gcStepMarked   = "marked"   // the marker is written
	gcStepCopied   = "copied"   // a chunk is appended, not yet synced
	gcStepSynced   = "synced"   // a chunk is synced, not yet indexed
	gcStepIndexed  = "indexed"  // a chunk's locations are written
	gcStepPurged   = "purged"   // the purge before the removal is done
	gcStepRemoved  = "removed"  // the old log is removed, the marker not yet
	gcStepFinished = "finished" // the marker is removed
)

// compactLogsLocked compacts the logs whose usage is below threshold,
// least used first, until maxTime (0: no bound) (upstream's
// doCompactEntryLogs).
func (d *DirStorage) compactLogsLocked(threshold float64, maxTime time.Duration, kind string, res *GCResult, progress func(GCProgress)) error {
	type candidate struct {
		id    int64
		usage float64
	}
	d.gc.recordCompactionStart(d.gc.meta, d.opts.gc.targetSize)
	total, compacted := len(d.gc.meta), 0
	var cands []candidate
	for id, u := range d.gc.meta {
		if usage := u.usageFor(d.opts.gc.targetSize); usage < threshold {
			cands = append(cands, candidate{id, usage})
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.usage, b.usage), cmp.Compare(a.id, b.id))
	})
	var deadline time.Time
	if maxTime > 0 {
		deadline = time.Now().Add(maxTime)
	}
	th := &throttler{rate: d.opts.gc.rate}
	for i, c := range cands {
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			d.log.Info("compaction stopped at its time bound", "kind", kind, "maxTime", maxTime, "left", len(cands)-i)
			break
		}
		u := d.gc.meta[c.id]
		done, err := d.compactLog(c.id, th, deadline)
		if err != nil {
			return errors.Wrapf(err, "bookie: %s compaction of entry log %#x", kind, c.id)
		}
		if !done {
			continue
		}
		reclaimed := u.size - u.remaining
		compacted++
		d.forgetLocked(c.id, u)
		res.CompactedLogs++
		res.ReclaimedCompactionBytes += reclaimed
		d.gc.reclaimedCompaction.Add(reclaimed)
		if progress != nil {
			progress(GCProgress{LogID: c.id, Done: i + 1, Total: len(cands), ReclaimedBytes: res.ReclaimedDeletionBytes + res.ReclaimedCompactionBytes, CompactionActive: kind})
		}
	}
	d.gc.recordCompactionEnd(compacted, total)
	return nil
}

// compactLog rewrites the live entries of rotated log id at the end of
// the log being written and removes it (upstream's EntryLogCompactor,
// which copies into the current log too). In order:
//
//  1. Write the marker naming id (synced): a crash from here on makes
//     the next open finish the compaction.
//  2. For each chunk of the log's records, holding the checkpoint lock:
//     keep the records that are their entry's current copy in the index
//     (the ledger exists and the index names this very location), append
//     them to the log being written, sync it, write their new locations
//     (one synced batch). A crash loses no entry: until the batch lands
//     the index names the old copy, which is still there.
//  3. Purge the ledgers deleted meanwhile, so that no location names the
//     old log, and remove it (the directory synced), unless a failed
//     checkpoint waiting to be resumed wrote records there: it will
//     index them where they are.
//  4. Remove the marker.
//
// It reports false when it stopped early (the time bound, Close, a log
// whose tail does not decode): the log stays, with fewer live entries.
func (d *DirStorage) compactLog(id int64, th *throttler, deadline time.Time) (bool, error) {
	if cur := d.entryLog.CurrentLogID(); cur == id {
		return false, errors.Wrapf(ErrInvalidArgument, "bookie: entry log %#x is being written", id)
	}
	// A failed checkpoint waiting to be resumed may have records in this
	// log that the index does not name yet, so the scan would skip them;
	// if a checkpoint resumed it between two chunks, it would index them
	// here and the check after the scan would no longer see them pending.
	// A rotated log never gets new pending records (writes go to the
	// current log), so checking before the scan is enough.
	d.flushMu.Lock()
	inPending := d.pendingCheckpointNamesLocked(id)
	d.flushMu.Unlock()
	if inPending {
		d.log.Info("a failed checkpoint not yet resumed has records in the entry log; it is not compacted until a later cycle", "id", id)
		return false, nil
	}
	if err := d.writeCompactionMarker(id); err != nil {
		return false, err
	}
	if err := d.gcStep(gcStepMarked); err != nil {
		return false, err
	}
	var chunk []entrylog.Record
	var arena []byte
	flush := func() error {
		err := d.copyChunk(chunk)
		chunk, arena = chunk[:0], arena[:0]
		return err
	}
	stopped := false
	res, err := entrylog.Scan(d.opts.FS, d.entryLog.LogPath(id), func(rec *entrylog.Record) error {
		if d.closing.Load() || !deadline.IsZero() && !time.Now().Before(deadline) {
			stopped = true
			return errStopScan
		}
		if d.opts.gc.throttleByBytes {
			th.wait(len(rec.Payload)+entrylog.RecordOverhead, d.stop)
		} else {
			th.wait(1, d.stop)
		}
		// Scan reuses the payload's buffer: keep a copy. The arena is
		// rebuilt per chunk, so earlier slices stay valid.
		if len(arena)+len(rec.Payload) > cap(arena) {
			arena = make([]byte, 0, max(compactionChunkBytes, len(rec.Payload)))
		}
		start := len(arena)
		arena = append(arena, rec.Payload...)
		r := *rec
		r.Payload = arena[start:len(arena):len(arena)]
		chunk = append(chunk, r)
		if len(chunk) >= compactionChunkEntries || len(arena) >= compactionChunkBytes {
			return flush()
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return false, err
	}
	if len(chunk) > 0 {
		if err := flush(); err != nil {
			return false, err
		}
	}
	if stopped {
		return false, d.removeCompactionMarker()
	}
	if res.Tail != nil {
		d.log.Error("entry log has records that do not decode; compacted what precedes them and kept the log", "id", id, "validEnd", res.ValidEnd, "size", res.Size, "err", res.Tail)
		return false, d.removeCompactionMarker()
	}
	d.flushMu.Lock()
	err = d.purgeLocked()
	inPending = d.pendingCheckpointNamesLocked(id)
	d.flushMu.Unlock()
	if err != nil {
		return false, errors.Wrap(err, "bookie: purging before removing a compacted entry log")
	}
	if inPending {
		d.log.Info("a failed checkpoint not yet resumed has records in the compacted entry log; it stays until a later cycle", "id", id)
		return false, d.removeCompactionMarker()
	}
	if err := d.gcStep(gcStepPurged); err != nil {
		return false, err
	}
	if err := d.entryLog.RemoveLog(id); err != nil {
		return false, err
	}
	if err := d.gcStep(gcStepRemoved); err != nil {
		return false, err
	}
	if err := d.removeCompactionMarker(); err != nil {
		return false, err
	}
	return true, d.gcStep(gcStepFinished)
}

var errStopScan = errors.New("compaction stopped")

// pendingCheckpointNamesLocked reports whether the failed checkpoint
// waiting to be resumed wrote records to log id: it will index them as
// they are, so the log must stay (its records are not current in the
// index yet, so compaction did not copy them). d.flushMu is held.
func (d *DirStorage) pendingCheckpointNamesLocked(id int64) bool {
	p := d.pending
	if p == nil {
		return false
	}
	for _, l := range p.locs[:p.written] {
		if entrylog.LocationLogID(l.Location) == id {
			return true
		}
	}
	return false
}

// copyChunk writes the current records of a chunk to the log being
// written and repoints the index at them (step 2 of compactLog).
func (d *DirStorage) copyChunk(chunk []entrylog.Record) error {
	if len(chunk) == 0 {
		return nil
	}
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	locs := make([]entrylocation.EntryLocation, 0, len(chunk))
	for i := range chunk {
		rec := &chunk[i]
		if exists, pending := d.ledgers.state(rec.LedgerID); !exists || pending {
			continue
		}
		cur, err := d.locations.GetLocation(rec.LedgerID, rec.EntryID)
		if err != nil {
			return err
		}
		if cur != rec.Location {
			continue // a stale copy: the entry was written again
		}
		loc, err := d.entryLog.AddEntry(rec.LedgerID, rec.EntryID, rec.Payload)
		if err != nil {
			return errors.Wrap(err, "bookie: compaction")
		}
		locs = append(locs, entrylocation.EntryLocation{LedgerID: rec.LedgerID, EntryID: rec.EntryID, Location: loc})
	}
	if len(locs) == 0 {
		return nil
	}
	if err := d.gcStep(gcStepCopied); err != nil {
		return err
	}
	if err := d.entryLog.Flush(); err != nil {
		return errors.Wrap(err, "bookie: compaction")
	}
	if err := d.gcStep(gcStepSynced); err != nil {
		return err
	}
	if err := d.locations.UpdateLocations(locs); err != nil {
		return errors.Wrap(err, "bookie: compaction")
	}
	return d.gcStep(gcStepIndexed)
}

// gcStep runs the test hook of a compaction step, if any.
func (d *DirStorage) gcStep(step string) error {
	if h := d.hooks.Load(); h != nil && h.gcStep != nil {
		return h.gcStep(step)
	}
	return nil
}

// recoverCompaction finishes, at open, a compaction a crash interrupted:
// the marker names a log that still exists, so it is compacted again
// (what was already copied and indexed is no longer current there and is
// not copied twice); a marker whose log is gone is removed.
func (d *DirStorage) recoverCompaction() error {
	id, ok, err := d.readCompactionMarker()
	if err != nil || !ok {
		return err
	}
	if _, err := d.opts.FS.Stat(d.entryLog.LogPath(id)); errors.Is(err, os.ErrNotExist) {
		return d.removeCompactionMarker()
	} else if err != nil {
		return errors.Wrapf(err, "bookie: examining entry log %#x named by %s", id, compactionMarkerName)
	}
	d.log.Info("finishing the compaction of an entry log that a crash interrupted", "id", id)
	d.flushMu.Lock()
	err = d.purgeLocked()
	d.flushMu.Unlock()
	if err != nil {
		return err
	}
	if _, err := d.compactLog(id, &throttler{}, time.Time{}); err != nil {
		return errors.Wrapf(err, "bookie: finishing the compaction of entry log %#x", id)
	}
	return nil
}

func (d *DirStorage) markerPath() string { return filepath.Join(d.ledgerDir, compactionMarkerName) }

func (d *DirStorage) writeCompactionMarker(id int64) error {
	path := d.markerPath()
	if err := vfs.ReplaceFile(d.opts.FS, path, path+".tmp", ondisk.EncodeCompactionMarker(id)); err != nil {
		return errors.Wrapf(err, "bookie: writing the compaction marker %s", path)
	}
	return nil
}

func (d *DirStorage) readCompactionMarker() (int64, bool, error) {
	return ondisk.ReadCompactionMarker(d.opts.FS, d.ledgerDir)
}

func (d *DirStorage) removeCompactionMarker() error {
	path := d.markerPath()
	if err := d.opts.FS.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Wrapf(err, "bookie: removing %s", path)
	}
	return errors.Wrap(vfs.SyncDir(d.opts.FS, filepath.Dir(path)), "bookie: removing the compaction marker")
}

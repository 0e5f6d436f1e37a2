package journal

import (
	"time"

	"github.com/cockroachdb/errors"
)

// Group commit. Adds encode their records into the batch being filled,
// under the journal's mutex, so records reach the file in the order the
// adds took it. One goroutine, the writer (upstream's journal thread),
// takes the whole batch when upstream's rules say so and writes it, with
// its padding, in one write; another, the syncer (upstream's force-write
// thread), fsyncs. While the syncer waits for one fsync the writer goes on
// writing batches, and the next fsync covers all of them: under load, N
// concurrent adds cost far fewer than N fsyncs, and an add waits for at
// most one fsync it did not join plus its own.
//
//	adds:     A1 A2 A3            A4 A5 ...   A6 A7 ...
//	writer:   write(A1..A3)       write(A4..A5) write(A6..A7)
//	syncer:         fsync ------------>        fsync ----------->
//	                A1..A3 done                A4..A7 done
//
// When the writer takes a batch (upstream's Journal.run):
//   - at once, with journalFlushWhenQueueEmpty or journalMaxGroupWaitMSec
//     <= 0: whatever is queued when the writer is free is one batch;
//   - else once its first add has waited journalMaxGroupWaitMSec, or it
//     holds more than journalBufferedWritesThreshold bytes or more than
//     journalBufferedEntriesThreshold adds (when set), or at Close;
//   - and, with journalAdaptiveGroupWrites (the default; upstream reads the
//     key and does nothing with it), once it holds as many adds as the
//     batch before it. Under a steady load the writers that wait for one
//     batch come back together for the next: once they are all in,
//     nothing more will come before the group wait ends, which would only
//     leave the disk idle (with 256 writers each waiting for its add, the
//     2 ms wait took most of each write-and-fsync cycle). A lone writer's
//     add is written at once. When fewer come, the batch waits as
//     upstream's; when more, the next batch expects more. The fsyncs stay
//     grouped either way: the syncer covers every batch written since its
//     last fsync with one.
//
// A failed write or fsync stops the journal for good (see fail): after a
// failed fsync the kernel may have dropped the dirty pages, so a retried
// fsync could report success for lost data (the "fsyncgate" reports).

// enqueue adds a record of kind to the batch being filled (kind 0: no
// record, a request that completes with the batch) and returns its
// completion.
func (j *Journal) enqueue(kind Kind, ledgerID, entryID int64, data []byte) Completion {
	size := 0
	switch kind {
	case KindEntry:
		size = 4 + entryRecordSize(len(data))
	case KindMasterKey, KindExplicitLAC:
		size = 4 + recordIDsSize + 4 + len(data)
	case KindFence:
		size = 4 + recordIDsSize
	}
	j.mu.Lock()
	for {
		if j.failed != nil {
			err := j.failed
			j.mu.Unlock()
			j.m.addEntry.Done(false, time.Now())
			return Completion{b: failedBatch(errors.Wrapf(err, "journal: %s has failed", j.root)), end: -1}
		}
		if j.closing {
			j.mu.Unlock()
			j.m.addEntry.Done(false, time.Now())
			return Completion{b: failedBatch(errors.Wrapf(ErrClosed, "journal: %s", j.root)), end: -1}
		}
		if size == 0 || len(j.buf) == 0 || len(j.buf)+size <= maxPendingBytes {
			break
		}
		j.room.Wait()
	}
	wake := j.opts.FlushWhenQueueEmpty || j.opts.MaxGroupWait == 0
	if j.cur == nil {
		j.cur, j.first = newBatch(), time.Now()
		if j.buf == nil {
			j.buf = make([]byte, 0, j.opts.WriteBufferSize)
		}
		wake = true
	}
	switch kind {
	case KindEntry:
		j.buf = appendEntryRecord(j.buf, ledgerID, entryID, data)
	case KindMasterKey:
		j.buf = appendMasterKeyRecord(j.buf, ledgerID, data)
	case KindExplicitLAC:
		j.buf = appendExplicitLACRecord(j.buf, ledgerID, data)
	case KindFence:
		j.buf = appendFenceRecord(j.buf, ledgerID)
	}
	c := Completion{b: j.cur, end: int64(len(j.buf))}
	if kind == 0 {
		j.cur.forceStarts = append(j.cur.forceStarts, j.m.since())
	} else {
		j.cur.starts = append(j.cur.starts, j.m.since())
	}
	j.m.queued.Add(1)
	j.count++
	j.stats.adds.Add(1)
	if int64(len(j.buf)) > j.opts.BufferedWritesThreshold ||
		(j.opts.BufferedEntriesThreshold > 0 && j.count > j.opts.BufferedEntriesThreshold) ||
		j.adaptiveFull() {
		wake = true
	}
	j.mu.Unlock()
	if wake {
		j.signal()
	}
	return c
}

// groupWait returns how much longer the batch being filled may wait for
// more adds; 0 means write it now. j.mu is held and j.cur is not nil.
func (j *Journal) groupWait(now time.Time) time.Duration {
	o := &j.opts
	if j.closing || o.FlushWhenQueueEmpty || o.MaxGroupWait == 0 ||
		int64(len(j.buf)) > o.BufferedWritesThreshold ||
		(o.BufferedEntriesThreshold > 0 && j.count > o.BufferedEntriesThreshold) ||
		j.adaptiveFull() {
		return 0
	}
	return max(j.first.Add(o.MaxGroupWait).Sub(now), 0)
}

// adaptiveFull reports whether adaptive group writes end the batch being
// filled: it holds as many adds as the last one. j.mu is held.
func (j *Journal) adaptiveFull() bool {
	return !j.opts.NoAdaptiveGroupWrites && j.lastBatch > 0 && j.count >= j.lastBatch
}

// countFlushReason counts why the writer takes the batch being filled
// (upstream's JOURNAL_NUM_FLUSH_* counters). j.mu is held.
func (j *Journal) countFlushReason() {
	o := &j.opts
	switch {
	case int64(len(j.buf)) > o.BufferedWritesThreshold ||
		(o.BufferedEntriesThreshold > 0 && j.count > o.BufferedEntriesThreshold):
		j.m.flushMaxOutstanding.Add(1)
	case j.closing || o.FlushWhenQueueEmpty || o.MaxGroupWait == 0:
		j.m.flushEmptyQueue.Add(1)
	case j.adaptiveFull():
		j.m.flushAdaptive.Add(1)
	default:
		j.m.flushMaxWait.Add(1)
	}
}

// writeLoop is the writer goroutine.
func (j *Journal) writeLoop() {
	defer close(j.writerDone)
	defer close(j.syncq)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	lastSync := time.Now()
	for {
		j.mu.Lock()
		if j.failed != nil {
			j.mu.Unlock()
			return
		}
		if j.cur == nil {
			if j.closing {
				j.mu.Unlock()
				// Sync and close the last file (needed without
				// journalSyncData; a no-op fsync with it).
				j.m.unsynced.Add(1)
				j.syncq <- &syncRequest{file: j.file, end: j.file.size, close: true}
				return
			}
			j.mu.Unlock()
			<-j.wake
			continue
		}
		if wait := j.groupWait(time.Now()); wait > 0 {
			j.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-j.wake:
			case <-timer.C:
			}
			timer.Stop()
			continue
		}
		j.countFlushReason()
		b, data := j.cur, j.buf
		j.m.queued.Add(-int64(j.count))
		j.lastBatch = j.count
		j.cur, j.buf, j.count = nil, j.spare, 0
		j.spare = nil
		j.room.Broadcast()
		j.mu.Unlock()

		data, dispatched, err := j.writeBatch(b, data, &lastSync)
		if err != nil {
			// Fail first (OnFailure: the storage turns read-only), so
			// that whoever sees its add fail finds the journal failed.
			j.fail(err)
			if !dispatched {
				b.complete(err)
				j.m.recordAdds(b, time.Now())
			}
			return
		}
		if cap(data) <= 4*j.opts.WriteBufferSize+int(j.opts.BufferedWritesThreshold) {
			j.mu.Lock()
			j.spare = data[:0]
			j.mu.Unlock()
		}
	}
}

// writeBatch writes batch b's records, with their padding, to the file,
// completes b (without journalSyncData) or hands it to the syncer, and
// rolls to a new file when this one is past MaxFileSize. It returns the
// buffer for reuse, and whether b was completed or handed on (after which
// the caller must leave it alone, even on error).
func (j *Journal) writeBatch(b *batch, data []byte, lastSync *time.Time) (_ []byte, dispatched bool, _ error) {
	jf := j.file
	if j.opts.FormatVersionToWrite >= V5 {
		data = appendPadding(data, jf.size+int64(len(data)), j.opts.AlignmentSize)
	}
	b.fileID, b.base = jf.id, jf.size
	if len(data) > 0 {
		grew, err := j.ensureRoom(jf, jf.size+int64(len(data)))
		if grew {
			j.stats.preallocations.Add(1)
		}
		if err != nil {
			return data, false, err
		}
		start := time.Now()
		err = writeAllAt(jf.f, data, jf.size)
		j.m.flush.Done(err == nil, start)
		if err != nil {
			return data, false, ioError(err, "journal: writing "+jf.path)
		}
	}
	j.m.batchEntries.AddValue(true, int64(b.adds()))
	j.m.batchBytes.AddValue(true, int64(len(data)))
	jf.size += int64(len(data))
	b.end = jf.size
	j.stats.batches.Add(1)
	j.stats.bytes.Add(int64(len(data)))
	roll := jf.size > j.opts.MaxFileSize
	req := &syncRequest{file: jf, end: jf.size, batch: b, close: roll}
	if j.opts.NoSyncData {
		// Upstream's weaker promise: done once the OS has the bytes.
		b.complete(nil)
		j.m.recordAdds(b, time.Now())
		req.batch = nil
		if !roll && time.Since(*lastSync) < j.opts.PageCacheFlushInterval {
			req = nil
		}
	}
	if req != nil {
		*lastSync = time.Now()
		j.m.unsynced.Add(1)
		j.syncq <- req
	}
	if !roll {
		return data, true, nil
	}
	next, err := j.rollTo(jf.id + 1)
	if err != nil {
		return data, true, err
	}
	j.file = next
	j.log.Info("journal: rolled to a new file", "file", next.path, "previous_size", jf.size)
	return data, true, nil
}

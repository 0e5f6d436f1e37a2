package journal

import "time"

// syncRequest asks the syncer to make a file durable up to end, then to
// complete batch (nil: nothing waits) and, with close, to close the file
// (the writer has moved on to a new one).
type syncRequest struct {
	file  *journalFile
	end   int64
	batch *batch
	close bool
}

// syncLoop is the syncer goroutine: it takes every request queued, issues
// one fsync per file among them (the last request of a file covers the
// others: they were written before), records the synced length, moves the
// journal's mark and completes the batches. After a failed fsync nothing
// is synced again and every later batch fails.
func (j *Journal) syncLoop() {
	defer close(j.syncerDone)
	var reqs []*syncRequest
	var failed error
	for req := range j.syncq {
		reqs = append(reqs[:0], req)
	drain:
		for {
			select {
			case r, ok := <-j.syncq:
				if !ok {
					break drain
				}
				reqs = append(reqs, r)
			default:
				break drain
			}
		}
		if failed == nil {
			failed = j.syncFiles(reqs)
			if failed != nil {
				j.fail(failed)
			}
		}
		now := time.Now()
		for _, r := range reqs {
			j.m.unsynced.Add(-1)
			if r.batch != nil {
				r.batch.complete(failed)
			}
		}
		// After every waiter is woken: closing files and recording
		// latencies wait.
		for i, r := range reqs {
			if r.close {
				r.file.close()
			}
			if r.batch != nil {
				j.m.recordAdds(r.batch, now)
			}
			reqs[i] = nil
		}
	}
}

// syncFiles fsyncs the files of reqs, in order, each once, records their
// synced lengths and moves the mark to the end of the last request.
func (j *Journal) syncFiles(reqs []*syncRequest) error {
	j.m.syncGrouping.AddValue(true, int64(len(reqs)))
	for i, r := range reqs {
		if i+1 < len(reqs) && reqs[i+1].file == r.file {
			continue
		}
		if r.end > r.file.syncedLen {
			if err := j.syncFile(r.file, r.end); err != nil {
				return err
			}
			if err := r.file.markSynced(r.end); err != nil {
				return err
			}
		}
	}
	last := reqs[len(reqs)-1]
	j.setMark(LogMark{FileID: last.file.id, Offset: last.end})
	return nil
}

// syncFile makes jf's records durable up to end: with fdatasync
// (upstream's force(false)) when they lie inside zeros a full sync made
// durable, which changes no metadata; with a full fsync when they reach
// past them (the writer grew the file: the pre-allocator was behind).
// It waits for a sync of the pre-allocator in progress, and fails if one
// failed (see prealloc.go).
func (j *Journal) syncFile(jf *journalFile, end int64) error {
	a := &jf.alloc
	a.Lock()
	full, written := end > a.durable, a.written
	a.Unlock()
	jf.syncMu.Lock()
	if err := jf.syncErr; err != nil {
		jf.syncMu.Unlock()
		return err
	}
	j.stats.syncs.Add(1)
	start := time.Now()
	var err error
	if full {
		err = jf.f.Sync()
	} else {
		err = jf.f.Datasync()
	}
	j.m.sync.Done(err == nil, start)
	if err != nil {
		jf.syncErr = ioError(err, "journal: syncing "+jf.path)
		err = jf.syncErr
	}
	jf.syncMu.Unlock()
	if err != nil || !full {
		return err
	}
	j.stats.fullSyncs.Add(1)
	a.Lock()
	a.durable = max(a.durable, written)
	a.Unlock()
	return nil
}

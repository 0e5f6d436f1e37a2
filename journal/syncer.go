package journal

import "time"

// syncRequest asks the syncer to make a file durable up to end, then to
// complete batch (nil: nothing waits) and, with close, to close the file
// (the writer has moved on to a new one). alloc is the file's length on
// disk when the request was made: past the last full sync's, the sync
// must make the growth durable too.
type syncRequest struct {
	file  *journalFile
	end   int64
	alloc int64
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
		if r.end > r.file.syncedLen || r.alloc > r.file.syncedAlloc {
			// Records written into pre-allocated zeros change no
			// metadata: fdatasync (upstream's force(false)). A batch
			// that pre-allocated grew the file: a full fsync.
			j.stats.syncs.Add(1)
			full := r.alloc > r.file.syncedAlloc
			start := time.Now()
			var err error
			if full {
				err = r.file.f.Sync()
			} else {
				err = r.file.f.Datasync()
			}
			j.m.sync.Done(err == nil, start)
			if err != nil {
				return ioError(err, "journal: syncing "+r.file.path)
			}
			if full {
				j.stats.fullSyncs.Add(1)
				r.file.syncedAlloc = r.alloc
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

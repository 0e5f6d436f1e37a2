package journal

import (
	"fmt"
	"sync"
)

// Pre-allocation (journalPreAllocSizeMB). A record appended to a file
// changes its length, so the fsync that covers it must commit the inode
// too; a record written over zeros already durable changes only data, and
// fdatasync flushes only that. So the records are written with pwrite into
// zeros written ahead of them, whole bytes (a sparse hole or an unwritten
// extent would make the first write into each block an allocation, a
// metadata change again), a file holding its records and then zeros up to
// a multiple of the chunk, as upstream's.
//
// The zeros are written and made durable ahead of the writer, off the
// path of the syncs that acknowledge adds: a new file is created with its
// first chunk (synced with its header), and a pre-allocator goroutine keeps
// the zeros one chunk ahead of the chunk the writer is in, writing them
// preallocStep bytes at a time and syncing each step (a full fsync: the
// step grew the file) before the next. A sync of records then never
// covers a growth and never has more than one step of zeros to flush with
// them. The file's syncs (the syncer's and the pre-allocator's) are
// serialized by the file's syncMu, so that a sync of records waits for a
// step's sync rather than flushing its zeros itself. Once the writer is
// within a chunk of journalMaxSizeMB, the pre-allocator also creates the
// next file, which the roll takes (createNextAhead).
//
// When the pre-allocator is behind (a burst larger than a chunk, a slow
// disk), the writer writes the zeros the batch needs itself, up to the next
// multiple of the chunk, and the batch's sync is a full fsync, as before
// the pre-allocator. When a step's write fails (ENOSPC, EIO), no record is
// at stake: the pre-allocator stops for that file, with a WARN, and the
// writer pre-allocates the file's later chunks itself, failing the journal
// with an error naming the file if that fails too. When a step's sync
// fails, the kernel may have dropped the file's dirty pages, records among
// them: the journal fails as for a failed sync of records, and the file's
// next sync reports that failure instead of its own success.

// preallocStep bounds each write (and each background sync) of
// pre-allocated zeros.
const preallocStep = 1 << 20

// allocState is a journal file's pre-allocation, guarded by its mutex.
type allocState struct {
	sync.Mutex
	// done is broadcast when a background write of zeros ends.
	done sync.Cond
	// written is the end of the zeros written (the file's length on
	// disk); reserved (at least written) the end of the background write
	// under way; durable the length a completed full sync covered; want
	// the length the pre-allocator is to reach (one chunk past the chunk
	// the writer is in).
	written, reserved, durable, want int64
	// stopped says a background write failed: the writer pre-allocates
	// the rest of the file itself. closed says the file is closed.
	stopped, closed bool
}

func (a *allocState) init() { a.done.L = &a.Mutex }

// roundUp returns n rounded up to a multiple of chunk.
func roundUp(n, chunk int64) int64 { return (n + chunk - 1) / chunk * chunk }

// writeZerosLocked writes zeros from the end of the zeros written to end,
// at most len(zeros) bytes a write. jf.alloc is held, or the file is not
// shared yet.
func (jf *journalFile) writeZerosLocked(end int64, zeros []byte) error {
	a := &jf.alloc
	for a.written < end {
		n := min(end-a.written, int64(len(zeros)))
		if err := writeAllAt(jf.f, zeros[:n], a.written); err != nil {
			return ioError(err, fmt.Sprintf("journal: pre-allocating %s to %d bytes at offset %d", jf.path, end, a.written))
		}
		a.written += n
	}
	a.reserved = max(a.reserved, a.written)
	return nil
}

// ensureRoom makes sure zeros are written up to need before the writer
// writes records up to it, and asks the pre-allocator to keep the next
// chunk ahead. It waits for a background write of the zeros needed; when
// the pre-allocator is behind it writes them itself, up to the next
// multiple of the chunk, and reports that it grew the file (the batch's
// sync will be a full fsync: syncFile decides by the durable length).
func (j *Journal) ensureRoom(jf *journalFile, need int64) (grew bool, err error) {
	chunk := j.opts.PreAllocSize
	a := &jf.alloc
	a.Lock()
	for need > a.written && a.reserved > a.written {
		a.done.Wait()
	}
	if need > a.written {
		grew = true
		err = jf.writeZerosLocked(roundUp(need, chunk), j.zeros)
	}
	a.want = max(a.want, roundUp(need, chunk)+chunk)
	// Near the roll, the pre-allocator also creates the next file (even
	// when it stopped pre-allocating this one).
	kick := (!a.stopped && a.reserved < a.want) || a.want > j.opts.MaxFileSize
	a.Unlock()
	if kick {
		select {
		case j.preallocWake <- struct{}{}:
		default:
		}
	}
	return grew, err
}

// preallocLoop is the pre-allocator goroutine: woken by the writer, it
// writes and syncs steps of zeros in the file being written until the
// file has what the writer wants ahead.
func (j *Journal) preallocLoop() {
	defer close(j.preallocDone)
	for {
		select {
		case <-j.preallocStop:
			return
		case <-j.preallocWake:
		}
		for j.preallocOne() {
		}
		j.createNextAhead()
	}
}

// createNextAhead creates the journal file after the one being written
// once the writer is within a chunk of rolling (journalMaxSizeMB), so that
// the roll finds it ready: its header and first chunk written and synced,
// its names durable (createJournalFile), all off the writer's path. Until
// the roll it is an empty journal to a replay. A failure is logged, and the
// writer creates the file itself at the roll.
func (j *Journal) createNextAhead() {
	jf := j.preallocFile.Load()
	if jf == nil || j.Err() != nil {
		return
	}
	a := &jf.alloc
	a.Lock()
	near := !a.closed && a.want > j.opts.MaxFileSize
	a.Unlock()
	if !near {
		return
	}
	j.nextMu.Lock()
	defer j.nextMu.Unlock()
	id := jf.id + 1
	if j.nextFile != nil || j.nextFailed == id || j.preallocFile.Load() != jf {
		return
	}
	next, err := j.createFile(id)
	if err != nil {
		j.nextFailed = id
		j.log.Warn("journal: creating the next journal file ahead of the roll failed; the writer creates it at the roll", "err", err)
		return
	}
	j.nextFile = next
	j.stats.filesAhead.Add(1)
}

// rollTo returns file id for the writer to roll to, the one created ahead
// or a new one, and makes it the pre-allocator's.
func (j *Journal) rollTo(id int64) (*journalFile, error) {
	j.nextMu.Lock()
	defer j.nextMu.Unlock()
	next := j.nextFile
	j.nextFile = nil
	if next == nil {
		var err error
		if next, err = j.createFile(id); err != nil {
			return nil, err
		}
	}
	j.preallocFile.Store(next)
	return next, nil
}

// preallocOne writes and syncs one step of zeros ahead of the writer in
// the file being written, and reports whether it did (false: nothing to
// do, or it cannot go on).
func (j *Journal) preallocOne() bool {
	jf := j.preallocFile.Load()
	if jf == nil || j.Err() != nil {
		return false
	}
	jf.bgMu.Lock()
	defer jf.bgMu.Unlock()
	a := &jf.alloc
	a.Lock()
	if a.closed || a.stopped || a.reserved >= a.want {
		a.Unlock()
		return false
	}
	start := a.reserved
	end := min(start+int64(len(j.zeros)), a.want)
	a.reserved = end
	a.Unlock()

	err := writeAllAt(jf.f, j.zeros[:end-start], start)
	a.Lock()
	if err != nil {
		// The writer writes whatever zeros it needs itself, over any
		// this write left.
		a.reserved, a.stopped = a.written, true
		a.done.Broadcast()
		a.Unlock()
		j.stats.preallocAheadFailures.Add(1)
		j.log.Warn("journal: pre-allocating ahead of the writer failed; the writer pre-allocates the rest of the file itself",
			"file", jf.path, "offset", start, "size", end-start, "err", err)
		return false
	}
	a.written = end
	a.done.Broadcast()
	a.Unlock()

	jf.syncMu.Lock()
	if jf.syncErr != nil {
		jf.syncMu.Unlock()
		return false
	}
	if err := jf.f.Sync(); err != nil {
		jf.syncErr = ioError(err, fmt.Sprintf("journal: syncing the zeros pre-allocated in %s at offset %d", jf.path, start))
		jf.syncMu.Unlock()
		j.fail(jf.syncErr)
		return false
	}
	jf.syncMu.Unlock()
	a.Lock()
	a.durable = max(a.durable, end)
	a.Unlock()
	j.stats.preallocatedAhead.Add(1)
	return true
}

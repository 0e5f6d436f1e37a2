package wal

import (
	"io"
	"sync"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Options configure a Writer.
type Options struct {
	// StartOffset is the length of a valid log already in the file that the
	// Writer continues (block alignment depends on it). Zero, the default,
	// starts a new log in an empty file.
	StartOffset int64
	// SyncedLength, if set, is the log's (empty) synced-length file: after
	// every successful Sync, before the appends that Sync covered return,
	// the Writer appends a mark of the log's length to it (one small write,
	// no fsync). Recovery uses the marks to tell damage within synced bytes
	// (corruption) from a torn tail (bytes no Sync covered). The Writer
	// owns the file: Close closes it.
	SyncedLength vfs.File
}

// Metrics is a point-in-time snapshot of a Writer's counters.
type Metrics struct {
	// BytesWritten counts bytes handed to File.Write successfully, framing
	// and block padding included.
	BytesWritten int64
	// Records counts records accepted by Append.
	Records int64
	// Writes counts File.Write calls; Records/Writes is the write batching.
	Writes int64
	// Syncs counts File.Sync calls; Records/Syncs is the group-commit
	// batching of a fully synced workload.
	Syncs int64
	// SyncWaitNanos is the wall time spent inside File.Sync. It is measured
	// once per Sync (two clock reads next to an fsync of ~0.1-10 ms), not
	// once per waiting caller, so it costs nothing measurable.
	SyncWaitNanos int64
}

// maxRetainedBuffer bounds each of the two buffers kept between writes (the
// one records are framed into and the spare that takes over while the
// other is written; one alone while nothing is framed during a write), so
// that one huge batch does not pin its memory for the life of the log. A
// checkpoint's batch (2.7 MB, entrylocation's MaxBatchOps) fits: with 1
// MiB every commit of one grew a new buffer, a third of a load's
// allocations.
const maxRetainedBuffer = 8 << 20

// Writer appends records to a WAL file with group commit. See the package
// documentation for the protocol.
type Writer struct {
	file vfs.File
	// syncedFile is Options.SyncedLength, and syncedLength writes its
	// marks; only the goroutine inside File.Sync (mu.syncing) uses it.
	syncedFile   vfs.File
	syncedLength *record.SyncedLengthWriter

	// mu guards everything below. Append and Close release it around
	// File.Write and File.Sync (see writeLocked and syncLocked).
	mu struct {
		sync.Mutex
		// cond is signalled (broadcast) whenever a Write or Sync finishes.
		cond sync.Cond
		// log frames records into its buffer (record.NewBufferWriterAt),
		// which writeLocked takes.
		log *record.Writer
		// spare is the buffer of the previous Write, given to log when
		// writeLocked takes the next.
		spare []byte

		// Records are numbered from 1 in Append order. Invariant:
		// synced <= written <= appended.
		appended uint64 // framed into log's buffer (or written)
		written  uint64 // handed to File.Write successfully
		synced   uint64 // covered by a successful File.Sync

		// writtenOffset is the log offset just past the last byte handed
		// to File.Write successfully (Options.StartOffset at first).
		writtenOffset int64
		// markedOffset is the last length given to syncedLength.
		markedOffset int64

		writing bool // a goroutine is inside File.Write
		syncing bool // a goroutine is inside File.Sync
		closed  bool
		// err is the first Write or Sync failure; sticky.
		err error

		metrics Metrics
	}
}

// NewWriter returns a Writer appending to f, which must be empty or hold a
// valid log of opts.StartOffset bytes. The Writer owns f: Close closes it.
func NewWriter(f vfs.File, opts Options) *Writer {
	w := &Writer{file: f, syncedFile: opts.SyncedLength}
	if opts.SyncedLength != nil {
		w.syncedLength = record.NewSyncedLengthWriter(opts.SyncedLength)
	}
	w.mu.cond.L = &w.mu.Mutex
	w.mu.writtenOffset = opts.StartOffset
	w.mu.markedOffset = opts.StartOffset
	w.mu.log = record.NewBufferWriterAt(opts.StartOffset)
	return w
}

// Append adds record to the log. Records reach the file in the order Append
// calls take the Writer's mutex. With sync=false, Append returns once the
// record was handed to File.Write (it survives a process crash but not a
// power loss); with sync=true, once a File.Sync covering it succeeded.
//
// After a failure Append returns an error wrapping the first failure; after
// Close it returns an error marked base.ErrClosed.
func (w *Writer) Append(rec []byte, sync bool) error {
	n, err := w.Enqueue(rec)
	if err != nil {
		return err
	}
	return w.Wait(n, sync)
}

// Enqueue frames record into the log's buffer without waiting for
// any I/O and returns its number (records are numbered from 1 in log
// order). The DB enqueues under its commit lock, so that the log's order is
// the sequence-number order, and waits outside it, so that concurrent
// committers share writes and syncs.
func (w *Writer) Enqueue(rec []byte) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return 0, errors.Wrap(base.ErrClosed, "wal: append after close")
	}
	if w.mu.err != nil {
		return 0, w.mu.err
	}
	if _, err := w.mu.log.WriteRecord(rec); err != nil {
		// Framing into a buffer never fails, so this is a bug, but keep
		// the log consistent: nothing after a framing error may be written.
		w.failLocked(errors.Wrap(err, "wal: framing record"))
		return 0, w.mu.err
	}
	w.mu.appended++
	w.mu.metrics.Records++
	return w.mu.appended, nil
}

// Wait returns once record n (from Enqueue) was written, and synced if
// durable, doing the Write or Sync itself when nobody else is. It works
// after Close for records enqueued before it (Close writes and syncs them).
func (w *Writer) Wait(n uint64, durable bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waitLocked(n, durable)
}

// waitLocked returns once record seq was written (and synced, if durable),
// doing the Write or Sync itself when nobody else is, or returns the sticky
// error if the Writer broke first. w.mu must be held; it is released while
// waiting and around I/O.
func (w *Writer) waitLocked(seq uint64, durable bool) error {
	for {
		if w.mu.written >= seq && (!durable || w.mu.synced >= seq) {
			return nil
		}
		if w.mu.err != nil {
			return w.mu.err
		}
		switch {
		case w.mu.written < seq && !w.mu.writing:
			w.writeLocked()
		case w.mu.written >= seq && !w.mu.syncing:
			w.syncLocked()
		default:
			w.mu.cond.Wait()
		}
	}
}

// writeLocked hands every pending record to File.Write. w.mu must be held
// and no other Write in flight; it is released around the Write.
func (w *Writer) writeLocked() {
	buf := w.mu.log.TakeBuffered(w.mu.spare)
	target := w.mu.appended
	w.mu.spare = nil
	w.mu.writing = true

	w.mu.Unlock()
	n, err := w.file.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	w.mu.Lock()

	w.mu.writing = false
	switch {
	case cap(buf) > maxRetainedBuffer:
	case w.mu.log.Buffered() == 0:
		// Nothing was framed during the Write: the next records go into
		// this buffer again (the log's empty one is dropped), so that a
		// lone committer keeps one buffer's pages resident, not two.
		w.mu.log.TakeBuffered(buf)
	default:
		w.mu.spare = buf[:0]
	}
	w.mu.metrics.Writes++
	if err != nil {
		w.failLocked(errors.Wrapf(err, "wal: writing %d bytes (records %d..%d)", len(buf), w.mu.written+1, target))
	} else {
		w.mu.written = target
		w.mu.writtenOffset += int64(n)
		w.mu.metrics.BytesWritten += int64(n)
	}
	w.mu.cond.Broadcast()
}

// syncLocked makes every written record durable with one File.Sync. w.mu
// must be held and no other Sync in flight; it is released around the Sync.
// Records whose Write finishes during the Sync are not counted: the next
// Sync covers them. With Options.SyncedLength, the synced length is marked
// before any covered record is reported durable, so that every
// acknowledged record lies below a mark; a failed mark breaks the Writer
// like a failed Sync.
func (w *Writer) syncLocked() {
	target := w.mu.written
	targetOffset := w.mu.writtenOffset
	mark := w.syncedLength != nil && targetOffset > w.mu.markedOffset
	w.mu.syncing = true

	w.mu.Unlock()
	start := time.Now()
	err := w.file.Sync()
	elapsed := time.Since(start)
	if err == nil && mark {
		err = w.syncedLength.Mark(targetOffset)
	}
	w.mu.Lock()

	w.mu.syncing = false
	w.mu.metrics.Syncs++
	w.mu.metrics.SyncWaitNanos += elapsed.Nanoseconds()
	if err != nil {
		w.failLocked(errors.Wrapf(err, "wal: syncing records %d..%d", w.mu.synced+1, target))
	} else {
		if target > w.mu.synced {
			w.mu.synced = target
		}
		if mark {
			w.mu.markedOffset = targetOffset
		}
	}
	w.mu.cond.Broadcast()
}

// failLocked records the first failure; later ones are consequences of it.
func (w *Writer) failLocked(err error) {
	if w.mu.err == nil {
		w.mu.err = err
	}
}

// Close writes and syncs every appended record, then closes the file. Appends
// already waiting complete (or fail) normally; later ones return an error
// marked base.ErrClosed. If the Writer broke, Close still closes the file and
// returns the sticky error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return errors.Wrap(base.ErrClosed, "wal: already closed")
	}
	w.mu.closed = true
	err := w.mu.err
	if err == nil && w.mu.synced < w.mu.appended {
		err = w.waitLocked(w.mu.appended, true /* durable */)
	}
	// Another goroutine may still be inside a Write or Sync that failed or
	// was overtaken; the file must outlive it.
	for w.mu.writing || w.mu.syncing {
		w.mu.cond.Wait()
	}
	if cerr := w.file.Close(); cerr != nil && err == nil {
		err = errors.Wrap(cerr, "wal: closing file")
	}
	if w.syncedFile != nil {
		if cerr := w.syncedFile.Close(); cerr != nil && err == nil {
			err = errors.Wrap(cerr, "wal: closing the synced-length file")
		}
	}
	return err
}

// Metrics returns a snapshot of the Writer's counters.
func (w *Writer) Metrics() Metrics {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.metrics
}

// Size returns the logical length of the log: every appended record, written
// or not, including framing.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.log.Size()
}

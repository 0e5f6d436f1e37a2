package journal

import (
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Journal is one journal directory's journal (upstream's Journal): adds
// are queued, written in batches and made durable in groups (see
// writer.go); a checkpoint moves its last log mark. All methods are safe
// for concurrent use.
type Journal struct {
	opts         Options
	root, dir    string // the journal directory and its current directory
	lastMarkName string
	log          *slog.Logger
	lock         io.Closer
	replayed     ReplayResult
	// doneBatch completes the adds of entries not journaled
	// (journalWriteData=false).
	doneBatch *batch

	mu sync.Mutex
	// room is signalled when the queued batch is taken by the writer, and
	// on failure and close.
	room sync.Cond
	// cur is the batch being filled, buf its records, count its adds,
	// first when it got its first add; nil when nothing is queued.
	cur   *batch
	buf   []byte
	spare []byte // the buffer of the last batch written, for reuse
	count int
	first time.Time
	// lastBatch is how many adds the last batch taken held (adaptive
	// group writes: a batch that holds as many is written at once).
	lastBatch int
	// closing is set by Close; failed by the first write or fsync failure.
	closing bool
	failed  error
	// wake tells the writer that something changed (capacity 1).
	wake chan struct{}

	// file is the file being written (the writer's).
	file *journalFile
	// syncq carries written batches from the writer to the syncer.
	syncq chan *syncRequest
	// writerDone and syncerDone are closed when the goroutines exit.
	writerDone, syncerDone chan struct{}

	markMu sync.Mutex
	mark   LogMark // the end of what a completed fsync covers

	ckptMu    sync.Mutex
	persisted LogMark // the mark the lastMark files hold

	onFailure sync.Once

	// preallocFile is the file the pre-allocator extends (the writer's
	// current file); preallocWake wakes the pre-allocator (capacity 1),
	// preallocStop stops it, preallocDone is closed when it has.
	preallocFile               atomic.Pointer[journalFile]
	preallocWake               chan struct{}
	preallocStop, preallocDone chan struct{}
	// nextFile is the file after the one being written, created ahead by
	// the pre-allocator once the writer is within a chunk of rolling;
	// nextFailed the id whose creation ahead failed (not tried again).
	// nextMu guards both and is held while the file is created, and by
	// the writer's roll while it takes the file and moves preallocFile.
	nextMu     sync.Mutex
	nextFile   *journalFile
	nextFailed int64

	stats struct {
		adds, batches, syncs, fullSyncs, preallocations, bytes atomic.Int64
		preallocatedAhead, preallocAheadFailures, filesAhead   atomic.Int64
	}
	// zeros is a buffer of zeros (never written to) that the writer and
	// the pre-allocator write from.
	zeros []byte
	// m are the statistics Metrics reports.
	m journalStats
}

// Stats counts a journal's work since it was opened.
type Stats struct {
	// Adds counts the adds queued (entries, meta-entries and force-ledger
	// requests); Batches the batches written (one write each); Syncs the
	// syncs of records (not counting new files' headers nor the
	// pre-allocator's), of which FullSyncs were fsyncs (the records
	// reached past the zeros made durable) and the others fdatasyncs;
	// Preallocations the batches that had to write zeros themselves (the
	// pre-allocator was behind; journalPreAllocSizeMB); Bytes the bytes of
	// records written, padding included (not the zeros).
	Adds, Batches, Syncs, FullSyncs, Preallocations, Bytes int64
	// PreallocatedAhead counts the steps of zeros the pre-allocator wrote
	// and synced ahead of the writer; PreallocAheadFailures its failed
	// writes (the writer then pre-allocates that file itself); FilesAhead
	// the files it created ahead of a roll.
	PreallocatedAhead, PreallocAheadFailures, FilesAhead int64
}

// Stats returns the journal's counters.
func (j *Journal) Stats() Stats {
	return Stats{
		Adds:           j.stats.adds.Load(),
		Batches:        j.stats.batches.Load(),
		Syncs:          j.stats.syncs.Load(),
		FullSyncs:      j.stats.fullSyncs.Load(),
		Preallocations: j.stats.preallocations.Load(),
		Bytes:          j.stats.bytes.Load(),

		PreallocatedAhead:     j.stats.preallocatedAhead.Load(),
		PreallocAheadFailures: j.stats.preallocAheadFailures.Load(),
		FilesAhead:            j.stats.filesAhead.Load(),
	}
}

// openJournal opens journal index of opts (resolved): it takes the
// directory's lock, reads the last log mark, replays the journal from it
// into fn, then starts a new file and the writer.
func openJournal(opts Options, index int, fn func(*Record) error) (_ *Journal, err error) {
	fs := opts.FS
	root := opts.JournalDirectories[index]
	j := &Journal{
		opts:         opts,
		root:         root,
		dir:          CurrentDir(root),
		lastMarkName: LastMarkFileName(index, len(opts.JournalDirectories)),
		log:          opts.Logger.With("journal", root),
		doneBatch:    failedBatch(nil),
		wake:         make(chan struct{}, 1),
		syncq:        make(chan *syncRequest, 1024),
		writerDone:   make(chan struct{}),
		syncerDone:   make(chan struct{}),
		preallocWake: make(chan struct{}, 1),
		preallocStop: make(chan struct{}),
		preallocDone: make(chan struct{}),
	}
	j.room.L = &j.mu
	j.m.init()
	if err := fs.MkdirAll(j.dir, 0o755); err != nil {
		return nil, ioError(err, "journal: creating "+j.dir)
	}
	lock, err := fs.Lock(filepath.Join(j.dir, "LOCK"))
	if err != nil {
		return nil, errors.Wrapf(err, "journal: locking %s", j.dir)
	}
	j.lock = lock
	defer func() {
		if err != nil {
			_ = lock.Close()
		}
	}()

	mark, problems := ReadLastMark(fs, opts.LedgerDirectories, j.lastMarkName)
	for _, p := range problems {
		j.log.Warn("journal: unreadable last log mark skipped (an older mark only replays more)", "err", p)
	}
	if fn == nil {
		fn = func(*Record) error { return nil }
	}
	j.log.Info("journal: replaying", "from", mark.String())
	j.replayed, err = Replay(fs, root, mark, fn)
	if err != nil {
		return nil, err
	}
	for _, t := range j.replayed.TornTails {
		j.log.Warn("journal: dropping a torn tail (a batch no completed fsync covered)",
			"file", t.Path, "offset", t.Offset, "size", t.Size, "synced_length", t.SyncedLength, "reason", t.Reason)
	}
	j.log.Info("journal: replayed", "files", j.replayed.Files, "records", j.replayed.Records, "end", j.replayed.End.String())

	ids, err := ListFiles(fs, root)
	if err != nil {
		return nil, err
	}
	next := mark.FileID
	if len(ids) > 0 {
		next = max(next, ids[len(ids)-1])
	}
	if next == 0 {
		next = time.Now().UnixMilli() - 1
	}
	if j.file, err = j.createFile(next + 1); err != nil {
		return nil, err
	}
	j.log.Info("journal: writing a new file", "file", j.file.path)
	// Every record replayed was handed to fn, so the storage holds it once
	// it is flushed: the new file's start is a mark a checkpoint may take.
	j.mark = LogMark{FileID: j.file.id, Offset: j.file.size}
	j.persisted = mark
	j.preallocFile.Store(j.file)
	go j.writeLoop()
	go j.syncLoop()
	go j.preallocLoop()
	return j, nil
}

// createFile creates journal file id, timed (JOURNAL_CREATION_LATENCY).
func (j *Journal) createFile(id int64) (*journalFile, error) {
	start := time.Now()
	if j.zeros == nil {
		j.zeros = make([]byte, min(j.opts.PreAllocSize, preallocStep))
	}
	jf, err := createJournalFile(j.opts.FS, j.dir, id, j.opts.FormatVersionToWrite, j.opts.PreAllocSize, j.zeros)
	j.m.creation.Done(err == nil, start)
	return jf, err
}

// Dir returns the journal directory.
func (j *Journal) Dir() string { return j.root }

// Replayed returns what the replay at open found.
func (j *Journal) Replayed() ReplayResult { return j.replayed }

// LastMarkName returns the name of the journal's lastMark files.
func (j *Journal) LastMarkName() string { return j.lastMarkName }

// Add queues an entry: the ledger id, the entry id (at least 0) and the
// payload, the bytes of the client's entry after those two ids (what
// bookie.Storage.AddEntry stores; the record holds the whole entry, as
// upstream's). The payload is copied before Add returns. The Completion
// is done once the record is durable (see Completion).
//
// Add the entry to the ledger storage before the journal, as upstream's
// bookie does: a checkpoint's mark (CurrentMark before the storage flush)
// then covers only records the flush holds.
func (j *Journal) Add(ledgerID, entryID int64, payload []byte) Completion {
	if entryID < 0 {
		j.m.addEntry.Done(false, time.Now())
		return Completion{b: failedBatch(errors.Wrapf(ErrInvalidArgument,
			"journal: entry id %d of ledger %d is negative (negative ids are meta-entries)", entryID, ledgerID)), end: -1}
	}
	if len(payload) > MaxPayloadSize {
		j.m.addEntry.Done(false, time.Now())
		return Completion{b: failedBatch(errors.Wrapf(ErrInvalidArgument,
			"journal: a %d-byte payload (entry %d of ledger %d) is larger than the maximum %d", len(payload), entryID, ledgerID, MaxPayloadSize)), end: -1}
	}
	if j.opts.NoWriteData {
		return Completion{b: j.doneBatch, end: -1}
	}
	return j.enqueue(KindEntry, ledgerID, entryID, payload)
}

// AddMasterKey queues a ledger's master key (upstream journals it before
// the ledger's first entry).
func (j *Journal) AddMasterKey(ledgerID int64, key []byte) Completion {
	if len(key) > MaxPayloadSize {
		return Completion{b: failedBatch(errors.Wrapf(ErrInvalidArgument, "journal: a %d-byte master key", len(key))), end: -1}
	}
	return j.enqueue(KindMasterKey, ledgerID, MetaEntryMasterKey, key)
}

// AddFence queues the fencing of a ledger.
func (j *Journal) AddFence(ledgerID int64) Completion {
	return j.enqueue(KindFence, ledgerID, MetaEntryFence, nil)
}

// AddExplicitLAC queues a ledger's explicit LAC (the bytes as the client
// sent them). Below format version 6 nothing is written and the completion
// waits for the batch's fsync, as upstream.
func (j *Journal) AddExplicitLAC(ledgerID int64, lac []byte) Completion {
	if len(lac) > MaxPayloadSize {
		return Completion{b: failedBatch(errors.Wrapf(ErrInvalidArgument, "journal: a %d-byte explicit LAC", len(lac))), end: -1}
	}
	if j.opts.FormatVersionToWrite < V6 {
		return j.enqueue(0, ledgerID, MetaEntryForceLedger, nil)
	}
	return j.enqueue(KindExplicitLAC, ledgerID, MetaEntryExplicitLAC, lac)
}

// ForceLedger returns a completion that is done once every add queued
// before it is durable (upstream's forceLedger, for ledgers written with
// deferred sync). Nothing is written for it.
func (j *Journal) ForceLedger(ledgerID int64) Completion {
	return j.enqueue(0, ledgerID, MetaEntryForceLedger, nil)
}

// CurrentMark returns the journal's last log mark: the end of what a
// completed fsync covers (upstream's lastLogMark). A checkpoint takes it
// before it flushes the storage, and passes it to SetCheckpointed after.
func (j *Journal) CurrentMark() LogMark {
	j.markMu.Lock()
	defer j.markMu.Unlock()
	return j.mark
}

func (j *Journal) setMark(m LogMark) {
	j.markMu.Lock()
	j.mark = m
	j.markMu.Unlock()
}

// LastLogMark returns the mark the journal's lastMark files hold: the one
// read at Open, then the last SetCheckpointed wrote.
func (j *Journal) LastLogMark() LogMark {
	j.ckptMu.Lock()
	defer j.ckptMu.Unlock()
	return j.persisted
}

// Err returns the failure that stopped the journal, or nil.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.failed
}

// SetCheckpointed records that the storage is durable up to mark, which
// CurrentMark returned before the storage was flushed (upstream's
// checkpointComplete): it writes mark to the journal's lastMark file in
// every ledger directory, each replaced atomically and synced, then
// removes the journal files before the mark's file, keeping the newest
// MaxBackupJournals of them. A mark older than the last one recorded is
// ignored, so concurrent checkpoints never move it back.
//
// An error names every directory that failed. Files are removed only if
// at least one directory holds the new mark (a start reads the greatest).
func (j *Journal) SetCheckpointed(mark LogMark) error {
	j.ckptMu.Lock()
	defer j.ckptMu.Unlock()
	if mark.Less(j.persisted) {
		return nil
	}
	if cur := j.CurrentMark(); cur.Less(mark) {
		return errors.Wrapf(ErrInvalidArgument, "journal: %s: checkpoint mark %s is past the synced position %s", j.root, mark, cur)
	}
	written, err := writeLastMark(j.opts.FS, j.opts.LedgerDirectories, j.lastMarkName, mark)
	if written == 0 {
		return err
	}
	j.persisted = mark
	return errors.Join(err, j.removeOldFiles(mark))
}

// removeOldFiles removes the journal files before mark's file but the
// newest MaxBackupJournals of them, with their synced-length files.
func (j *Journal) removeOldFiles(mark LogMark) error {
	fs := j.opts.FS
	ids, err := ListFiles(fs, j.root)
	if err != nil {
		return err
	}
	n, _ := slices.BinarySearch(ids, mark.FileID)
	old := ids[:n]
	if len(old) <= j.opts.MaxBackupJournals {
		return nil
	}
	var errs []error
	for _, id := range old[:len(old)-j.opts.MaxBackupJournals] {
		for _, name := range []string{FileName(id), SyncedFileName(id)} {
			path := filepath.Join(j.dir, name)
			if err := fs.Remove(path); err != nil && !isNotExist(err) {
				errs = append(errs, errors.Wrapf(err, "journal: removing %s", path))
			}
		}
		j.log.Info("journal: removed a journal file behind the last log mark", "file", FileName(id), "mark", mark.String())
	}
	if err := vfs.SyncDir(fs, j.dir); err != nil {
		errs = append(errs, ioError(err, "journal: removing old files"))
	}
	return errors.Join(errs...)
}

// Close writes and syncs everything queued, completes it, and closes the
// journal's files. Later adds fail with ErrClosed. It returns the failure
// that stopped the journal, if any.
func (j *Journal) Close() error {
	j.mu.Lock()
	already := j.closing
	j.closing = true
	j.room.Broadcast()
	j.mu.Unlock()
	j.signal()
	<-j.writerDone
	<-j.syncerDone
	if already {
		return nil
	}
	close(j.preallocStop)
	<-j.preallocDone
	// A file created ahead and never written stays: an empty journal to a
	// replay, removed by a later checkpoint like any file before the
	// mark's.
	if next := j.nextFile; next != nil {
		next.close()
		j.nextFile = nil
	}
	j.file.close()
	_ = j.lock.Close()
	return j.Err()
}

// signal wakes the writer without blocking.
func (j *Journal) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// fail stops the journal with err: the batch being filled fails, adds
// waiting for room and every later add fail, and OnFailure is called
// once. Batches already handed to the syncer complete as it decides.
func (j *Journal) fail(err error) {
	j.mu.Lock()
	if j.failed == nil {
		j.failed = err
	}
	cur := j.cur
	j.cur, j.buf, j.count = nil, nil, 0
	j.room.Broadcast()
	j.mu.Unlock()
	j.signal() // the writer stops at once, not at the next add
	if cur != nil {
		cur.complete(err)
		j.m.queued.Add(-int64(cur.adds()))
		j.m.recordAdds(cur, time.Now())
	}
	j.onFailure.Do(func() {
		j.log.Error("journal: failed; adds are refused", "err", err)
		if j.opts.OnFailure != nil {
			j.opts.OnFailure(j.root, err)
		}
	})
}

package entrylog

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// DefaultWriteBufferSize is the default size of the write buffer.
const DefaultWriteBufferSize = 64 << 10

// LastIDFileName is the file that records the id of the last log created,
// in lower-case hexadecimal and a newline, as upstream's "lastId".
const LastIDFileName = "lastId"

// EncodeLastID returns the bytes of lastId recording log id.
func EncodeLastID(id int64) []byte { return []byte(strconv.FormatInt(id, 16) + "\n") }

// Options configure a Logger. Zero fields mean their defaults.
type Options struct {
	// FS holds the logs. Default vfs.Default (the operating system).
	FS vfs.FS
	// LogSizeLimit: a log that would grow past it is closed and the next
	// record starts a new one (upstream's logSizeLimit). A record larger
	// than the limit gets a log of its own. Default and maximum
	// MaxLogSizeLimit.
	LogSizeLimit int64
	// WriteBufferSize buffers appends between Flushes. Default
	// DefaultWriteBufferSize.
	WriteBufferSize int
	// FlushIntervalBytes (upstream's flushEntrylogBytes): once the records
	// added since the log was last synced reach this many bytes, AddEntry
	// writes the buffer and fdatasyncs the log (upstream's regular
	// flushes, force(false)), so that the write-out a checkpoint's Flush
	// waits for, and the disk's queue behind it, stay bounded. Durability
	// still comes only from Flush. 0 or less: only Flush and rotations
	// sync (upstream's default).
	FlushIntervalBytes int64
	// Logger receives log creation and failure lines. Default: discarded.
	Logger *slog.Logger
	// ReadOnly opens the logs for reading only, as an offline tool does:
	// Open creates nothing and does not read lastId (no log will be
	// created), and the calls that write fail with an error matching
	// ErrInvalidArgument.
	ReadOnly bool
}

func (o *Options) resolve() (Options, error) {
	r := *o
	if r.FS == nil {
		r.FS = vfs.Default
	}
	if r.LogSizeLimit == 0 {
		r.LogSizeLimit = MaxLogSizeLimit
	}
	if r.LogSizeLimit < HeaderSize+RecordOverhead || r.LogSizeLimit > MaxLogSizeLimit {
		return r, errors.Wrapf(ErrInvalidArgument, "entrylog: LogSizeLimit %d is out of range [%d, %d]", r.LogSizeLimit, HeaderSize+RecordOverhead, MaxLogSizeLimit)
	}
	if r.WriteBufferSize == 0 {
		r.WriteBufferSize = DefaultWriteBufferSize
	}
	if r.WriteBufferSize < 0 {
		return r, errors.Wrapf(ErrInvalidArgument, "entrylog: WriteBufferSize %d is negative", r.WriteBufferSize)
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// Logger appends entries to the logs of one directory and reads them back
// by location.
type Logger struct {
	dir  string
	fs   vfs.FS
	opts Options
	log  *slog.Logger

	// mu serializes writes.
	mu struct {
		sync.Mutex
		cur *writeLog // nil before the first record and after a failure
		// nextID is the id of the next log to create.
		nextID int64
		// needDirSync says a log was created since the directory was
		// last synced.
		needDirSync bool
		closed      bool
		// rotated holds the usage of the logs rotated since their
		// ledgers map was last persisted: Metadata writes them, off the
		// write path, and Close writes what is left.
		rotated map[int64]*Metadata
	}

	readMu  sync.RWMutex
	readers map[int64]*readLog
	closed  atomic.Bool

	bytesWritten, syncs, logsCreated, failures atomic.Int64
	// regularSyncs counts the syncs of FlushIntervalBytes.
	regularSyncs atomic.Int64
}

// writeLog is the log being appended to.
type writeLog struct {
	id   int64
	path string
	f    vfs.File
	buf  []byte
	// offset is the log's size with the buffered bytes.
	offset int64
	// written is the bytes handed to the file.
	written int64
	reader  *readLog
	// usage counts the bytes of each ledger's records, for the log's
	// ledgers map (written at rotation and at Close).
	usage map[int64]int64
	// unsynced is the bytes of the records added since the log was last
	// synced (FlushIntervalBytes).
	unsynced int64
}

// readLog is a log open for reading.
type readLog struct {
	id     int64
	f      vfs.File
	format Format
	// limit is the readable size: for the log being written, the bytes
	// written to the file so far; for the others, their size.
	limit atomic.Int64
	// mu is read-held by each read of f; RemoveLog write-holds it to
	// close f once the reads in progress are done, and sets removed.
	mu      sync.RWMutex
	removed bool
}

// Open opens the entry logs of dir (creating dir if needed). The first
// record goes to a new log, numbered after every existing one.
func Open(dir string, opts *Options) (*Logger, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o, err := o.resolve()
	if err != nil {
		return nil, err
	}
	l := &Logger{dir: dir, fs: o.FS, opts: o, log: o.Logger.With("dir", dir), readers: map[int64]*readLog{}}
	l.mu.rotated = map[int64]*Metadata{}
	if o.ReadOnly {
		return l, nil
	}
	if err := l.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "entrylog: creating %s", dir)
	}
	ids, err := ListLogs(l.fs, dir)
	if err != nil {
		return nil, err
	}
	next := int64(0)
	if len(ids) > 0 {
		next = ids[len(ids)-1] + 1
	}
	if last, ok, err := ReadLastID(l.fs, dir); err != nil {
		return nil, err
	} else if ok {
		next = max(next, last+1)
	}
	l.mu.nextID = next
	return l, nil
}

// ReadLastID reads the lastId file of dir, if there is one (ok false if
// not). Its bytes must be a log id in hexadecimal, surrounded by white
// space at most; anything else is an error matching ErrCorruption naming
// the file.
func ReadLastID(fs vfs.FS, dir string) (id int64, ok bool, err error) {
	path := filepath.Join(dir, LastIDFileName)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, errors.Wrapf(err, "entrylog: opening %s", path)
	}
	defer f.Close()
	buf := make([]byte, 32)
	n, err := f.ReadAt(buf, 0)
	if n == 0 && err != nil && err != io.EOF {
		return 0, false, errors.Wrapf(err, "entrylog: reading %s", path)
	}
	id, perr := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 16, 64)
	if perr != nil || id < 0 || id > MaxLogID {
		return 0, false, errors.Wrapf(ErrCorruption, "entrylog: %s holds %q, not a log id", path, buf[:n])
	}
	return id, true, nil
}

// ListLogs returns the ids of the logs in dir, ascending.
func ListLogs(fs vfs.FS, dir string) ([]int64, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "entrylog: listing %s", dir)
	}
	var ids []int64
	for _, name := range names {
		if id, ok := ParseLogFileName(name); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Dir returns the directory of the logs.
func (l *Logger) Dir() string { return l.dir }

// LogPath returns the path of log id.
func (l *Logger) LogPath(id int64) string { return filepath.Join(l.dir, LogFileName(id)) }

// AddEntry appends a record and returns its location. The record is
// durable only after the next Flush.
func (l *Logger) AddEntry(ledgerID, entryID int64, payload []byte) (int64, error) {
	if len(payload) > MaxPayloadSize {
		return 0, errors.Wrapf(ErrInvalidArgument, "entrylog: payload of %d bytes for entry %d of ledger %d is larger than the maximum %d", len(payload), entryID, ledgerID, MaxPayloadSize)
	}
	if l.opts.ReadOnly {
		return 0, errors.Wrap(ErrInvalidArgument, "entrylog: AddEntry on logs open read-only")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return 0, errors.Wrap(ErrClosed, "entrylog: AddEntry")
	}
	size := int64(RecordOverhead + len(payload))
	if cur := l.mu.cur; cur != nil && cur.offset+size > l.opts.LogSizeLimit && cur.offset > HeaderSize {
		if err := l.rotateLocked(); err != nil {
			return 0, err
		}
	}
	if l.mu.cur == nil {
		if err := l.newLogLocked(); err != nil {
			return 0, err
		}
	}
	cur := l.mu.cur
	location := MakeLocation(cur.id, cur.offset+SizeFieldSize)
	if len(cur.buf)+int(size) > l.opts.WriteBufferSize {
		if err := l.writeBufferLocked(); err != nil {
			return 0, err
		}
	}
	if int(size) > l.opts.WriteBufferSize {
		// Too large to buffer: straight to the file, the head and then
		// the payload itself (no copy of a payload of up to 256 MiB).
		head := recordHead(ledgerID, entryID, payload)
		if err := l.writeLocked(head[:], payload); err != nil {
			return 0, err
		}
	} else {
		cur.buf = appendRecord(cur.buf, ledgerID, entryID, payload)
	}
	cur.offset += size
	cur.usage[ledgerID] += size
	if l.opts.FlushIntervalBytes > 0 {
		cur.unsynced += size
		if cur.unsynced >= l.opts.FlushIntervalBytes {
			if err := l.regularSyncLocked(); err != nil {
				return 0, err
			}
		}
	}
	return location, nil
}

// regularSyncLocked writes the buffered records and fdatasyncs the
// current log (FlushIntervalBytes). A failure abandons the log, as a
// failed write does: the caller writes the record again.
func (l *Logger) regularSyncLocked() error {
	cur := l.mu.cur
	if err := l.writeBufferLocked(); err != nil {
		return err
	}
	if err := cur.f.Datasync(); err != nil {
		return l.failLocked(errors.Wrapf(err, "entrylog: syncing %s (flushEntrylogBytes)", cur.path))
	}
	cur.unsynced = 0
	l.syncs.Add(1)
	l.regularSyncs.Add(1)
	return nil
}

// Flush writes the buffered records and fsyncs the current log, and the
// directory if a log was created since the last Flush. When it returns
// nil, every record added before it is durable.
func (l *Logger) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return errors.Wrap(ErrClosed, "entrylog: Flush")
	}
	return l.flushLocked()
}

func (l *Logger) flushLocked() error {
	if cur := l.mu.cur; cur != nil {
		if err := l.writeBufferLocked(); err != nil {
			return err
		}
		if err := cur.f.Sync(); err != nil {
			return l.failLocked(errors.Wrapf(err, "entrylog: syncing %s", cur.path))
		}
		cur.unsynced = 0
		l.syncs.Add(1)
	}
	if l.mu.needDirSync {
		if err := vfs.SyncDir(l.fs, l.dir); err != nil {
			return errors.Wrap(err, "entrylog")
		}
		l.mu.needDirSync = false
	}
	return nil
}

// Position returns a location below that of every record added from now
// on (and above those of every record added so far).
func (l *Logger) Position() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.mu.cur; cur != nil {
		return MakeLocation(cur.id, cur.offset)
	}
	return MakeLocation(l.mu.nextID, 0)
}

// CurrentLogID returns the id of the log being written, or -1 when there
// is none (before the first record, after a rotation or a failure).
func (l *Logger) CurrentLogID() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.cur == nil {
		return -1
	}
	return l.mu.cur.id
}

// newLogLocked creates the next log, records its id in lastId and writes
// its header.
func (l *Logger) newLogLocked() error {
	id := l.mu.nextID
	if id > MaxLogID {
		return errors.Newf("entrylog: log id %#x would exceed the maximum %#x", id, MaxLogID)
	}
	if err := replaceFile(l.fs, filepath.Join(l.dir, LastIDFileName), EncodeLastID(id)); err != nil {
		return errors.Wrapf(err, "entrylog: recording log id %#x in %s", id, LastIDFileName)
	}
	// From here the id is used, whatever happens to the log.
	l.mu.nextID++
	path := l.LogPath(id)
	// Exclusive, so that a log is never overwritten.
	f, err := l.fs.CreateExclusive(path)
	if err != nil {
		return errors.Wrapf(err, "entrylog: creating %s", path)
	}
	l.mu.needDirSync = true
	if _, err := f.Write(encodeHeader(id)); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "entrylog: writing the header of %s", path)
	}
	rf, err := l.fs.Open(path)
	if err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "entrylog: opening %s for reading", path)
	}
	r := &readLog{id: id, f: rf, format: FormatBIEL}
	r.limit.Store(HeaderSize)
	l.readMu.Lock()
	l.readers[id] = r
	l.readMu.Unlock()
	l.mu.cur = &writeLog{id: id, path: path, f: f, buf: make([]byte, 0, l.opts.WriteBufferSize),
		offset: HeaderSize, written: HeaderSize, reader: r, usage: map[int64]int64{}}
	l.logsCreated.Add(1)
	l.log.Info("created entry log", "id", id, "path", path)
	return nil
}

// writeBufferLocked hands the buffered records to the file.
func (l *Logger) writeBufferLocked() error {
	cur := l.mu.cur
	if len(cur.buf) == 0 {
		return nil
	}
	err := l.writeLocked(cur.buf)
	cur.buf = cur.buf[:0]
	return err
}

// writeLocked writes the pieces, one after the other, to the current log;
// on failure it abandons the log. Readers see the bytes once every piece
// is written.
func (l *Logger) writeLocked(pieces ...[]byte) error {
	cur := l.mu.cur
	for _, b := range pieces {
		if _, err := cur.f.Write(b); err != nil {
			return l.failLocked(errors.Wrapf(err, "entrylog: writing %s", cur.path))
		}
		cur.written += int64(len(b))
		l.bytesWritten.Add(int64(len(b)))
	}
	cur.reader.limit.Store(cur.written)
	return nil
}

// rotateLocked syncs and closes the current log for writing.
func (l *Logger) rotateLocked() error {
	cur := l.mu.cur
	if err := l.writeBufferLocked(); err != nil {
		return err
	}
	if err := cur.f.Sync(); err != nil {
		return l.failLocked(errors.Wrapf(err, "entrylog: syncing %s", cur.path))
	}
	l.syncs.Add(1)
	l.mu.rotated[cur.id] = metadataFromUsage(cur.id, cur.written, cur.usage)
	err := cur.f.Close()
	l.mu.cur = nil
	if err != nil {
		return errors.Wrapf(err, "entrylog: closing %s", cur.path)
	}
	l.log.Info("rotated entry log", "id", cur.id, "size", cur.written)
	return nil
}

// failLocked abandons the current log after a write or sync error: the
// next record starts a new log. What the log holds stays readable up to
// what was written; the caller writes again whatever was not yet flushed.
func (l *Logger) failLocked(err error) error {
	if cur := l.mu.cur; cur != nil {
		_ = cur.f.Close()
		l.mu.cur = nil
		l.failures.Add(1)
		l.log.Warn("entry log write failed; the next records go to a new log", "id", cur.id, "err", err)
	}
	return err
}

// Close writes and syncs the buffered records and closes every file.
// Calls after Close fail with an error matching ErrClosed.
func (l *Logger) Close() error {
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return errors.Wrap(ErrClosed, "entrylog: Close")
	}
	err := l.flushLocked()
	if cur := l.mu.cur; cur != nil {
		if err == nil {
			// The next Open starts a new log: this one is done.
			l.mu.rotated[cur.id] = metadataFromUsage(cur.id, cur.written, cur.usage)
		}
		if cerr := cur.f.Close(); err == nil && cerr != nil {
			err = errors.Wrapf(cerr, "entrylog: closing %s", cur.path)
		}
		l.mu.cur = nil
	}
	for _, m := range l.mu.rotated {
		l.writeMetadata(m)
	}
	l.mu.rotated = nil
	l.mu.closed = true
	l.mu.Unlock()

	l.closed.Store(true)
	l.readMu.Lock()
	for id, r := range l.readers {
		r.mu.Lock()
		r.removed = true
		_ = r.f.Close()
		r.mu.Unlock()
		delete(l.readers, id)
	}
	l.readMu.Unlock()
	return err
}

// Metrics are a Logger's counters.
type Metrics struct {
	// BytesWritten counts the bytes written to logs (headers included).
	BytesWritten int64
	// Syncs counts log fsyncs, of which RegularSyncs were the
	// fdatasyncs of FlushIntervalBytes.
	Syncs, RegularSyncs int64
	// LogsCreated counts the logs this Logger created.
	LogsCreated int64
	// WriteFailures counts the logs abandoned after a write or sync
	// error.
	WriteFailures int64
	// CurrentLogID is the log being written, -1 if none.
	CurrentLogID int64
}

// Metrics returns the Logger's counters.
func (l *Logger) Metrics() Metrics {
	return Metrics{
		BytesWritten:  l.bytesWritten.Load(),
		Syncs:         l.syncs.Load(),
		RegularSyncs:  l.regularSyncs.Load(),
		LogsCreated:   l.logsCreated.Load(),
		WriteFailures: l.failures.Load(),
		CurrentLogID:  l.CurrentLogID(),
	}
}

// replaceFile replaces name (lastId, a ledgers map) with data, atomically
// and durably, through name.tmp.
func replaceFile(fs vfs.FS, name string, data []byte) error {
	return vfs.ReplaceFile(fs, name, name+".tmp", data)
}

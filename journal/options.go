package journal

import (
	"log/slog"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Defaults: upstream's (ServerConfiguration, BookKeeper 4.18).
const (
	// DefaultMaxGroupWait is journalMaxGroupWaitMSec.
	DefaultMaxGroupWait = 2 * time.Millisecond
	// DefaultBufferedWritesThreshold is journalBufferedWritesThreshold.
	DefaultBufferedWritesThreshold = 512 << 10
	// DefaultMaxFileSize is journalMaxSizeMB (2048).
	DefaultMaxFileSize = 2048 << 20
	// DefaultPreAllocSize is journalPreAllocSizeMB (16).
	DefaultPreAllocSize = 16 << 20
	// DefaultWriteBufferSize is journalWriteBufferSizeKB (64).
	DefaultWriteBufferSize = 64 << 10
	// DefaultAlignmentSize is journalAlignmentSize.
	DefaultAlignmentSize = 512
	// DefaultMaxBackupJournals is journalMaxBackups.
	DefaultMaxBackupJournals = 5
	// DefaultPageCacheFlushInterval is journalPageCacheFlushIntervalMSec.
	DefaultPageCacheFlushInterval = time.Second
)

// maxPendingBytes bounds the records queued and not yet written, per
// journal: an add waits for room beyond it (one record alone may be
// larger). Upstream bounds its queue by journalMaxMemorySizeMb.
const maxPendingBytes = 16 << 20

// Options configure the journals of a bookie. Each field names its upstream
// key (bk_server.conf). Zero fields mean their defaults (upstream's); a
// boolean whose upstream default is true is spelled as its negation, and a
// negative number spells a setting whose zero would be real ("none").
type Options struct {
	// FS is the file system of every journal and lastMark file. Default
	// vfs.Default.
	FS vfs.FS
	// JournalDirectories (journalDirectories): one journal per directory,
	// its files in <dir>/current. Ledger L's records go to journal
	// L mod n (sign-safe), as upstream spreads them. At least one.
	JournalDirectories []string
	// LedgerDirectories (ledgerDirectories): each holds the lastMark
	// files, in <dir>/current. At least one.
	LedgerDirectories []string

	// NoSyncData is journalSyncData=false: an add completes once its
	// record is written to the operating system, not once it is synced
	// (upstream's weaker promise: a power loss can lose acknowledged
	// adds, a process crash cannot). The journal is then synced every
	// PageCacheFlushInterval, at a roll and at Close.
	NoSyncData bool
	// NoWriteData is journalWriteData=false: entries are not journaled at
	// all and their adds complete at once (a crash loses every entry the
	// storage had not checkpointed); meta-entries still are, as upstream.
	NoWriteData bool
	// MaxGroupWait (journalMaxGroupWaitMSec) is how long the first add of
	// a batch may wait for others to join it before the batch is written.
	// Default DefaultMaxGroupWait; negative: no wait (every wake-up writes
	// what is queued, as FlushWhenQueueEmpty).
	MaxGroupWait time.Duration
	// BufferedWritesThreshold (journalBufferedWritesThreshold): a batch
	// holding more bytes is written at once. Default
	// DefaultBufferedWritesThreshold.
	BufferedWritesThreshold int64
	// BufferedEntriesThreshold (journalBufferedEntriesThreshold): a batch
	// holding more adds is written at once. Default 0: no limit.
	BufferedEntriesThreshold int
	// FlushWhenQueueEmpty (journalFlushWhenQueueEmpty): write a batch as
	// soon as nothing more is queued, without waiting MaxGroupWait. Adds
	// queued while a write or an fsync runs still share the next one.
	FlushWhenQueueEmpty bool
	// NoAdaptiveGroupWrites is journalAdaptiveGroupWrites=false: a batch
	// waits MaxGroupWait (or a threshold) as upstream's does. By default
	// (adaptive) a batch is also written as soon as it holds as many adds
	// as the batch before it: the writers that were waiting have all come,
	// and waiting longer would only add latency (writer.go). Upstream 4.18
	// reads the key and does nothing with it.
	NoAdaptiveGroupWrites bool
	// MaxFileSize (journalMaxSizeMB, in bytes here): a journal file that a
	// batch leaves longer than this is closed after its last fsync and the
	// next batch starts a new file. Default DefaultMaxFileSize.
	MaxFileSize int64
	// PreAllocSize (journalPreAllocSizeMB, in bytes here): records are
	// written into zeros written ahead of them PreAllocSize at a time, as
	// upstream does, and synced with fdatasync, which has no metadata to
	// flush. A new file gets its first chunk at creation; a pre-allocator
	// goroutine writes and syncs the next chunk ahead of the writer, off
	// the syncs of records; a batch that outruns it writes the zeros it
	// needs itself and is synced with a full fsync (prealloc.go). A file's
	// records end where the zeros begin, which readers (ours and
	// upstream's) take for the end of the journal.
	// Default DefaultPreAllocSize.
	PreAllocSize int64
	// WriteBufferSize (journalWriteBufferSizeKB, in bytes here) is the
	// initial capacity of a batch's buffer; a batch is written with one
	// write whatever its size. Default DefaultWriteBufferSize.
	WriteBufferSize int
	// AlignmentSize (journalAlignmentSize): from format version 5 every
	// batch ends with a padding record up to a multiple of it. At least
	// 8. Default DefaultAlignmentSize.
	AlignmentSize int
	// FormatVersionToWrite (journalFormatVersionToWrite): 4 to 6. Default
	// DefaultWriteVersion (6). Version 4 has no padding; explicit LACs
	// need version 6 (below it they are not written, as upstream).
	FormatVersionToWrite int
	// MaxBackupJournals (journalMaxBackups): how many journal files
	// before the last log mark's file a checkpoint keeps. Default
	// DefaultMaxBackupJournals; negative: none.
	MaxBackupJournals int
	// PageCacheFlushInterval (journalPageCacheFlushIntervalMSec) is how
	// often a NoSyncData journal is synced, at the first write after it
	// elapsed. Default DefaultPageCacheFlushInterval.
	PageCacheFlushInterval time.Duration

	// Logger receives the journal's log lines: a WARN for each torn tail
	// a replay drops and each unreadable lastMark file, INFO for files
	// created and removed. Default: discard.
	Logger *slog.Logger
	// OnFailure, if set, is called once, from a journal's goroutine, when
	// a write or an fsync of that journal fails: the journal then refuses
	// every add (upstream's JournalAliveListener, which shuts the bookie
	// down).
	OnFailure func(journalDir string, err error)
}

// resolved returns o with defaults filled in, or an error for a bad
// setting.
func (o Options) resolved() (Options, error) {
	bad := func(format string, args ...any) (Options, error) {
		return o, errors.Wrapf(ErrInvalidArgument, format, args...)
	}
	if len(o.JournalDirectories) == 0 {
		return bad("journal: no journal directory")
	}
	if len(o.LedgerDirectories) == 0 {
		return bad("journal: no ledger directory (the lastMark files live there)")
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	o.MaxGroupWait = defaultOrOff(o.MaxGroupWait, DefaultMaxGroupWait)
	if o.BufferedWritesThreshold <= 0 {
		o.BufferedWritesThreshold = DefaultBufferedWritesThreshold
	}
	if o.BufferedEntriesThreshold < 0 {
		o.BufferedEntriesThreshold = 0
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.PreAllocSize <= 0 {
		o.PreAllocSize = DefaultPreAllocSize
	}
	if o.WriteBufferSize <= 0 {
		o.WriteBufferSize = DefaultWriteBufferSize
	}
	if o.AlignmentSize == 0 {
		o.AlignmentSize = DefaultAlignmentSize
	}
	if o.AlignmentSize < paddingHeaderSize {
		return bad("journal: journalAlignmentSize %d is below %d, the size of a padding record", o.AlignmentSize, paddingHeaderSize)
	}
	if o.FormatVersionToWrite == 0 {
		o.FormatVersionToWrite = DefaultWriteVersion
	}
	if o.FormatVersionToWrite < MinWriteVersion || o.FormatVersionToWrite > MaxVersion {
		return bad("journal: journalFormatVersionToWrite %d is not between %d and %d", o.FormatVersionToWrite, MinWriteVersion, MaxVersion)
	}
	o.MaxBackupJournals = defaultOrOff(o.MaxBackupJournals, DefaultMaxBackupJournals)
	if o.PageCacheFlushInterval <= 0 {
		o.PageCacheFlushInterval = DefaultPageCacheFlushInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// defaultOrOff resolves a setting of which 0 means the default def and a
// negative value means none (0): no group wait, no backup journals kept.
func defaultOrOff[T ~int | ~int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

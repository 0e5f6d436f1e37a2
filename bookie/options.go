package bookie

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Defaults, BookKeeper's where it has one.
const (
	// DefaultFlushInterval is upstream's flushInterval.
	DefaultFlushInterval = 10 * time.Second
	// DefaultGCWaitTime is upstream's gcWaitTime.
	DefaultGCWaitTime = 10 * time.Minute
	// DefaultMaxThrottleTime is upstream's dbStorage_maxThrottleTimeMs.
	DefaultMaxThrottleTime = 10 * time.Second
	// DefaultWriteCacheSize and DefaultReadCacheSize are the caches of all
	// directories together (conf's defaults, 512 MiB each).
	DefaultWriteCacheSize = 512 << 20
	DefaultReadCacheSize  = 512 << 20
	// DefaultReadAheadBatchSize is upstream's
	// dbStorage_readAheadCacheBatchSize.
	DefaultReadAheadBatchSize = 100
	// DefaultCheckpointRetryInterval and DefaultCheckpointRetryMaxInterval
	// are the checkpoint worker's backoff after failed checkpoints.
	DefaultCheckpointRetryInterval    = 100 * time.Millisecond
	DefaultCheckpointRetryMaxInterval = 5 * time.Second
	// DefaultMinUsableSizeForIndexFileCreation is upstream's
	// minUsableSizeForIndexFileCreation default, 100 MiB.
	DefaultMinUsableSizeForIndexFileCreation = 100 << 20
)

// Options configure a Storage. Zero fields mean their defaults; a negative
// field spells a setting whose zero would be real ("none"), as lsm.Options
// describes.
type Options struct {
	// LedgerDirs are the ledger directories; each one's entry logs live in
	// <dir>/current. At least one.
	LedgerDirs []string
	// IndexDirs pair with LedgerDirs by position: directory i's indexes
	// live in <IndexDirs[i]>/current/locations and .../ledgers. Default:
	// LedgerDirs.
	IndexDirs []string

	// FlushInterval is the checkpoint period (flushInterval). Default
	// DefaultFlushInterval; negative: no periodic checkpoint (the caller
	// calls Checkpoint; a full write cache still triggers one).
	FlushInterval time.Duration
	// GCWaitTime is the garbage collector's period (gcWaitTime): it
	// retries the purges of deleted ledgers that failed. Default
	// DefaultGCWaitTime; negative: none.
	GCWaitTime time.Duration
	// WriteCacheSize bounds the write caches of all directories together,
	// in bytes (dbStorage_writeCacheMaxSizeMb): each directory gets an
	// equal share, split in two halves (the cache being filled and the one
	// being flushed). Default DefaultWriteCacheSize.
	WriteCacheSize int64
	// ReadCacheSize bounds the read caches of all directories together
	// (dbStorage_readAheadCacheMaxSizeMb). Default DefaultReadCacheSize;
	// negative: no read cache.
	ReadCacheSize int64
	// MaxThrottleTime is how long an AddEntry waits for room in a full
	// write cache before it fails with ErrRejected
	// (dbStorage_maxThrottleTimeMs). Default DefaultMaxThrottleTime;
	// negative: no wait.
	MaxThrottleTime time.Duration
	// ReadAheadBatchSize is the entries read ahead after a read-cache miss
	// (dbStorage_readAheadCacheBatchSize). Default
	// DefaultReadAheadBatchSize; negative: no read-ahead.
	ReadAheadBatchSize int
	// ReadAheadBatchBytes bounds the bytes read ahead
	// (dbStorage_readAheadCacheBatchBytesSize). Zero or negative: no
	// limit but ReadAheadBatchSize.
	ReadAheadBatchBytes int64
	// GC configures entry-log garbage collection and compaction, which
	// runs every GCWaitTime (see GCOptions).
	GC GCOptions
	// LogSizeLimit is the size at which entry logs rotate (logSizeLimit).
	// Default entrylog.MaxLogSizeLimit (1 GiB).
	LogSizeLimit int64
	// FlushEntryLogBytes (flushEntrylogBytes): an entry log is written out
	// and fdatasynced each time this many bytes of records were added to
	// it since its last sync, so that a checkpoint's fsync finds little
	// left to write (entrylog.Options.FlushIntervalBytes). 0 or less: the
	// logs are synced only at checkpoints and rotations (upstream's
	// default).
	FlushEntryLogBytes int64
	// CheckpointRetryInterval is how long the checkpoint worker waits
	// before it retries a failed checkpoint, doubled for each failure in
	// a row up to CheckpointRetryMaxInterval (a full disk must not turn
	// into a tight loop). Close also retries a final checkpoint that
	// failed for lack of space for up to CheckpointRetryMaxInterval.
	// Defaults DefaultCheckpointRetryInterval and
	// DefaultCheckpointRetryMaxInterval.
	CheckpointRetryInterval, CheckpointRetryMaxInterval time.Duration

	// ReadOnlyModeDisabled is readOnlyModeEnabled=false: a full or
	// failing directory still refuses writes, OnReadOnly is told (the
	// service shuts down then, as upstream does), and SetReadOnly(true)
	// is refused. Default false: the storage turns read-only.
	ReadOnlyModeDisabled bool
	// ReadOnlyOnlyWhenAllDisksFull is readOnlyModeOnAnyDiskFullEnabled=false:
	// a directory over DiskUsageThreshold takes no new ledger (a new one
	// goes to the next directory that is not full, the routing switching
	// to recorded, as an expansion does) and refuses adds to its own
	// ledgers (ErrReadOnly, naming it), while the storage stays writable;
	// it turns read-only only when every directory is full. Default false:
	// any full directory turns the storage read-only, upstream's default
	// (true).
	ReadOnlyOnlyWhenAllDisksFull bool
	// ForceReadOnly is forceReadOnlyBookie=true: the storage opens
	// read-only and stays so (upstream's ReadOnlyBookie): writes are
	// refused, reads, deletions, checkpoints and compactions go on, and
	// SetReadOnly(false) is refused. It needs the read-only mode
	// (ReadOnlyModeDisabled false).
	ForceReadOnly bool
	// DiskUsageThreshold (diskUsageThreshold): a ledger or index
	// directory whose file system is more used than this fraction turns
	// the storage read-only, and a ledger directory this full suspends
	// minor compactions too (GCOptions, the disk-pressure rules). In (0,
	// 1); default DefaultDiskUsageThreshold.
	DiskUsageThreshold float64
	// DiskUsageWarnThreshold (diskUsageWarnThreshold): above it, each
	// disk check logs a warning and periodic garbage collection skips
	// major compactions. In (0, DiskUsageThreshold]; default
	// DefaultDiskUsageWarnThreshold (capped at DiskUsageThreshold).
	DiskUsageWarnThreshold float64
	// DiskUsageLwmThreshold (diskUsageLwmThreshold): a directory turned
	// read-only for space is writable again once below it. In (0,
	// DiskUsageThreshold]; default DiskUsageThreshold.
	DiskUsageLwmThreshold float64
	// DiskCheckInterval (diskCheckInterval) is the disk monitor's period.
	// Default DefaultDiskCheckInterval; negative: no monitor (CheckDisks
	// checks on demand). The disk usage is FS.DiskUsage (statfs(2) on
	// the operating system; a vfs.MemFS reports its capacity).
	DiskCheckInterval time.Duration
	// MinUsableSizeForEntryLogCreation (minUsableSizeForEntryLogCreation)
	// is the usable space a ledger disk needs for DirStorage's
	// HasSpaceForEntryLog (compaction of a read-only storage). Default
	// 1.2 * LogSizeLimit, upstream's.
	MinUsableSizeForEntryLogCreation int64
	// MinUsableSizeForIndexFileCreation (minUsableSizeForIndexFileCreation)
	// is the usable space an index directory needs for a read-only
	// storage (or a full directory) to create index files: an entry
	// location compaction writes its new tables before it removes the old
	// (DirStorage.CanCreateIndexFiles). Default
	// DefaultMinUsableSizeForIndexFileCreation, upstream's.
	MinUsableSizeForIndexFileCreation int64
	// OnReadOnly, if set, is called (outside the storage's locks) each
	// time the storage turns read-only or writable again.
	OnReadOnly func(readOnly bool, reason string)

	// CheckpointSource, if set, is told of the checkpoints (a bookie's
	// journal; see CheckpointSource): each directory takes a checkpoint
	// from it before swapping its write cache, and the storage reports
	// one complete once every directory has made it durable. Without
	// one, what the write caches hold is durable only at the next
	// checkpoint.
	CheckpointSource CheckpointSource

	// FS holds every file of the storage: the entry logs and both indexes
	// of every directory, so that a crash or a failing disk hits them
	// together, as it does a real bookie. Default vfs.Default (the
	// operating system).
	FS vfs.FS
	// Index configures the entry location indexes; nil means
	// entrylocation.DefaultOptions(). Its Engine.FS must be unset,
	// vfs.Default or FS: the index goes on FS.
	Index *entrylocation.Options
	// LedgersEngine configures the ledgers indexes' engine. Nil: small
	// defaults (4 MiB memtables, an 8 MiB block cache). Its FS, like
	// Index's, must be unset, vfs.Default or FS.
	LedgersEngine *lsm.Options
	// EnableStatistics times add-entry and read-entry (enableStatistics);
	// counts are always kept, and checkpoints are always timed.
	EnableStatistics bool
	// AllowStorageExpansion (allowStorageExpansion) lets the storage open
	// with directories added to the list recorded at its first start (new
	// directories must be empty): existing ledgers stay where they are,
	// new ledgers use every directory. Without it a changed list is
	// refused (see layout_guard.go).
	AllowStorageExpansion bool
	// RelocateCommand is the command that records moved directories' new
	// paths for this configuration, as the refusal of moved directories
	// names it (bookie-index serve passes its own --conf). Default:
	// "bookie-index relocate --conf FILE".
	RelocateCommand string
	// LatencyRollover is the window the latency quantiles cover, the
	// storage's and its indexes' (prometheusStatsLatencyRolloverSeconds).
	// Zero: 60 seconds.
	LatencyRollover time.Duration
	// Logger receives the storage's log lines and, where Index,
	// Index.Engine or LedgersEngine have no logger of their own, those of
	// the indexes and of every engine: one logger for the whole storage.
	// Default: discarded.
	Logger *slog.Logger
}

// resolved are Options with every default filled in.
type resolved struct {
	Options
	gc          gcSettings
	indexOpts   entrylocation.Options
	ledgersOpts lsm.Options
}

// orDefault sets an option left at its zero value to its default.
func orDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

func (o *Options) resolve() (*resolved, error) {
	r := &resolved{}
	if o != nil {
		r.Options = *o
	}
	if len(r.LedgerDirs) == 0 {
		return nil, errors.Wrap(ErrInvalidArgument, "bookie: no ledger directories")
	}
	if len(r.IndexDirs) == 0 {
		r.IndexDirs = r.LedgerDirs
	}
	if len(r.IndexDirs) != len(r.LedgerDirs) {
		return nil, errors.Wrapf(ErrInvalidArgument, "bookie: %d index directories for %d ledger directories; they pair by position", len(r.IndexDirs), len(r.LedgerDirs))
	}
	seen := map[string]bool{}
	for i := range r.LedgerDirs {
		for _, d := range []string{filepath.Join(r.LedgerDirs[i], "current", "ledger"), filepath.Join(r.IndexDirs[i], "current", "index")} {
			if seen[d] {
				return nil, errors.Wrapf(ErrInvalidArgument, "bookie: directory %s is listed twice", filepath.Dir(filepath.Dir(d)))
			}
			seen[d] = true
		}
	}
	orDefault(&r.FlushInterval, DefaultFlushInterval)
	orDefault(&r.GCWaitTime, DefaultGCWaitTime)
	orDefault(&r.MaxThrottleTime, DefaultMaxThrottleTime)
	orDefault(&r.CheckpointRetryInterval, DefaultCheckpointRetryInterval)
	orDefault(&r.CheckpointRetryMaxInterval, max(DefaultCheckpointRetryMaxInterval, r.CheckpointRetryInterval))
	if r.CheckpointRetryInterval < 0 || r.CheckpointRetryMaxInterval < r.CheckpointRetryInterval {
		return nil, errors.Wrapf(ErrInvalidArgument, "bookie: CheckpointRetryInterval %s must be positive and at most CheckpointRetryMaxInterval %s",
			r.CheckpointRetryInterval, r.CheckpointRetryMaxInterval)
	}
	orDefault(&r.WriteCacheSize, DefaultWriteCacheSize)
	if r.WriteCacheSize < 0 {
		return nil, errors.Wrapf(ErrInvalidArgument, "bookie: WriteCacheSize %d is negative", r.WriteCacheSize)
	}
	orDefault(&r.ReadCacheSize, DefaultReadCacheSize)
	orDefault(&r.ReadAheadBatchSize, DefaultReadAheadBatchSize)
	orDefault(&r.LogSizeLimit, entrylog.MaxLogSizeLimit)
	if r.FS == nil {
		r.FS = vfs.Default
	}
	if err := r.resolveReadOnly(); err != nil {
		return nil, err
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	if r.Index != nil {
		r.indexOpts = *r.Index
	} else {
		r.indexOpts = *entrylocation.DefaultOptions()
	}
	if r.indexOpts.Logger == nil {
		r.indexOpts.Logger = r.Logger
	}
	if r.EnableStatistics {
		r.indexOpts.EnableStatistics = true
	}
	orDefault(&r.indexOpts.LatencyRollover, r.LatencyRollover)
	orDefault(&r.RelocateCommand, "bookie-index relocate --conf FILE")
	// A copy: the caller's engine options are left as they are.
	var engine lsm.Options
	if r.indexOpts.Engine != nil {
		engine = *r.indexOpts.Engine
	} else {
		engine = *lsm.DefaultOptions()
	}
	if err := ondisk.UseFS(&engine, r.FS, "Index.Engine.FS"); err != nil {
		return nil, err
	}
	r.indexOpts.Engine = &engine
	var err error
	if r.gc, err = resolveGC(r.GC, r.GCWaitTime); err != nil {
		return nil, err
	}
	if r.GC.UseTargetEntryLogSizeForGc {
		r.gc.targetSize = r.LogSizeLimit
	}
	orDefault(&r.GC.MetadataCacheBytes, DefaultMetadataCacheBytes)
	r.ledgersOpts = ondisk.LedgersEngineOptions(r.LedgersEngine, r.Logger)
	if err := ondisk.UseFS(&r.ledgersOpts, r.FS, "LedgersEngine.FS"); err != nil {
		return nil, err
	}
	return r, nil
}

// resolveReadOnly fills in and checks the read-only mode's settings.
func (r *resolved) resolveReadOnly() error {
	orDefault(&r.DiskUsageThreshold, DefaultDiskUsageThreshold)
	orDefault(&r.DiskUsageWarnThreshold, min(DefaultDiskUsageWarnThreshold, r.DiskUsageThreshold))
	orDefault(&r.DiskUsageLwmThreshold, r.DiskUsageThreshold)
	t, w, l := r.DiskUsageThreshold, r.DiskUsageWarnThreshold, r.DiskUsageLwmThreshold
	if t <= 0 || t >= 1 || w <= 0 || w > t || l <= 0 || l > t {
		return errors.Wrapf(ErrInvalidArgument, "bookie: disk usage thresholds %g (warn %g, low-water mark %g) are not valid: the threshold must be > 0 and < 1, and the warn threshold and low-water mark > 0 and at most the threshold", t, w, l)
	}
	orDefault(&r.DiskCheckInterval, DefaultDiskCheckInterval)
	orDefault(&r.MinUsableSizeForEntryLogCreation, r.LogSizeLimit/5*6)
	orDefault(&r.MinUsableSizeForIndexFileCreation, DefaultMinUsableSizeForIndexFileCreation)
	if r.ForceReadOnly && r.ReadOnlyModeDisabled {
		return errors.Wrap(ErrInvalidArgument, "bookie: ForceReadOnly (forceReadOnlyBookie) needs the read-only mode, which ReadOnlyModeDisabled (readOnlyModeEnabled=false) turns off")
	}
	return nil
}

// writeCacheHalf returns the size of each of a directory's two write
// caches.
func (r *resolved) writeCacheHalf() int64 {
	return r.WriteCacheSize / int64(len(r.LedgerDirs)) / 2
}

// readCacheSize returns the size of a directory's read cache.
func (r *resolved) readCacheSize() int64 {
	if r.ReadCacheSize < 0 {
		return 0
	}
	return r.ReadCacheSize / int64(len(r.LedgerDirs))
}

// maxEntrySize returns the largest payload AddEntry accepts: it must fit
// an empty write cache, and an entry log record.
func (r *resolved) maxEntrySize() int {
	return int(max(min(r.writeCacheHalf()-writeCacheEntryOverhead, entrylog.MaxPayloadSize), 0))
}

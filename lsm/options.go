package lsm

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// FS is the file system interface the engine does all its I/O through.
type FS = vfs.FS

// NewMemFS returns an in-memory file system (for tests and tools).
func NewMemFS() FS { return vfs.NewMem() }

// Options configure a DB. Fields are named after their RocksDB options
// (the OPTIONS-file key is given in each comment) so that BookKeeper
// configurations map one to one; Open(dir, nil) uses DefaultOptions().
//
// Zero values: a zero field means its default, written in its comment (the
// Default… constants), so that a literal setting a few fields is the
// defaults plus those. A field whose zero is a real setting spells that
// setting with a negative value: BloomBitsPerKey < 0 writes no filters,
// BlockCacheNumShardBits < 0 makes one shard, BlockCacheHighPriorityRatio
// < 0 reserves no share, MaxOpenFiles < 0 keeps every table open. Every
// option struct of the repository (bookie.Options, entrylocation.Options,
// the internal packages' options) follows this rule.
type Options struct {
	// FS is the file system. Default: the operating system's.
	FS FS
	// Logger receives the engine's log lines (flushes, compactions,
	// recovery), each with db=<dir>. Nil: discarded. EnsureDefaults leaves
	// it nil, so that a layer above (entrylocation, bookie) can tell "not
	// set" from a choice and give the engine its own logger.
	Logger *slog.Logger
	// ReadOnly opens an existing DB without writing anything: no WAL,
	// no flushes, no compactions, no recovery writes (for tools).
	ReadOnly bool

	// WriteBufferSize (write_buffer_size) is the memtable size that
	// triggers a switch and flush. Default 64 MiB.
	WriteBufferSize int64
	// MaxWriteBufferNumber (max_write_buffer_number) bounds the memtables,
	// mutable and immutable; writes stall while it is reached. Default 4.
	MaxWriteBufferNumber int

	// NumLevels (num_levels). Default 7.
	NumLevels int
	// Level0FileNumCompactionTrigger (level0_file_num_compaction_trigger):
	// L0 tables that start a compaction into the base level. Default 4.
	Level0FileNumCompactionTrigger int
	// Level0SlowdownWritesTrigger (level0_slowdown_writes_trigger): L0
	// tables from which writes are delayed. Default 20.
	Level0SlowdownWritesTrigger int
	// Level0StopWritesTrigger (level0_stop_writes_trigger): L0 tables at
	// which writes wait for compactions. Default 36.
	Level0StopWritesTrigger int
	// MaxBytesForLevelBase (max_bytes_for_level_base): target size of the
	// base level. Default 256 MiB.
	MaxBytesForLevelBase int64
	// MaxBytesForLevelMultiplier (max_bytes_for_level_multiplier): size
	// ratio between adjacent levels. Default 10.
	MaxBytesForLevelMultiplier float64
	// TargetFileSizeBase (target_file_size_base): size of compaction
	// output tables. Default 64 MiB.
	TargetFileSizeBase int64
	// MaxCompactionBytes (max_compaction_bytes) bounds the input bytes of
	// one automatic compaction, so that each one finishes in bounded time
	// and what it did survives a crash however often the process dies. An
	// L0 compaction takes the oldest L0 tables (and the base-level tables
	// they overlap) while they fit; when even the oldest table's overlap
	// does not fit, it moves one slice of the key space at a time (see
	// compaction_picker_l0.go). A bound below a table's size still lets
	// one table through (and one base table of a slice). Default 25 ×
	// TargetFileSizeBase (as RocksDB's), set by EnsureDefaults.
	MaxCompactionBytes int64
	// StaticLevelBytes turns off dynamic level bytes
	// (level_compaction_dynamic_level_bytes=false). Default false: level
	// targets are derived from the last level's size, as BookKeeper sets.
	StaticLevelBytes bool
	// RangeDeletionCompactionRatio: a table whose entries are at least this
	// fraction covered by newer range deletions is compacted on its own, so
	// the space of deleted ledgers comes back without a manual compaction.
	// Default 0.5.
	RangeDeletionCompactionRatio float64
	// IdleCompactionDelay: once no write has come for this long, the L0
	// tables are compacted into the base level even below
	// Level0FileNumCompactionTrigger, so that an index whose writes stopped
	// is one sorted run and reads probe one table per key (RocksDB has no
	// such setting; measured in docs/design.md, "Idle compaction").
	// Default 30 s (DefaultIdleCompactionDelay); negative: never.
	IdleCompactionDelay time.Duration
	// MaxBackgroundJobs (max_background_jobs) bounds the background jobs:
	// one flush at a time, and MaxBackgroundJobs-1 compactions (at least
	// one, so 1 still runs a flush beside a compaction). Default 2.
	MaxBackgroundJobs int
	// MaxSubcompactions (max_subcompactions) splits a compaction into up
	// to that many key ranges merged in parallel, when it rewrites at
	// least two TargetFileSizeBase of input and at least two tables of
	// the level it writes to (their boundaries are the split keys). 1
	// runs every compaction on one goroutine. Default 2 (RocksDB's is 1;
	// measured in docs/design.md, "Subcompactions").
	MaxSubcompactions int
	// MaxOpenFiles (max_open_files): table files kept open; -1 or 0 keeps
	// all open (BookKeeper's -1). Default 0.
	MaxOpenFiles int
	// MaxManifestFileSize (max_manifest_file_size): the manifest is
	// rewritten when it grows past this. Default 64 MiB.
	MaxManifestFileSize int64
	// WALRecoveryMode (wal_recovery_mode) says what Open does with a WAL
	// damaged within bytes a completed sync covered: WALRecoveryRefuse (the
	// default) fails Open naming the file and offset;
	// WALRecoveryPointInTime recovers the writes before the damage, drops
	// the rest and every later WAL (keeping the files in lost/), and logs
	// a WARN. A torn tail (bytes no sync covered) is dropped in both modes.
	WALRecoveryMode WALRecoveryMode

	// BlockSize (block_size) of data blocks. Default 65536
	// (DefaultBlockSize, BookKeeper's dbStorage_rocksDB_blockSize).
	BlockSize int
	// BlockRestartInterval (block_restart_interval). Default 24
	// (DefaultBlockRestartInterval; RocksDB's is 16, see
	// sstable.DefaultRestartInterval for the measurements).
	BlockRestartInterval int
	// IndexBlockRestartInterval (index_block_restart_interval). Default 1.
	IndexBlockRestartInterval int
	// MetadataBlockSize (metadata_block_size): size of index and filter
	// partitions. Default 4096.
	MetadataBlockSize int
	// TableLayout: TableLayoutPartitioned (index_type=kTwoLevelIndexSearch,
	// partition_filters=true; the default) or TableLayoutFull.
	TableLayout TableLayout
	// BloomBitsPerKey (filter_policy=rocksdb.BloomFilter:N:false). Default
	// 10; negative disables filters.
	BloomBitsPerKey int
	// AlwaysLoadFilters makes point lookups use every filter block (full
	// filter or partition), reading it if it is not in memory. By default a
	// table uses its filter only while recent lookups show it saves data
	// block reads, i.e. while enough looked-up keys are absent: lookups of
	// keys that exist (almost all of a bookie's) skip it and leave the cache
	// to data blocks. Like RocksDB's optimize_filters_for_hits, but decided
	// per table from what lookups find (see docs/design.md).
	AlwaysLoadFilters bool
	// Compression (compression). Default LZ4.
	Compression Compression
	// DisableCommonPrefix turns off storing each block's common key prefix
	// once (optimize_key_common_prefix=kDisabled). Default false.
	DisableCommonPrefix bool

	// BlockCache, if set, is shared with other DBs; otherwise the DB makes
	// its own of BlockCacheSize bytes.
	BlockCache *BlockCache
	// BlockCacheSize (block_cache) in bytes. Default 256 MiB.
	BlockCacheSize int64
	// BlockCacheNumShardBits (num_shard_bits): 2^bits shards. Default 6
	// (64 shards) for a cache of 32 MiB or more, fewer for a smaller one so
	// that each shard holds at least 512 KiB (RocksDB's rule); negative:
	// one shard.
	BlockCacheNumShardBits int
	// BlockCacheHighPriorityRatio (high_pri_pool_ratio): share of each
	// shard reserved for index and filter partitions, at most 1. Default
	// 0.5; negative: none.
	BlockCacheHighPriorityRatio float64

	// NoSpaceRetryInterval is the first wait before the engine retries
	// work that failed for lack of space (a flush, a WAL or manifest
	// write, a compaction); each failed retry doubles it, up to
	// NoSpaceRetryMaxInterval. Like RocksDB's
	// bgerror_resume_retry_interval. Default 100 ms.
	NoSpaceRetryInterval time.Duration
	// NoSpaceRetryMaxInterval bounds the wait between retries. Retries go
	// on until one succeeds or the DB closes. Default 5 s.
	NoSpaceRetryMaxInterval time.Duration

	// EnableStatistics turns on timing measurements (stall, commit and
	// merge operator durations). Counters are always kept; timers cost
	// clock reads, and with EnableStatistics off no read path reads a clock.
	EnableStatistics bool

	// MinTombstonesForRangeConversion (min_tombstones_for_range_conversion):
	// an iterator that steps over at least this many consecutive point
	// tombstones inserts a range tombstone over them into the memtable, so
	// that later iterations seek past them (see tombstone_conversion.go).
	// 0, the default, turns it off.
	MinTombstonesForRangeConversion int

	// MergeOperator (merge_operator) combines the operands of Batch.Merge
	// with older values. nil: a batch holding a Merge is refused. Its name
	// is persisted with the first merge operand; the DB then refuses to
	// open with another operator or none.
	MergeOperator MergeOperator
}

// WALRecoveryMode says what Open does with a WAL that does not replay to its
// end because of damage within synced bytes (see Options.WALRecoveryMode).
type WALRecoveryMode uint8

const (
	// WALRecoveryRefuse fails Open with an error marked ErrCorruption that
	// names the WAL and the offset of the damage (RocksDB's
	// kAbsoluteConsistency for synced bytes).
	WALRecoveryRefuse WALRecoveryMode = iota
	// WALRecoveryPointInTime recovers every write before the damage and
	// none after it, in this WAL or a later one (RocksDB's
	// kPointInTimeRecovery): acknowledged writes after the damage are
	// lost, loudly. The damaged WAL and the later ones are kept in lost/.
	WALRecoveryPointInTime
)

// String names the mode as the configuration spells it.
func (m WALRecoveryMode) String() string {
	switch m {
	case WALRecoveryRefuse:
		return "refuse"
	case WALRecoveryPointInTime:
		return "point-in-time"
	}
	return fmt.Sprintf("WALRecoveryMode(%d)", uint8(m))
}

// Defaults, BookKeeper's entry-location settings where it has one.
const (
	DefaultWriteBufferSize                = 64 << 20
	DefaultMaxWriteBufferNumber           = 4
	DefaultNumLevels                      = 7
	DefaultLevel0FileNumCompactionTrigger = 4
	DefaultLevel0SlowdownWritesTrigger    = 20
	DefaultLevel0StopWritesTrigger        = 36
	DefaultMaxBytesForLevelBase           = 256 << 20
	DefaultMaxBytesForLevelMultiplier     = 10
	DefaultTargetFileSizeBase             = 64 << 20
	DefaultRangeDeletionCompactionRatio   = 0.5
	// DefaultMaxCompactionBytesFactor × TargetFileSizeBase is the default
	// MaxCompactionBytes.
	DefaultMaxCompactionBytesFactor    = 25
	DefaultMaxBackgroundJobs           = 2
	DefaultMaxSubcompactions           = 2
	DefaultMaxManifestFileSize         = 64 << 20
	DefaultBlockCacheSize              = 256 << 20
	DefaultBlockCacheHighPriorityRatio = 0.5

	DefaultBlockSize                 = sstable.DefaultBlockSize
	DefaultBlockRestartInterval      = sstable.DefaultRestartInterval
	DefaultIndexBlockRestartInterval = sstable.DefaultIndexRestartInterval
	DefaultMetadataBlockSize         = sstable.DefaultMetadataBlockSize
	DefaultBloomBitsPerKey           = sstable.DefaultBloomBitsPerKey

	DefaultIdleCompactionDelay     = 30 * time.Second
	DefaultNoSpaceRetryInterval    = 100 * time.Millisecond
	DefaultNoSpaceRetryMaxInterval = 5 * time.Second
)

// DefaultOptions returns the defaults.
func DefaultOptions() *Options {
	o := &Options{}
	o.EnsureDefaults()
	return o
}

// EnsureDefaults fills every zero field but Logger with its default
// (negative fields keep the settings they spell) and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	setInt64 := func(p *int64, d int64) {
		if *p == 0 {
			*p = d
		}
	}
	setInt := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	setFloat := func(p *float64, d float64) {
		if *p == 0 {
			*p = d
		}
	}
	setInt64(&o.WriteBufferSize, DefaultWriteBufferSize)
	setInt(&o.MaxWriteBufferNumber, DefaultMaxWriteBufferNumber)
	setInt(&o.NumLevels, DefaultNumLevels)
	setInt(&o.Level0FileNumCompactionTrigger, DefaultLevel0FileNumCompactionTrigger)
	setInt(&o.Level0SlowdownWritesTrigger, DefaultLevel0SlowdownWritesTrigger)
	setInt(&o.Level0StopWritesTrigger, DefaultLevel0StopWritesTrigger)
	setInt64(&o.MaxBytesForLevelBase, DefaultMaxBytesForLevelBase)
	setFloat(&o.MaxBytesForLevelMultiplier, DefaultMaxBytesForLevelMultiplier)
	setInt64(&o.TargetFileSizeBase, DefaultTargetFileSizeBase)
	setInt64(&o.MaxCompactionBytes, DefaultMaxCompactionBytesFactor*o.TargetFileSizeBase)
	setFloat(&o.RangeDeletionCompactionRatio, DefaultRangeDeletionCompactionRatio)
	setInt(&o.MaxBackgroundJobs, DefaultMaxBackgroundJobs)
	setInt(&o.MaxSubcompactions, DefaultMaxSubcompactions)
	setInt64(&o.MaxManifestFileSize, DefaultMaxManifestFileSize)
	setInt(&o.BlockSize, DefaultBlockSize)
	setInt(&o.BlockRestartInterval, DefaultBlockRestartInterval)
	setInt(&o.IndexBlockRestartInterval, DefaultIndexBlockRestartInterval)
	setInt(&o.MetadataBlockSize, DefaultMetadataBlockSize)
	setInt(&o.BloomBitsPerKey, DefaultBloomBitsPerKey)
	setInt64(&o.BlockCacheSize, DefaultBlockCacheSize)
	// BlockCacheNumShardBits stays 0: its default depends on the capacity,
	// which the cache applies when it is made.
	setFloat(&o.BlockCacheHighPriorityRatio, DefaultBlockCacheHighPriorityRatio)
	if o.IdleCompactionDelay == 0 {
		o.IdleCompactionDelay = DefaultIdleCompactionDelay
	}
	if o.NoSpaceRetryInterval == 0 {
		o.NoSpaceRetryInterval = DefaultNoSpaceRetryInterval
	}
	if o.NoSpaceRetryMaxInterval == 0 {
		o.NoSpaceRetryMaxInterval = max(DefaultNoSpaceRetryMaxInterval, o.NoSpaceRetryInterval)
	}
	if o.Compression == DefaultCompression {
		o.Compression = LZ4Compression
	}
	return o
}

// Validate reports the first option out of range, naming it and what is
// accepted. Call it after EnsureDefaults.
func (o *Options) Validate() error {
	type check struct {
		bad bool
		msg string
		val interface{}
	}
	for _, c := range []check{
		{o.WriteBufferSize < 64<<10 || o.WriteBufferSize > 4<<30, "WriteBufferSize %v is out of range [64 KiB, 4 GiB]", o.WriteBufferSize},
		{o.MaxWriteBufferNumber < 2 || o.MaxWriteBufferNumber > 64, "MaxWriteBufferNumber %v is out of range [2, 64]", o.MaxWriteBufferNumber},
		{o.NumLevels < 2 || o.NumLevels > 16, "NumLevels %v is out of range [2, 16]", o.NumLevels},
		{o.Level0FileNumCompactionTrigger < 1, "Level0FileNumCompactionTrigger %v must be at least 1", o.Level0FileNumCompactionTrigger},
		{o.Level0SlowdownWritesTrigger < o.Level0FileNumCompactionTrigger, "Level0SlowdownWritesTrigger %v must be at least Level0FileNumCompactionTrigger", o.Level0SlowdownWritesTrigger},
		{o.Level0StopWritesTrigger < o.Level0SlowdownWritesTrigger, "Level0StopWritesTrigger %v must be at least Level0SlowdownWritesTrigger", o.Level0StopWritesTrigger},
		{o.MaxBytesForLevelBase < 1<<20, "MaxBytesForLevelBase %v must be at least 1 MiB", o.MaxBytesForLevelBase},
		{o.MaxBytesForLevelMultiplier < 2 || math.IsNaN(o.MaxBytesForLevelMultiplier) || o.MaxBytesForLevelMultiplier > 1000, "MaxBytesForLevelMultiplier %v is out of range [2, 1000]", o.MaxBytesForLevelMultiplier},
		{o.TargetFileSizeBase < 64<<10, "TargetFileSizeBase %v must be at least 64 KiB", o.TargetFileSizeBase},
		{o.MaxCompactionBytes < 64<<10, "MaxCompactionBytes %v must be at least 64 KiB", o.MaxCompactionBytes},
		{o.RangeDeletionCompactionRatio <= 0 || o.RangeDeletionCompactionRatio > 1, "RangeDeletionCompactionRatio %v is out of range (0, 1]", o.RangeDeletionCompactionRatio},
		{o.MinTombstonesForRangeConversion < 0, "MinTombstonesForRangeConversion %v must not be negative", o.MinTombstonesForRangeConversion},
		{o.MaxBackgroundJobs < 1 || o.MaxBackgroundJobs > 256, "MaxBackgroundJobs %v is out of range [1, 256]", o.MaxBackgroundJobs},
		{o.MaxSubcompactions < 1 || o.MaxSubcompactions > 64, "MaxSubcompactions %v is out of range [1, 64]", o.MaxSubcompactions},
		{o.MaxOpenFiles < -1 || o.MaxOpenFiles > 0 && o.MaxOpenFiles < 16, "MaxOpenFiles %v must be -1, 0 (unlimited) or at least 16", o.MaxOpenFiles},
		{o.WALRecoveryMode > WALRecoveryPointInTime, "WALRecoveryMode %v is not a recovery mode", o.WALRecoveryMode},
		{o.MaxManifestFileSize < 64<<10, "MaxManifestFileSize %v must be at least 64 KiB", o.MaxManifestFileSize},
		{o.BlockCacheSize < 0, "BlockCacheSize %v must not be negative", o.BlockCacheSize},
		{o.BlockCacheNumShardBits > cache.MaxNumShardBits, "BlockCacheNumShardBits %v is above " + strconv.Itoa(cache.MaxNumShardBits) + " (negative: one shard)", o.BlockCacheNumShardBits},
		{math.IsNaN(o.BlockCacheHighPriorityRatio) || o.BlockCacheHighPriorityRatio > 1, "BlockCacheHighPriorityRatio %v is above 1 (negative: none)", o.BlockCacheHighPriorityRatio},
		{o.NoSpaceRetryInterval < 0, "NoSpaceRetryInterval %v must not be negative", o.NoSpaceRetryInterval},
		{o.NoSpaceRetryMaxInterval < o.NoSpaceRetryInterval, "NoSpaceRetryMaxInterval %v must be at least NoSpaceRetryInterval", o.NoSpaceRetryMaxInterval},
	} {
		if c.bad {
			return errors.Newf("lsm: "+c.msg, c.val)
		}
	}
	return errors.Wrap(o.TableOptions().Validate(), "lsm")
}

// TableOptions returns the options of the tables the DB writes, for tables
// written outside it (CreateTable) that it will ingest.
func (o *Options) TableOptions() TableOptions {
	return sstable.WriterOptions{
		BlockSize:            o.BlockSize,
		RestartInterval:      o.BlockRestartInterval,
		IndexRestartInterval: o.IndexBlockRestartInterval,
		MetadataBlockSize:    o.MetadataBlockSize,
		Layout:               o.TableLayout,
		BloomBitsPerKey:      o.BloomBitsPerKey,
		Compression:          o.Compression,
		DisableCommonPrefix:  o.DisableCommonPrefix,
	}
}

// BlockCache is a block cache that several DBs may share.
type BlockCache struct {
	c *cache.Cache
}

// NewBlockCache returns a cache of capacity bytes in 2^numShardBits shards
// with the given high-priority pool ratio. Zeros and negatives mean what
// they mean in Options.BlockCacheNumShardBits and
// Options.BlockCacheHighPriorityRatio.
func NewBlockCache(capacity int64, numShardBits int, highPriorityRatio float64) (*BlockCache, error) {
	c, err := cache.New(cache.Options{Capacity: capacity, NumShardBits: numShardBits, HighPriorityPoolRatio: highPriorityRatio})
	if err != nil {
		return nil, errors.Wrap(err, "lsm: block cache")
	}
	return &BlockCache{c: c}, nil
}

// Capacity returns the cache's capacity in bytes.
func (b *BlockCache) Capacity() int64 { return b.c.Metrics().Capacity }

// Close gives the cache's memory back to the system. Call it after every
// DB using the cache is closed: the blocks live in memory the cache
// manages itself, outside the Go heap, which no collection frees. An error
// says that some blocks were still referenced (an iterator left open); they
// are freed when released.
func (b *BlockCache) Close() error { return errors.Wrap(b.c.Close(), "lsm: block cache") }

package conf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/cockroachdb/errors"
)

// Config is the service configuration: the bk_server.conf keys bookie-index
// honours, decoded and validated. Each field names its key; defaults are
// those of BookKeeper unless the comment says "ours". Load fills every
// field; an empty value in any source means the default.
type Config struct {
	// LedgerDirectories (ledgerDirectories): comma-separated ledger
	// directories, one entry location index each. Default (ours)
	// data/ledgers, relative to the working directory; BookKeeper's is
	// /tmp/bk-data.
	LedgerDirectories []string
	// IndexDirectories (indexDirectories): where each ledger directory's
	// index lives, paired by position with LedgerDirectories; the index of
	// ledger directory i is IndexDirectories[i]/current/locations.
	// Default: LedgerDirectories. The counts must match.
	IndexDirectories []string
	// AllowStorageExpansion (allowStorageExpansion): let the storage open
	// with empty directories added to the list recorded at its first
	// start; existing ledgers stay where they are, new ledgers use every
	// directory. Default false: a changed list is refused.
	AllowStorageExpansion bool

	// HTTPServerEnabled (httpServerEnabled) starts the admin HTTP server.
	// Default (ours) true; BookKeeper's is false.
	HTTPServerEnabled bool
	// HTTPServerHost (httpServerHost) is the address the admin server binds.
	// Default (ours) 127.0.0.1, loopback only; BookKeeper's is 0.0.0.0.
	HTTPServerHost string
	// HTTPServerPort (httpServerPort). Default 8080; 0 picks a free port.
	HTTPServerPort int
	// HTTPServerAuthTokenFile (httpServerAuthTokenFile, ours): a file
	// holding the bearer token that mutating admin requests must carry.
	// Default empty: no token is required, which serve accepts only on a
	// loopback address (see HTTPServerAllowUnauthenticated).
	HTTPServerAuthTokenFile string
	// HTTPServerAllowUnauthenticated (httpServerAllowUnauthenticated,
	// ours) lets serve bind a non-loopback HTTPServerHost without
	// HTTPServerAuthTokenFile, for an admin server fronted by its own
	// authentication (a proxy, a network policy). Default false: serve
	// refuses to expose unauthenticated PUT and DELETE.
	HTTPServerAllowUnauthenticated bool
	// HTTPServerMaxEntryBytesInFlight (httpServerMaxEntryBytesInFlight,
	// ours): the bytes of entry bodies the data API holds at once (PUT
	// bodies reserved by their Content-Length before they are read,
	// payloads being answered); a request beyond it waits briefly, then
	// gets 503 with Retry-After. At least NettyMaxFrameSizeBytes. Default
	// empty: a quarter of the write cache (128 MiB with its default), at
	// least NettyMaxFrameSizeBytes.
	HTTPServerMaxEntryBytesInFlight int64
	// NettyMaxFrameSizeBytes (nettyMaxFrameSizeBytes): upstream's largest
	// request; here the largest entry payload the data API takes (413
	// beyond, before the body is read). Default 5242880 (5 MiB), as
	// upstream.
	NettyMaxFrameSizeBytes int64
	// MaxAddsInProgressLimit and MaxReadsInProgressLimit
	// (maxAddsInProgressLimit, maxReadsInProgressLimit): the data API's
	// entry PUTs and reads in progress; a request beyond waits briefly,
	// then gets 503 with Retry-After. 0 or negative: no limit. Default 0,
	// as upstream.
	MaxAddsInProgressLimit, MaxReadsInProgressLimit int
	// IndexCheckpointRootDirectory (indexCheckpointRootDirectory, ours):
	// when set, an absolute directory outside the data directories under
	// which index_checkpoint?dir= must write. Default empty: anywhere
	// outside the data directories (docs/operations.md, "Backup and
	// restore").
	IndexCheckpointRootDirectory string
	// JournalDirectories and JournalDirectory (journalDirectories,
	// journalDirectory): the journal directories as the keys give them;
	// Journal.JournalDirectories holds the ones in use (journalDirectories,
	// else journalDirectory, else DefaultJournalDirectory, ours; upstream's
	// default is /tmp/bk-txn).
	JournalDirectories []string
	JournalDirectory   string
	// Journal is the journal: its directories and upstream's journal*
	// keys (journal.go). An add is acknowledged once the journal holds it.
	Journal journal.Options
	// HTTPServerTLSEnable (httpServerTlsEnable) serves the admin API over
	// TLS with the key and certificate of HTTPServerKeyStorePath, and
	// requires client certificates issued by one of
	// HTTPServerTrustStorePath's certificates, as upstream's admin server
	// does. Default false.
	HTTPServerTLSEnable bool
	// HTTPServerKeyStorePath (httpServerKeyStorePath): a PKCS#12 key
	// store holding the admin server's private key and its certificate
	// chain; HTTPServerKeyStorePassword (httpServerKeyStorePassword)
	// opens it. Required with HTTPServerTLSEnable. A JKS key store is
	// refused (convert it to PKCS#12 with keytool).
	HTTPServerKeyStorePath, HTTPServerKeyStorePassword string
	// HTTPServerTrustStorePath (httpServerTrustStorePath): a PKCS#12
	// trust store of the certificates that issue client certificates;
	// HTTPServerTrustStorePassword (httpServerTrustStorePassword) opens
	// it, and when empty the key store's password is tried too, as
	// upstream falls back to it. Required with HTTPServerTLSEnable.
	HTTPServerTrustStorePath, HTTPServerTrustStorePassword string

	// LogLevel (logLevel, ours): the lowest level the service and the
	// offline tools log, one of debug, info, warn, error. At debug, errors
	// are logged with their stack traces. A --log-level flag wins. Default
	// empty: the command's own, info for serve and warn for the offline
	// tools (whose progress lines the engine's would drown).
	LogLevel string
	// LogFormat (logFormat, ours): text (slog's key=value lines) or json
	// (one object per line). A --log-format flag wins. Default text.
	LogFormat string

	// EntryLocationRocksdbConf (entryLocationRocksdbConf): the RocksDB
	// OPTIONS file for the entry location index, used only if it exists
	// ("config-file mode"); otherwise the dbStorage_rocksDB_* keys apply
	// ("bookie-conf mode"). Relative paths are relative to the working
	// directory. Default conf/entry_location_rocksdb.conf, which is not
	// shipped (the shipped file ends in .default), so bookie-conf mode is
	// the default.
	EntryLocationRocksdbConf string
	// EntryLocationCompactionInterval (entryLocationCompactionInterval,
	// seconds in the file): how often each index is fully compacted, plus
	// a random delay of up to one interval. Zero or negative disables it.
	// Default -1 (disabled). When enabled it must be at least GCWaitTime.
	EntryLocationCompactionInterval time.Duration
	// GCWaitTime (gcWaitTime, milliseconds in the file): the garbage
	// collector's period; entry location compaction is checked once per
	// run. Default 600000 (10 minutes).
	GCWaitTime time.Duration
	// GC is entry-log garbage collection and compaction: upstream's
	// GarbageCollectorThread keys, as the storage's options (gcKeySpecs:
	// a threshold, interval or rate of 0 or less, which disables in the
	// file, is -1 here).
	GC bookie.GCOptions
	// FlushInterval (flushInterval, milliseconds in the file): the
	// checkpoint period, at which each index receives its batch and deleted
	// ledgers are purged. Default 10000.
	FlushInterval time.Duration
	// StatsProviderClass (statsProviderClass): upstream's stats provider.
	// When it names PrometheusMetricsProvider (PrometheusProviderClass),
	// serve also serves /metrics on PrometheusStatsHTTPAddress:Port, as
	// upstream's provider does; /metrics on the admin port is served
	// either way. Default empty.
	StatsProviderClass string
	// PrometheusStatsHTTPEnable (prometheusStatsHttpEnable): whether that
	// listener may run; false leaves /metrics on the admin port only.
	// Default true.
	PrometheusStatsHTTPEnable bool
	// PrometheusStatsHTTPAddress (prometheusStatsHttpAddress). Default
	// 0.0.0.0.
	PrometheusStatsHTTPAddress string
	// PrometheusStatsHTTPPort (prometheusStatsHttpPort). Default 8000; 0
	// picks a free port.
	PrometheusStatsHTTPPort int
	// PrometheusStatsLatencyRollover (prometheusStatsLatencyRolloverSeconds,
	// seconds in the file): the window the latency summaries' quantiles
	// cover. Default 60.
	PrometheusStatsLatencyRollover time.Duration
	// EnableStatistics (enableStatistics): collect latency statistics
	// (engine timers and the latency metrics). Default true.
	EnableStatistics bool
	// MaxOperationNumbersInSingleRocksdbWriteBatch
	// (maxOperationNumbersInSingleRocksdbWriteBatch): an index batch is
	// committed and cleared every this many operations. Default 100000.
	MaxOperationNumbersInSingleRocksdbWriteBatch int

	// LogSizeLimit (logSizeLimit): entry logs rotate at this size in
	// bytes. Default 1073741824 (1 GiB, also the maximum).
	LogSizeLimit int64
	// FlushEntrylogBytes (flushEntrylogBytes): an entry log is written
	// out and fdatasynced every this many bytes of records, between
	// checkpoints' syncs. Default 0 (off), as upstream; 0 or less is off.
	FlushEntrylogBytes int64
	// WriteCacheMaxSizeMB (dbStorage_writeCacheMaxSizeMb): write cache of
	// all directories together, in MiB. Default (ours) 512; BookKeeper's is
	// 25% of the JVM's direct memory, 512 with its stock 2 GiB.
	WriteCacheMaxSizeMB int64
	// ReadAheadCacheMaxSizeMB (dbStorage_readAheadCacheMaxSizeMb): read
	// cache of all directories together, in MiB. Default (ours) 512, as
	// WriteCacheMaxSizeMB.
	ReadAheadCacheMaxSizeMB int64
	// ReadAheadCacheBatchSize (dbStorage_readAheadCacheBatchSize): entries
	// read ahead after a read-cache miss. Default 100.
	ReadAheadCacheBatchSize int
	// ReadAheadCacheBatchBytesSize (dbStorage_readAheadCacheBatchBytesSize):
	// bytes read ahead after a miss; -1 means no byte limit. Default -1.
	ReadAheadCacheBatchBytesSize int64
	// MaxThrottleTime (dbStorage_maxThrottleTimeMs, milliseconds in the
	// file): how long an add waits for room in a full write cache before it
	// is rejected. Default 10000.
	MaxThrottleTime time.Duration
	// IdleCompactionDelay (dbStorage_idleCompactionDelaySeconds, seconds in
	// the file; bookie-index's own key): the entry location index compacts
	// its L0 tables into the base level once no write came for this long
	// (lsm.Options.IdleCompactionDelay); 0 or negative turns it off.
	// Default 30.
	IdleCompactionDelay time.Duration

	// CompactionRate (compactionRate): upstream's deprecated name of the
	// entry rate; compactionRateByEntries, when empty, takes its value.
	// Default 1000.
	CompactionRate int
	// ForceReadOnlyBookie (forceReadOnlyBookie): the storage starts
	// read-only and stays so: writes are refused, reads go on, and it
	// cannot be made writable over the admin API (upstream's
	// ReadOnlyBookie). Needs ReadOnlyModeEnabled. Default false.
	ForceReadOnlyBookie bool
	// ReadOnlyModeEnabled (readOnlyModeEnabled): a full or failing
	// directory turns the storage read-only (writes refused, reads go
	// on); false: the service shuts down instead, as upstream does.
	// Default true.
	ReadOnlyModeEnabled bool
	// DiskUsageThreshold and DiskUsageWarnThreshold (diskUsageThreshold,
	// diskUsageWarnThreshold): one pair of keys for the read-only mode
	// (over the threshold the storage turns read-only; over the warn
	// threshold each disk check warns) and the garbage collector's
	// disk-pressure rules, as upstream. Both in (0, 1), the warn threshold
	// at most the threshold. Defaults 0.95 and 0.90.
	DiskUsageThreshold, DiskUsageWarnThreshold float64
	// DiskUsageLwmThreshold (diskUsageLwmThreshold): a storage read-only
	// for space is writable again once every directory is below it. In
	// (0, diskUsageThreshold]. Default: diskUsageThreshold.
	DiskUsageLwmThreshold float64
	// DiskCheckInterval (diskCheckInterval, milliseconds in the file):
	// the disk monitor's period. Positive. Default 10000.
	DiskCheckInterval time.Duration
	// ReadOnlyModeOnAnyDiskFullEnabled (readOnlyModeOnAnyDiskFullEnabled):
	// any full directory turns the storage read-only. False: a full
	// directory takes no new ledger (they go to the others) and refuses
	// adds to its own, and the storage turns read-only only when every
	// directory is full. Default true, as upstream.
	ReadOnlyModeOnAnyDiskFullEnabled bool
	// MinUsableSizeForIndexFileCreation (minUsableSizeForIndexFileCreation,
	// bytes): the usable space an index directory needs for a read-only
	// storage to start an entry location compaction (which writes its new
	// tables first). Default 104857600 (100 MiB), upstream's.
	MinUsableSizeForIndexFileCreation int64
	// MinUsableSizeForEntryLogCreation (minUsableSizeForEntryLogCreation,
	// bytes): the usable space a ledger disk needs for a read-only
	// storage to create entry logs (compaction). Default 1.2 *
	// logSizeLimit, as upstream.
	MinUsableSizeForEntryLogCreation int64

	// RocksDB holds the dbStorage_rocksDB_* keys, which build the engine
	// options in bookie-conf mode.
	RocksDB RocksDBSettings

	// Source says where the configuration came from: the file's path, or
	// "embedded bk_server.conf".
	Source string
	// UnusedKeys summarizes the keys the file and the environment set
	// that Load does not use (the BookKeeper keys recognized, the others),
	// one line each, for the service to log at start; KeyWarnings holds a
	// did-you-mean line for each such key close to one of ours.
	UnusedKeys, KeyWarnings []string
}

// RocksDBSettings are the dbStorage_rocksDB_* keys. BookKeeper applies them
// to the entry location index when no OPTIONS file is used (bookie-conf
// mode); EntryLocationOptions maps them the same way.
type RocksDBSettings struct {
	// BlockCacheSize (dbStorage_rocksDB_blockCacheSize): block cache bytes
	// of each index (each directory has its own). Default (ours) 268435456
	// (256 MiB); BookKeeper's is the JVM's direct memory / number of ledger
	// directories / 10, which a Go process does not have.
	BlockCacheSize int64
	// WriteBufferSizeMB (dbStorage_rocksDB_writeBufferSizeMB): memtable size
	// in MiB. Default 64.
	WriteBufferSizeMB int64
	// SSTSizeInMB (dbStorage_rocksDB_sstSizeInMB): target table size in MiB
	// (target_file_size_base). Default 64.
	SSTSizeInMB int64
	// BlockSize (dbStorage_rocksDB_blockSize): data block size in bytes.
	// Default 65536.
	BlockSize int
	// BloomFilterBitsPerKey (dbStorage_rocksDB_bloomFilterBitsPerKey): Bloom
	// filter bits per key; 0 or less disables filters. Default 10.
	BloomFilterBitsPerKey int
	// NumLevels (dbStorage_rocksDB_numLevels): LSM levels; 0 or less keeps
	// the engine's default, 7. Default -1.
	NumLevels int
	// NumFilesInLevel0 (dbStorage_rocksDB_numFilesInLevel0): L0 tables that
	// trigger a compaction. Default 4.
	NumFilesInLevel0 int
	// MaxSizeInLevel1MB (dbStorage_rocksDB_maxSizeInLevel1MB): target size
	// of the base level in MiB. Default 256.
	MaxSizeInLevel1MB int64
	// LZ4CompressionEnabled (dbStorage_rocksDB_lz4CompressionEnabled): LZ4
	// block compression; off means no compression (RocksDB would fall back
	// to its default, Snappy, which this engine does not have). Default
	// true.
	LZ4CompressionEnabled bool
	// FormatVersion (dbStorage_rocksDB_format_version): RocksDB's table
	// format version. Accepted and ignored: tables use bookie-index's own
	// format. Default 5.
	FormatVersion int
	// ChecksumType (dbStorage_rocksDB_checksum_type): RocksDB's block
	// checksum, one of kNoChecksum, kCRC32c, kxxHash, kxxHash64, kXXH3.
	// Accepted and ignored: blocks always carry CRC-32C. Default kxxHash.
	ChecksumType string
	// LogPath (dbStorage_rocksDB_logPath): RocksDB's LOG directory.
	// Ignored: the engine logs through the service's logger. Default empty.
	LogPath string
	// LogLevel (dbStorage_rocksDB_logLevel): RocksDB's LOG level. Ignored,
	// as LogPath. Default info.
	LogLevel string
	// PartitionedIndexAndFiltersEnabled
	// (dbStorage_rocksDB_partitionedIndexAndFiltersEnabled): partitioned
	// index and Bloom filter (index_type=kTwoLevelIndexSearch,
	// partition_filters=true); false writes one full index and filter
	// per table. Default true.
	PartitionedIndexAndFiltersEnabled bool
}

// Validate checks every field and the rules between them: upstream's
// (index and ledger directory counts match; an enabled
// entryLocationCompactionInterval is at least gcWaitTime;
// forceReadOnlyBookie needs readOnlyModeEnabled) and ours (no directory
// twice, a readable token file and key stores, engine options in range).
// Every problem is reported, one per line; each names its key.
func (c *Config) Validate() error {
	var p problems
	c.validate(&p)
	return p.err("")
}

// validate adds every problem of the configuration to p.
func (c *Config) validate(p *problems) {
	add := func(err error) {
		if err != nil {
			p.list = append(p.list, err.Error())
		}
	}
	c.validateDirectories(p)
	add(validateHost(c.HTTPServerHost))
	add(c.validateDataAPI())
	if c.PrometheusStatsLatencyRollover <= 0 {
		p.addf("prometheusStatsLatencyRolloverSeconds: %v is not positive", c.PrometheusStatsLatencyRollover)
	}
	if c.HTTPServerPort < 0 || c.HTTPServerPort > 65535 {
		p.addf("httpServerPort: %d is out of range [0, 65535] (0 picks a free port)", c.HTTPServerPort)
	}
	if c.GCWaitTime <= 0 {
		p.addf("gcWaitTime: %d ms must be positive", c.GCWaitTime.Milliseconds())
	} else {
		add(validateGC(&c.GC, c.GCWaitTime))
		if c.EntryLocationCompactionInterval > 0 && c.EntryLocationCompactionInterval < c.GCWaitTime {
			p.addf("entryLocationCompactionInterval: %d seconds is shorter than gcWaitTime (%d ms); use at least %d seconds, or -1 to disable (upstream: \"entryLocationCompactionInterval should be >= gcWaitTime.\")",
				int64(c.EntryLocationCompactionInterval/time.Second), c.GCWaitTime.Milliseconds(),
				int64((c.GCWaitTime+time.Second-1)/time.Second))
		}
	}
	if c.FlushInterval <= 0 {
		p.addf("flushInterval: %d ms must be positive", c.FlushInterval.Milliseconds())
	}
	if c.MaxOperationNumbersInSingleRocksdbWriteBatch < 1 {
		p.addf("maxOperationNumbersInSingleRocksdbWriteBatch: %d must be at least 1", c.MaxOperationNumbersInSingleRocksdbWriteBatch)
	}
	if c.LogSizeLimit <= entryLogHeaderSize || c.LogSizeLimit > maxLogSizeLimit {
		p.addf("logSizeLimit: %d is out of range (%d, %d]: an entry log needs room past its %d-byte header, and upstream caps it at 1 GiB",
			c.LogSizeLimit, entryLogHeaderSize, maxLogSizeLimit, entryLogHeaderSize)
	}
	for _, mb := range []struct {
		name string
		v    int64
	}{{"dbStorage_writeCacheMaxSizeMb", c.WriteCacheMaxSizeMB}, {"dbStorage_readAheadCacheMaxSizeMb", c.ReadAheadCacheMaxSizeMB}} {
		if mb.v < 1 || mb.v > maxMB {
			p.addf("%s: %d is out of range [1, %d] (MiB)", mb.name, mb.v, maxMB)
		}
	}
	if c.ReadAheadCacheBatchSize < 1 {
		p.addf("dbStorage_readAheadCacheBatchSize: %d must be at least 1", c.ReadAheadCacheBatchSize)
	}
	if c.ReadAheadCacheBatchBytesSize < -1 || c.ReadAheadCacheBatchBytesSize == 0 {
		p.addf("dbStorage_readAheadCacheBatchBytesSize: %d must be positive, or -1 for no byte limit", c.ReadAheadCacheBatchBytesSize)
	}
	if c.MaxThrottleTime < 0 {
		p.addf("dbStorage_maxThrottleTimeMs: %d must not be negative", c.MaxThrottleTime.Milliseconds())
	}
	c.validateReadOnly(p)
	c.validateJournal(p)
	if err := c.RocksDB.validate(); err != nil {
		add(err)
	} else if _, _, err := c.bookieConfOptions(); err != nil {
		add(err)
	}
	if c.HTTPServerAuthTokenFile != "" {
		_, err := c.ReadAuthToken()
		add(err)
	}
	if c.HTTPServerTLSEnable {
		c.validateTLS(p)
	}
}

// validateTLS checks that TLS has its two stores, and reads them.
func (c *Config) validateTLS(p *problems) {
	if c.HTTPServerKeyStorePath == "" {
		p.addf("%s", errNoKeyStore)
	}
	if c.HTTPServerTrustStorePath == "" {
		p.addf("%s", errNoTrustStore)
	}
	if c.HTTPServerKeyStorePath != "" && c.HTTPServerTrustStorePath != "" {
		if _, err := c.AdminTLSConfig(); err != nil {
			p.list = append(p.list, err.Error())
		}
	}
}

// validateDirectories checks the directory lists: at least one, paired,
// none twice.
func (c *Config) validateDirectories(p *problems) {
	if len(c.LedgerDirectories) == 0 {
		p.addf("ledgerDirectories: at least one directory is required")
		return
	}
	if len(c.IndexDirectories) != len(c.LedgerDirectories) {
		p.addf("indexDirectories: %d directories but ledgerDirectories has %d; index directory i serves ledger directory i, so the counts must match (upstream: \"ledger and index dirs size not matched\")",
			len(c.IndexDirectories), len(c.LedgerDirectories))
	}
	for _, k := range []struct {
		name string
		dirs []string
	}{{"ledgerDirectories", c.LedgerDirectories}, {"indexDirectories", c.IndexDirectories}} {
		seen := map[string]bool{}
		for _, d := range k.dirs {
			if d == "" {
				p.addf("%s: empty directory name", k.name)
				continue
			}
			clean := filepath.Clean(d)
			if seen[clean] {
				p.addf("%s: %q is listed twice; each directory holds one index", k.name, d)
			}
			seen[clean] = true
		}
	}
}

// validateReadOnly checks the read-only mode's keys with upstream's rules
// (LedgerDirsMonitor's: a low-water mark not above the threshold;
// ReadOnlyBookie's: a forced read-only start needs read-only mode).
func (c *Config) validateReadOnly(p *problems) {
	t, w, l := c.DiskUsageThreshold, c.DiskUsageWarnThreshold, c.DiskUsageLwmThreshold
	if t <= 0 || t >= 1 || w <= 0 || w-t > 1e-6 {
		p.addf("diskUsageThreshold/diskUsageWarnThreshold: %v and %v are not valid: both in (0, 1), the warn threshold at most the threshold (upstream: \"Disk space threshold ... are not valid\")", t, w)
	}
	if l <= 0 || l > t {
		p.addf("diskUsageLwmThreshold: %g is not valid: it must be > 0 and at most diskUsageThreshold (%g)", l, t)
	}
	if c.DiskCheckInterval <= 0 {
		p.addf("diskCheckInterval: %d ms must be positive", c.DiskCheckInterval.Milliseconds())
	}
	if c.MinUsableSizeForIndexFileCreation < 0 {
		p.addf("minUsableSizeForIndexFileCreation: %d must not be negative", c.MinUsableSizeForIndexFileCreation)
	}
	if c.MinUsableSizeForEntryLogCreation < 0 {
		p.addf("minUsableSizeForEntryLogCreation: %d must not be negative", c.MinUsableSizeForEntryLogCreation)
	}
	if c.ForceReadOnlyBookie && !c.ReadOnlyModeEnabled {
		p.addf("forceReadOnlyBookie: true needs readOnlyModeEnabled=true, which is false (upstream: \"Try to init ReadOnly Bookie, while ReadOnly mode is not enabled\")")
	}
}

// Limits of our own, and upstream's entry log limits.
const (
	// maxMB bounds every size in MiB so that converting it to bytes cannot
	// overflow (1 TiB).
	maxMB = 1 << 20
	// entryLogHeaderSize is the size of an entry log's header.
	entryLogHeaderSize = 1024
	// maxLogSizeLimit is BookKeeper's MAX_LOG_SIZE_LIMIT: 1 GiB.
	maxLogSizeLimit = 1 << 30
	// maxFrameSize bounds nettyMaxFrameSizeBytes: upstream reads it as
	// a Java int.
	maxFrameSize = 1<<31 - 1
)

// checksumTypeNames returns the values of RocksDB's ChecksumType enum.
func checksumTypeNames() []string {
	return []string{"kNoChecksum", "kCRC32c", "kxxHash", "kxxHash64", "kXXH3"}
}

func (r *RocksDBSettings) validate() error {
	for _, mb := range []struct {
		name string
		v    int64
	}{
		{"dbStorage_rocksDB_writeBufferSizeMB", r.WriteBufferSizeMB},
		{"dbStorage_rocksDB_sstSizeInMB", r.SSTSizeInMB},
		{"dbStorage_rocksDB_maxSizeInLevel1MB", r.MaxSizeInLevel1MB},
	} {
		if mb.v < 1 || mb.v > maxMB {
			return errors.Newf("%s: %d is out of range [1, %d] (MiB)", mb.name, mb.v, maxMB)
		}
	}
	if r.BlockCacheSize < 1 {
		return errors.Newf("dbStorage_rocksDB_blockCacheSize: %d must be positive (bytes per directory)", r.BlockCacheSize)
	}
	if r.FormatVersion < 0 {
		return errors.Newf("dbStorage_rocksDB_format_version: %d must not be negative", r.FormatVersion)
	}
	if !slices.Contains(checksumTypeNames(), r.ChecksumType) {
		return errors.Newf("dbStorage_rocksDB_checksum_type: %q is not a RocksDB checksum type (accepted: %s)",
			r.ChecksumType, strings.Join(checksumTypeNames(), ", "))
	}
	return nil
}

// validateDataAPI checks the data API's limits and the backup root.
func (c *Config) validateDataAPI() error {
	if c.NettyMaxFrameSizeBytes < 1 || c.NettyMaxFrameSizeBytes > maxFrameSize {
		return errors.Newf("nettyMaxFrameSizeBytes: %d is out of range [1, %d]", c.NettyMaxFrameSizeBytes, int64(maxFrameSize))
	}
	if c.HTTPServerMaxEntryBytesInFlight < c.NettyMaxFrameSizeBytes {
		return errors.Newf("httpServerMaxEntryBytesInFlight: %d is less than nettyMaxFrameSizeBytes (%d): the largest entry must fit in flight",
			c.HTTPServerMaxEntryBytesInFlight, c.NettyMaxFrameSizeBytes)
	}
	root := c.IndexCheckpointRootDirectory
	if root == "" {
		return nil
	}
	if strings.IndexByte(root, 0) >= 0 || !filepath.IsAbs(root) || slices.Contains(strings.Split(root, "/"), "..") {
		return errors.Newf("indexCheckpointRootDirectory: %q must be an absolute path without \"..\" components", root)
	}
	clean := filepath.Clean(root)
	for _, d := range c.DataDirectories() {
		abs, err := filepath.Abs(d.Path)
		if err != nil {
			return errors.Wrapf(err, "indexCheckpointRootDirectory: resolving %s %s", d.Kind, d.Path)
		}
		if within(clean, abs) || within(abs, clean) {
			return errors.Newf("indexCheckpointRootDirectory: %s overlaps %s %s: backups go outside the data directories", root, d.Kind, d.Path)
		}
	}
	return nil
}

// DataDirectory is a directory of the bookie's data: Kind is "ledger
// directory", "index directory" or "journal directory".
type DataDirectory struct {
	Kind, Path string
}

// DataDirectories returns the ledger, index and journal directories as
// configured: no backup may go into them.
func (c *Config) DataDirectories() []DataDirectory {
	var out []DataDirectory
	for _, k := range []struct {
		kind string
		dirs []string
	}{{"ledger directory", c.LedgerDirectories}, {"index directory", c.IndexDirectories}, {"journal directory", c.Journal.JournalDirectories}} {
		for _, d := range k.dirs {
			out = append(out, DataDirectory{k.kind, d})
		}
	}
	return out
}

// within reports whether the clean path p is dir or under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// validateHost accepts a host name or IP address, without a port.
func validateHost(host string) error {
	if host == "" {
		return errors.New("httpServerHost: empty; use 127.0.0.1 for loopback or 0.0.0.0 for all interfaces")
	}
	if strings.ContainsAny(host, " \t/[]") || strings.Count(host, ":") == 1 {
		return errors.Newf("httpServerHost: %q is not a host name or IP address (the port goes in httpServerPort)", host)
	}
	return nil
}

// AbsoluteDirectories makes the ledger, index and journal directories
// absolute, relative ones being relative to the working directory: the
// storage records them so (LAYOUT), and every log line, metric label and
// API answer then names a directory one way.
func (c *Config) AbsoluteDirectories() error {
	for _, dirs := range [][]string{c.LedgerDirectories, c.IndexDirectories, c.Journal.JournalDirectories} {
		for i, d := range dirs {
			abs, err := filepath.Abs(d)
			if err != nil {
				return errors.Wrapf(err, "making directory %s absolute", d)
			}
			dirs[i] = abs
		}
	}
	return nil
}

// LocationsPaths returns the directory of each entry location index,
// <indexDir>/current/locations, in ledger directory order (as
// EntryLocationIndex.getEntryLocationDBPath reports them upstream).
func (c *Config) LocationsPaths() []string {
	paths := make([]string, len(c.IndexDirectories))
	for i, d := range c.IndexDirectories {
		paths[i] = filepath.Join(d, "current", "locations")
	}
	return paths
}

// ReadAuthToken reads the admin API's bearer token from
// HTTPServerAuthTokenFile, without surrounding white space. It returns ""
// when no token file is configured, and an error if the file cannot be read
// or holds no token.
func (c *Config) ReadAuthToken() (string, error) {
	if c.HTTPServerAuthTokenFile == "" {
		return "", nil
	}
	data, err := os.ReadFile(c.HTTPServerAuthTokenFile)
	if err != nil {
		return "", errors.Wrapf(err, "httpServerAuthTokenFile: reading %q", c.HTTPServerAuthTokenFile)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", errors.Newf("httpServerAuthTokenFile: %q holds no token", c.HTTPServerAuthTokenFile)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return "", errors.Newf("httpServerAuthTokenFile: %q must hold one token on one line, without blanks", c.HTTPServerAuthTokenFile)
	}
	return token, nil
}

// PrometheusProviderClass is upstream's Prometheus stats provider, the
// value of statsProviderClass that turns the metrics listener on.
const PrometheusProviderClass = "org.apache.bookkeeper.stats.prometheus.PrometheusMetricsProvider"

// PrometheusListenerEnabled reports whether serve runs the metrics
// listener: statsProviderClass names the Prometheus provider (by its full
// name or its simple class name) and prometheusStatsHttpEnable is true.
func (c *Config) PrometheusListenerEnabled() bool {
	return c.PrometheusProviderNamed() && c.PrometheusStatsHTTPEnable
}

// PrometheusProviderNamed reports whether statsProviderClass names the
// Prometheus provider.
func (c *Config) PrometheusProviderNamed() bool {
	return c.StatsProviderClass == PrometheusProviderClass || c.StatsProviderClass == "PrometheusMetricsProvider"
}

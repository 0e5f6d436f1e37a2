package conf

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// engineFields drops the fields that are not settings (FS, Logger) so that
// options compare with require.Equal.
func engineFields(o *lsm.Options) lsm.Options {
	c := *o
	c.FS, c.Logger = nil, nil
	return c
}

// defaultsWith returns the engine defaults changed by f.
func defaultsWith(f func(o *lsm.Options)) lsm.Options {
	o := lsm.DefaultOptions()
	f(o)
	return engineFields(o)
}

func TestShippedOptionsFile(t *testing.T) {
	opts, notes, err := ReadOptionsFile("entry_location_rocksdb.conf.default")
	require.NoError(t, err)
	want := defaultsWith(func(o *lsm.Options) {
		o.MaxBackgroundJobs = 32
		o.MaxSubcompactions = 1
		o.MaxOpenFiles = -1
		o.Compression = lsm.LZ4Compression
		o.WriteBufferSize = 64 << 20
		o.MaxWriteBufferNumber = 4
		o.NumLevels = 7
		o.Level0FileNumCompactionTrigger = 4
		o.MaxBytesForLevelBase = 256 << 20
		o.TargetFileSizeBase = 64 << 20
		o.StaticLevelBytes = false
		o.BlockSize = 65536
		o.BlockCacheSize = 256 << 20
		o.BloomBitsPerKey = 10
		o.TableLayout = lsm.TableLayoutPartitioned
		o.MetadataBlockSize = 4096
	})
	require.Equal(t, want, engineFields(opts))
	require.Equal(t, []string{
		"[DBOptions] create_if_missing=true: ignored: RocksDB-only option",
		"[DBOptions] info_log_level=INFO_LEVEL: ignored: RocksDB-only option",
		"[DBOptions] keep_log_file_num=30: ignored: RocksDB-only option",
		"[DBOptions] log_file_time_to_roll=86400: ignored: RocksDB-only option",
		"[DBOptions] max_total_wal_size=536870912: ignored: RocksDB-only option",
		"[DBOptions] delete_obsolete_files_period_micros=3600000000: ignored: RocksDB-only option",
		`[TableOptions/BlockBasedTable "default"] format_version=5: ignored: RocksDB-only option`,
		`[TableOptions/BlockBasedTable "default"] checksum=kxxHash: ignored: RocksDB-only option`,
	}, notes)
}

// everyOptionFile sets every option the engine uses to a value other than
// its default.
const everyOptionFile = `
[Version]
  rocksdb_version=9.9.3
  options_file_version=1.1
[DBOptions]
  max_background_jobs=7
  max_subcompactions=3
  max_open_files=500
  max_manifest_file_size=128M
  wal_recovery_mode=kPointInTimeRecovery
[CFOptions "default"]
  write_buffer_size=32m
  max_write_buffer_number=3
  num_levels=5
  level0_file_num_compaction_trigger=6
  level0_slowdown_writes_trigger=12
  level0_stop_writes_trigger=24
  max_bytes_for_level_base=1g
  max_bytes_for_level_multiplier=8.5
  target_file_size_base=33554432
  max_compaction_bytes=536870912
  level_compaction_dynamic_level_bytes=false
  compression=kNoCompression
  compaction_style=kCompactionStyleLevel
  comparator=leveldb.BytewiseComparator
  table_factory=BlockBasedTable
  merge_operator=nullptr
  compaction_filter=nullptr
  compaction_filter_factory=nullptr
[TableOptions/BlockBasedTable "default"]
  block_size=16384
  block_restart_interval=8
  index_block_restart_interval=4
  metadata_block_size=8192
  block_cache=512M   # half a GiB
  high_pri_pool_ratio=0.25
  filter_policy=bloomfilter:12:false
  index_type=kBinarySearch
  partition_filters=false
  optimize_key_common_prefix=kDisabled
  cache_index_and_filter_blocks=true
  cache_index_and_filter_blocks_with_high_priority=true
  pin_top_level_index_and_filter=true
`

func TestEverySupportedOption(t *testing.T) {
	opts, notes, err := parseEngineOptions("every.conf", []byte(everyOptionFile))
	require.NoError(t, err)
	require.Empty(t, notes)
	want := defaultsWith(func(o *lsm.Options) {
		o.MaxBackgroundJobs = 7
		o.MaxSubcompactions = 3
		o.MaxOpenFiles = 500
		o.MaxManifestFileSize = 128 << 20
		o.WALRecoveryMode = lsm.WALRecoveryPointInTime
		o.WriteBufferSize = 32 << 20
		o.MaxWriteBufferNumber = 3
		o.NumLevels = 5
		o.Level0FileNumCompactionTrigger = 6
		o.Level0SlowdownWritesTrigger = 12
		o.Level0StopWritesTrigger = 24
		o.MaxBytesForLevelBase = 1 << 30
		o.MaxBytesForLevelMultiplier = 8.5
		o.TargetFileSizeBase = 32 << 20
		o.MaxCompactionBytes = 512 << 20
		o.StaticLevelBytes = true
		o.Compression = lsm.NoCompression
		o.BlockSize = 16384
		o.BlockRestartInterval = 8
		o.IndexBlockRestartInterval = 4
		o.MetadataBlockSize = 8192
		o.BlockCacheSize = 512 << 20
		o.BlockCacheHighPriorityRatio = 0.25
		o.BloomBitsPerKey = 12
		o.TableLayout = lsm.TableLayoutFull
		o.DisableCommonPrefix = true
	})
	require.Equal(t, want, engineFields(opts))

	// Every option with a mapping appears in the file above, so that a new
	// one cannot go untested.
	for section, options := range sectionSpecs() {
		for name, spec := range options {
			if spec.apply != nil || spec.silent {
				require.Contains(t, everyOptionFile, "\n  "+name+"=", "[%s] %s is not in everyOptionFile", section, name)
			}
		}
	}
}

func TestOptionValueForms(t *testing.T) {
	for _, tc := range []struct {
		section, line string
		want          func(o *lsm.Options)
	}{
		{`[TableOptions/BlockBasedTable "default"]`, "filter_policy=rocksdb.BloomFilter:10:false", func(o *lsm.Options) {}},
		{`[TableOptions/BlockBasedTable "default"]`, "filter_policy=ROCKSDB.BLOOMFILTER:7", func(o *lsm.Options) { o.BloomBitsPerKey = 7 }},
		{`[TableOptions/BlockBasedTable "default"]`, "filter_policy=bloomfilter:8.0:0", func(o *lsm.Options) { o.BloomBitsPerKey = 8 }},
		{`[TableOptions/BlockBasedTable "default"]`, "filter_policy=nullptr", func(o *lsm.Options) { o.BloomBitsPerKey = -1 }},
		{`[TableOptions/BlockBasedTable "default"]`, "filter_policy=bloomfilter:0:false", func(o *lsm.Options) { o.BloomBitsPerKey = -1 }},
		{`[TableOptions/BlockBasedTable "default"]`, "block_cache={capacity=1G;num_shard_bits=4;high_pri_pool_ratio=0.75}", func(o *lsm.Options) {
			o.BlockCacheSize, o.BlockCacheNumShardBits, o.BlockCacheHighPriorityRatio = 1<<30, 4, 0.75
		}},
		{`[TableOptions/BlockBasedTable "default"]`, "block_cache={capacity=8388608;num_shard_bits=-1;}", func(o *lsm.Options) { o.BlockCacheSize = 8 << 20 }},
		{`[TableOptions/BlockBasedTable "default"]`, "block_cache={capacity=8388608;num_shard_bits=0;}", func(o *lsm.Options) {
			o.BlockCacheSize, o.BlockCacheNumShardBits = 8<<20, -1 // one shard
		}},
		{`[TableOptions/BlockBasedTable "default"]`, "high_pri_pool_ratio=0", func(o *lsm.Options) { o.BlockCacheHighPriorityRatio = -1 }},
		{`[TableOptions/BlockBasedTable "default"]`, "index_type=kTwoLevelIndexSearch", func(o *lsm.Options) {}},
		{`[TableOptions/BlockBasedTable "default"]`, "optimize_key_common_prefix=kIfFastSeek", func(o *lsm.Options) {}},
		{`[TableOptions/BlockBasedTable "default"]`, "optimize_key_common_prefix=kEnabled", func(o *lsm.Options) {}},
		{`[CFOptions "default"]`, "compression=kLZ4Compression", func(o *lsm.Options) { o.Compression = lsm.LZ4Compression }},
		{`[CFOptions "default"]`, "level_compaction_dynamic_level_bytes=1", func(o *lsm.Options) {}},
		{`[CFOptions "default"]`, "level_compaction_dynamic_level_bytes=0", func(o *lsm.Options) { o.StaticLevelBytes = true }},
		{`[CFOptions "default"]`, "write_buffer_size=1024K", func(o *lsm.Options) { o.WriteBufferSize = 1 << 20 }},
		{`[CFOptions "default"]`, "level0_file_num_compaction_trigger=30", func(o *lsm.Options) {
			o.Level0FileNumCompactionTrigger, o.Level0SlowdownWritesTrigger = 30, 30 // raised silently: not set by the file
		}},
		{`[DBOptions]`, "max_manifest_file_size=18446744073709551615", func(o *lsm.Options) { o.MaxManifestFileSize = 1<<63 - 1 }},
		{`[DBOptions]`, "max_open_files=0", func(o *lsm.Options) { o.MaxOpenFiles = 20 }}, // clipped, as RocksDB does
		{`[DBOptions]`, "max_open_files=-1", func(o *lsm.Options) { o.MaxOpenFiles = -1 }},
	} {
		opts, _, err := parseEngineOptions("x.conf", []byte(tc.section+"\n"+tc.line+"\n"))
		require.NoError(t, err, tc.line)
		require.Equal(t, defaultsWith(tc.want), engineFields(opts), tc.line)
	}
}

func TestIgnoredOptionsReported(t *testing.T) {
	text := `[DBOptions]
wal_dir=/wal
paranoid_checks=false
[CFOptions "default"]
level0_file_num_compaction_trigger=10
level0_slowdown_writes_trigger=5
level0_stop_writes_trigger=8
compaction_pri=kMinOverlappingRatio
[TableOptions/BlockBasedTable "default"]
cache_index_and_filter_blocks=false
cache_index_and_filter_blocks_with_high_priority=false
pin_top_level_index_and_filter=false
partition_filters=false
filter_policy=rocksdb.BloomFilter:10:true
block_cache={capacity=64M;strict_capacity_limit=false}
whole_key_filtering=true
`
	opts, notes, err := parseEngineOptions("x.conf", []byte(text))
	require.NoError(t, err)
	require.Equal(t, []string{
		"[DBOptions] wal_dir=/wal: ignored: RocksDB-only option",
		"[DBOptions] paranoid_checks=false: ignored: RocksDB-only option",
		`[CFOptions "default"] compaction_pri=kMinOverlappingRatio: ignored: RocksDB-only option`,
		`[TableOptions/BlockBasedTable "default"] cache_index_and_filter_blocks=false: ignored: index and filter blocks always go through the block cache`,
		`[TableOptions/BlockBasedTable "default"] cache_index_and_filter_blocks_with_high_priority=false: ignored: index and filter blocks are always cached at high priority`,
		`[TableOptions/BlockBasedTable "default"] pin_top_level_index_and_filter=false: ignored: top-level index and filter blocks are always pinned`,
		`[TableOptions/BlockBasedTable "default"] filter_policy=rocksdb.BloomFilter:10:true: block-based filter requested: a full (or partitioned) filter is used, as in RocksDB 7 and later`,
		`[TableOptions/BlockBasedTable "default"] block_cache={capacity=64M;strict_capacity_limit=false}: ignored: strict_capacity_limit is RocksDB-only`,
		`[TableOptions/BlockBasedTable "default"] whole_key_filtering=true: ignored: RocksDB-only option`,
		`[TableOptions/BlockBasedTable "default"] partition_filters=false: ignored: with a two-level index the filter is partitioned too (use index_type=kBinarySearch for a full index and filter)`,
		`[CFOptions "default"] level0_slowdown_writes_trigger=5: raised to 10, level0_file_num_compaction_trigger, as RocksDB does`,
		`[CFOptions "default"] level0_stop_writes_trigger=8: raised to 10, level0_slowdown_writes_trigger, as RocksDB does`,
	}, notes)
	require.Equal(t, lsm.TableLayoutPartitioned, opts.TableLayout)
	require.Equal(t, 10, opts.Level0SlowdownWritesTrigger)
	require.Equal(t, 10, opts.Level0StopWritesTrigger)
	require.Equal(t, int64(64<<20), opts.BlockCacheSize)

	_, notes, err = parseEngineOptions("x.conf", []byte("[TableOptions/BlockBasedTable \"default\"]\nindex_type=kBinarySearch\npartition_filters=true\nblock_cache=nullptr\n"))
	require.NoError(t, err)
	require.Equal(t, []string{
		`[TableOptions/BlockBasedTable "default"] block_cache=nullptr: the engine's default block cache is used`,
		`[TableOptions/BlockBasedTable "default"] partition_filters=true: ignored: filters are partitioned only with index_type=kTwoLevelIndexSearch (RocksDB ignores it too)`,
	}, notes)
}

// TestOptionsFileErrors: every error names the file, the line, the
// section, the option and its value.
func TestOptionsFileErrors(t *testing.T) {
	const table = `[TableOptions/BlockBasedTable "default"]`
	const cf = `[CFOptions "default"]`
	for _, tc := range []struct {
		section, line string
		want          string
	}{
		// Unknown options.
		{"[DBOptions]", "max_backgroud_jobs=4", "[DBOptions] max_backgroud_jobs=4: unknown option; did you mean max_background_jobs?"},
		{cf, "WRITE_BUFFER_SIZE=1", cf + " WRITE_BUFFER_SIZE=1: unknown option; options are case-sensitive: did you mean write_buffer_size?"},
		{cf, "block_size=4096", cf + ` block_size=4096: unknown option here: block_size belongs in [TableOptions/BlockBasedTable "default"]`},
		{table, "max_open_files=1", table + " max_open_files=1: unknown option here: max_open_files belongs in [DBOptions]"},
		{table, "frobnicate=1", table + " frobnicate=1: unknown option (the accepted options are listed in docs/configuration.md)"},
		{"[Version]", "rocksdb_release=1", "[Version] rocksdb_release=1: unknown option"},
		// Malformed values of mapped options.
		{cf, "write_buffer_size=abc", cf + " write_buffer_size=abc: not an integer"},
		{cf, "write_buffer_size=64Q", cf + " write_buffer_size=64Q: not an integer"},
		{cf, "write_buffer_size=", cf + " write_buffer_size=: not an integer"},
		{cf, "write_buffer_size=99999999999T", "out of range"},
		{cf, "num_levels=99999999999", cf + " num_levels=99999999999: out of range [-2147483648, 2147483647]"},
		{cf, "max_bytes_for_level_multiplier=ten", cf + " max_bytes_for_level_multiplier=ten: not a number"},
		{cf, "max_bytes_for_level_multiplier=NaN", "not a number"},
		{cf, "level_compaction_dynamic_level_bytes=yes", cf + " level_compaction_dynamic_level_bytes=yes: not a boolean (accepted: true, false)"},
		{"[DBOptions]", "wal_recovery_mode=kSkipAnyCorruptedRecords", "[DBOptions] wal_recovery_mode=kSkipAnyCorruptedRecords: not supported by this engine: it would recover later writes without earlier ones"},
		{"[DBOptions]", "wal_recovery_mode=2", "[DBOptions] wal_recovery_mode=2: not a WAL recovery mode"},
		{cf, "compression=kZSTD", cf + " compression=kZSTD: not supported by this engine (accepted: kNoCompression, kLZ4Compression)"},
		{cf, "compression=lz4", cf + " compression=lz4: not a compression type (accepted: kNoCompression, kLZ4Compression)"},
		{cf, "compaction_style=kCompactionStyleUniversal", cf + " compaction_style=kCompactionStyleUniversal: not accepted (accepted: kCompactionStyleLevel)"},
		{cf, "comparator=rocksdb.ReverseBytewiseComparator", "not accepted (accepted: leveldb.BytewiseComparator)"},
		{table, "index_type=kHashSearch", table + " index_type=kHashSearch: not supported by this engine (accepted: kBinarySearch, kTwoLevelIndexSearch)"},
		{table, "index_type=binary", "not an index type (accepted: kBinarySearch, kTwoLevelIndexSearch)"},
		{table, "filter_policy=ribbonfilter:10", table + " filter_policy=ribbonfilter:10: not a supported filter policy (accepted: nullptr, rocksdb.BloomFilter:<bits>:false, bloomfilter:<bits>:false)"},
		{table, "filter_policy=bloomfilter:9.5:false", `bits per key "9.5" must be a whole number in [0, 64]`},
		{table, "filter_policy=bloomfilter:100", `bits per key "100" must be a whole number in [0, 64]`},
		{table, "filter_policy=bloomfilter:10:maybe", `use_block_based_builder "maybe": not a boolean`},
		{table, "block_cache=0", table + " block_cache=0: must be a positive number of bytes"},
		{table, "block_cache={capacity=1M", "must end with '}'"},
		{table, "block_cache={capacity=1M;colour=red}", "colour: unknown block cache field"},
		{table, "block_cache={capacity}", `"capacity" is not key=value`},
		{table, "high_pri_pool_ratio=-0.5", table + " high_pri_pool_ratio=-0.5: must be in [0, 1]"},
		{table, "high_pri_pool_ratio=1.5", "must be in [0, 1]"},
		{table, "optimize_key_common_prefix=yes", "not accepted (accepted: kDisabled, kIfFastSeek, kEnabled)"},
		{table, "pin_top_level_index_and_filter=sure", "not a boolean"},
		// Values the engine does not accept.
		// (RocksDB accepts up to 64 GiB; the engine's limit is narrower.)
		{cf, "write_buffer_size=8G", cf + " write_buffer_size=8G: not accepted by the engine: lsm: WriteBufferSize 8589934592 is out of range [64 KiB, 4 GiB]"},
		{cf, "max_write_buffer_number=100", "max_write_buffer_number=100: not accepted by the engine: lsm: MaxWriteBufferNumber 100 is out of range [2, 64]"},
		{cf, "num_levels=17", "not accepted by the engine: lsm: NumLevels 17"},
		{cf, "max_bytes_for_level_multiplier=0", "not accepted by the engine: lsm: MaxBytesForLevelMultiplier 1 is out of range [2, 1000]"},
		{table, "block_size=100", table + " block_size=100: not accepted by the engine: lsm: BlockSize 100 is out of range [256, 64 MiB]"},
		{table, "metadata_block_size=0", "not accepted by the engine"},
		{"[DBOptions]", "max_background_jobs=0", "not accepted by the engine"},
		// Malformed values of RocksDB-only options.
		{"[DBOptions]", "create_if_missing=ture", "[DBOptions] create_if_missing=ture: not a boolean (accepted: true, false)"},
		{"[DBOptions]", "keep_log_file_num=thirty", "[DBOptions] keep_log_file_num=thirty: not an integer"},
		{"[DBOptions]", "info_log_level=VERBOSE", "not accepted (accepted: DEBUG_LEVEL, INFO_LEVEL, WARN_LEVEL, ERROR_LEVEL, FATAL_LEVEL, HEADER_LEVEL)"},
		{table, "checksum=kMD5", "not accepted (accepted: kNoChecksum, kCRC32c, kxxHash, kxxHash64, kXXH3)"},
		{table, "format_version=five", table + " format_version=five: not an integer"},
		{cf, "memtable_prefix_bloom_size_ratio=half", "not a number"},
	} {
		text := "# comment\n" + tc.section + "\n" + tc.line + "\n"
		_, _, err := parseEngineOptions("/etc/bk/opts.conf", []byte(text))
		require.Error(t, err, tc.line)
		require.Contains(t, err.Error(), "/etc/bk/opts.conf:3: ", tc.line)
		require.Contains(t, err.Error(), tc.want, tc.line)
	}
}

func TestOptionsFileSectionErrors(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		{"[ColumnFamilyOptions \"default\"]\n", `x.conf:1: section [ColumnFamilyOptions "default"]: unknown section (accepted: [Version], [DBOptions], [CFOptions "default"], [TableOptions/BlockBasedTable "default"])`},
		{"\n[CFOptions \"ledgers\"]\n", `x.conf:2: section [CFOptions "ledgers"]: the entry location index has only the "default" column family (expected [CFOptions "default"])`},
		{"[CFOptions]\n", `section [CFOptions]: the entry location index has only the "default" column family`},
		{"[TableOptions/BlockBasedTable \"other\"]\n", `the entry location index has only the "default" column family (expected [TableOptions/BlockBasedTable "default"])`},
		{"[TableOptions/PlainTable \"default\"]\n", `section [TableOptions/PlainTable "default"]: table format "PlainTable" is not supported (accepted: [TableOptions/BlockBasedTable "default"])`},
		{"[DBOptions \"default\"]\n", `section [DBOptions "default"] takes no argument (expected [DBOptions])`},
		{"[DBOptions]\n[DBOptions]\n", "x.conf: line 2: section [DBOptions] appears twice"},
	} {
		_, _, err := parseEngineOptions("x.conf", []byte(tc.text))
		require.Error(t, err, tc.text)
		require.Contains(t, err.Error(), tc.want, tc.text)
	}
	_, _, err := ReadOptionsFile(filepath.Join(t.TempDir(), "missing.conf"))
	require.ErrorContains(t, err, "entryLocationRocksdbConf: reading RocksDB OPTIONS file")
}

// TestBookieConfMode mirrors KeyValueStorageRocksDBTest's
// testRocksDBInitiateWithBookieConfiguration: the options file named in
// the configuration does not exist, so the dbStorage_rocksDB_* keys apply.
func TestBookieConfMode(t *testing.T) {
	c, err := Load(LoadOptions{Overrides: map[string]string{
		"entryLocationRocksdbConf": filepath.Join(t.TempDir(), "entry_location_rocksdb.conf"),
	}})
	require.NoError(t, err)
	path, err := c.EntryLocationOptionsFile()
	require.NoError(t, err)
	require.Equal(t, "", path)
	opts, notes, err := c.EntryLocationOptions()
	require.NoError(t, err)
	require.Empty(t, notes)
	// The assertions of upstream's test.
	require.Equal(t, int64(64<<20), opts.WriteBufferSize)
	require.Equal(t, 4, opts.MaxWriteBufferNumber)
	require.Equal(t, int64(256<<20), opts.MaxBytesForLevelBase)
	require.False(t, opts.StaticLevelBytes, "level_compaction_dynamic_level_bytes is true")
	// The rest of upstream's bookie-conf mapping, field by field.
	require.Equal(t, defaultsWith(func(o *lsm.Options) {
		o.WriteBufferSize = 64 << 20
		o.MaxWriteBufferNumber = 4
		o.NumLevels = 7
		o.Level0FileNumCompactionTrigger = 4
		o.MaxBytesForLevelBase = 256 << 20
		o.MaxBackgroundJobs = 32
		o.MaxOpenFiles = -1
		o.TargetFileSizeBase = 64 << 20
		o.StaticLevelBytes = false
		o.BlockCacheSize = 256 << 20
		o.BlockSize = 65536
		o.BloomBitsPerKey = 10
		o.Compression = lsm.LZ4Compression
		o.TableLayout = lsm.TableLayoutPartitioned
		o.EnableStatistics = true
	}), engineFields(opts))

	// Every key changed.
	c, err = Load(LoadOptions{Overrides: map[string]string{
		"dbStorage_rocksDB_writeBufferSizeMB":                 "16",
		"dbStorage_rocksDB_numLevels":                         "5",
		"dbStorage_rocksDB_numFilesInLevel0":                  "25",
		"dbStorage_rocksDB_maxSizeInLevel1MB":                 "512",
		"dbStorage_rocksDB_sstSizeInMB":                       "32",
		"dbStorage_rocksDB_blockCacheSize":                    "1073741824",
		"dbStorage_rocksDB_blockSize":                         "4096",
		"dbStorage_rocksDB_bloomFilterBitsPerKey":             "0",
		"dbStorage_rocksDB_lz4CompressionEnabled":             "false",
		"dbStorage_rocksDB_partitionedIndexAndFiltersEnabled": "false",
		"enableStatistics":                                    "false",
		"dbStorage_rocksDB_format_version":                    "6",
		"dbStorage_rocksDB_checksum_type":                     "kCRC32c",
		"dbStorage_rocksDB_logPath":                           "/var/log/rocksdb",
		"dbStorage_rocksDB_logLevel":                          "debug",
	}})
	require.NoError(t, err)
	opts, notes, err = c.EntryLocationOptions()
	require.NoError(t, err)
	require.Equal(t, defaultsWith(func(o *lsm.Options) {
		o.WriteBufferSize = 16 << 20
		o.MaxWriteBufferNumber = 4
		o.NumLevels = 5
		o.Level0FileNumCompactionTrigger = 25
		o.Level0SlowdownWritesTrigger = 25 // RocksDB's sanitizing raises its default 20
		o.Level0StopWritesTrigger = 36
		o.MaxBytesForLevelBase = 512 << 20
		o.MaxBackgroundJobs = 32
		o.MaxOpenFiles = -1
		o.TargetFileSizeBase = 32 << 20
		o.BlockCacheSize = 1 << 30
		o.BlockSize = 4096
		o.BloomBitsPerKey = -1
		o.Compression = lsm.NoCompression
		o.TableLayout = lsm.TableLayoutFull
		o.EnableStatistics = false
	}), engineFields(opts))
	require.Equal(t, []string{
		"dbStorage_rocksDB_format_version=6: ignored: tables use bookie-index's own format",
		"dbStorage_rocksDB_checksum_type=kCRC32c: ignored: blocks always carry CRC-32C",
		"dbStorage_rocksDB_logPath=/var/log/rocksdb: ignored: the engine logs through the service's logger",
		"dbStorage_rocksDB_logLevel=debug: ignored: the engine logs through the service's logger",
	}, notes)

	c.RocksDB.NumFilesInLevel0 = 40
	opts, _, err = c.EntryLocationOptions()
	require.NoError(t, err)
	require.Equal(t, 40, opts.Level0SlowdownWritesTrigger)
	require.Equal(t, 40, opts.Level0StopWritesTrigger)
	require.NoError(t, opts.Validate())
}

// TestConfigFileMode mirrors testRocksDBInitiateWithConfigurationFile and
// testLevelCompactionDynamicLevelBytesFromConfigurationFile: an existing
// file wins over the dbStorage_rocksDB_* keys.
func TestConfigFileMode(t *testing.T) {
	shipped, err := os.ReadFile("entry_location_rocksdb.conf.default")
	require.NoError(t, err)
	path := writeFile(t, "entry_location_rocksdb.conf", strings.Replace(string(shipped), "write_buffer_size=67108864", "write_buffer_size=1048576", 1))
	c, err := Load(LoadOptions{Overrides: map[string]string{
		"entryLocationRocksdbConf":            path,
		"dbStorage_rocksDB_writeBufferSizeMB": "128", // not used: the file wins
		"enableStatistics":                    "no",
	}})
	require.NoError(t, err)
	got, err := c.EntryLocationOptionsFile()
	require.NoError(t, err)
	require.Equal(t, path, got)
	opts, notes, err := c.EntryLocationOptions()
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), opts.WriteBufferSize)
	require.Equal(t, lsm.LZ4Compression, opts.Compression)
	require.Equal(t, 4, opts.MaxWriteBufferNumber)
	require.False(t, opts.StaticLevelBytes)
	require.False(t, opts.EnableStatistics)
	require.Equal(t, "dbStorage_rocksDB_writeBufferSizeMB=128: ignored: entryLocationRocksdbConf "+path+" is used instead", notes[len(notes)-1])
	require.Len(t, notes, 9)

	// Upstream's test fixture sizes are below RocksDB's minimums, which
	// RocksDB clips: so does this engine, naming RocksDB's rule.
	upstreamFixture := writeFile(t, "test_entry_location_rocksdb.conf",
		"[DBOptions]\n create_if_missing=true\n keep_log_file_num=1\n max_total_wal_size=1000\n"+
			"[CFOptions \"default\"]\n compression=kLZ4Compression\n write_buffer_size=1024\n max_write_buffer_number=1\n level_compaction_dynamic_level_bytes=true\n")
	c.EntryLocationRocksdbConf = upstreamFixture
	opts, notes, err = c.EntryLocationOptions()
	require.NoError(t, err)
	require.Equal(t, int64(64<<10), opts.WriteBufferSize)
	require.Equal(t, 2, opts.MaxWriteBufferNumber)
	require.Contains(t, notes, `[CFOptions "default"] write_buffer_size=1024: clipped to 65536: RocksDB's SanitizeCfOptions clips write_buffer_size to [64 KiB, 64 GiB]`)
	require.Contains(t, notes, `[CFOptions "default"] max_write_buffer_number=1: clipped to 2: RocksDB's SanitizeCfOptions raises max_write_buffer_number to at least 2`)

	c.EntryLocationRocksdbConf = t.TempDir()
	_, _, err = c.EntryLocationOptions()
	require.ErrorContains(t, err, "is a directory, not a RocksDB OPTIONS file")

	c.EntryLocationRocksdbConf = "  "
	got, err = c.EntryLocationOptionsFile()
	require.NoError(t, err)
	require.Equal(t, "", got)
}

// TestRandomOptionsFiles writes files setting random subsets of the mapped
// options to random valid values (in random spellings), and checks the
// result against a model that applies each expected value and then
// RocksDB's rules (L0 trigger sanitizing, the layout from index_type).
func TestRandomOptionsFiles(t *testing.T) {
	iterations := 300
	if *long {
		iterations = 20000
	}
	rng := rand.New(rand.NewSource(1))
	size := func(min, max int64) (string, int64) {
		v := min + rng.Int63n(max-min+1)
		switch {
		case v%(1<<20) == 0 && rng.Intn(2) == 0:
			return fmt.Sprintf("%d%c", v>>20, "mM"[rng.Intn(2)]), v
		case v%(1<<10) == 0 && rng.Intn(2) == 0:
			return fmt.Sprintf("%dk", v>>10), v
		}
		return fmt.Sprint(v), v
	}
	type setting struct {
		section, key string
		gen          func() (text string, apply func(o *lsm.Options, m *model))
	}
	intSetting := func(section, key string, min, max int64, set func(o *lsm.Options, v int64)) setting {
		return setting{section, key, func() (string, func(*lsm.Options, *model)) {
			text, v := size(min, max)
			return text, func(o *lsm.Options, _ *model) { set(o, v) }
		}}
	}
	boolText := func(b bool) string {
		if rng.Intn(2) == 0 {
			return fmt.Sprint(b)
		}
		if b {
			return "1"
		}
		return "0"
	}
	settings := []setting{
		intSetting(sectionDB, "max_background_jobs", 1, 256, func(o *lsm.Options, v int64) { o.MaxBackgroundJobs = int(v) }),
		intSetting(sectionDB, "max_subcompactions", 1, 64, func(o *lsm.Options, v int64) { o.MaxSubcompactions = int(v) }),
		intSetting(sectionDB, "max_open_files", 16, 100000, func(o *lsm.Options, v int64) { o.MaxOpenFiles = int(v) }),
		intSetting(sectionDB, "max_manifest_file_size", 64<<10, 1<<40, func(o *lsm.Options, v int64) { o.MaxManifestFileSize = v }),
		intSetting(sectionCF, "write_buffer_size", 64<<10, 4<<30, func(o *lsm.Options, v int64) { o.WriteBufferSize = v }),
		intSetting(sectionCF, "max_write_buffer_number", 2, 64, func(o *lsm.Options, v int64) { o.MaxWriteBufferNumber = int(v) }),
		intSetting(sectionCF, "num_levels", 2, 16, func(o *lsm.Options, v int64) { o.NumLevels = int(v) }),
		intSetting(sectionCF, "level0_file_num_compaction_trigger", 1, 60, func(o *lsm.Options, v int64) { o.Level0FileNumCompactionTrigger = int(v) }),
		intSetting(sectionCF, "level0_slowdown_writes_trigger", 1, 60, func(o *lsm.Options, v int64) { o.Level0SlowdownWritesTrigger = int(v) }),
		intSetting(sectionCF, "level0_stop_writes_trigger", 1, 60, func(o *lsm.Options, v int64) { o.Level0StopWritesTrigger = int(v) }),
		intSetting(sectionCF, "max_bytes_for_level_base", 1<<20, 1<<40, func(o *lsm.Options, v int64) { o.MaxBytesForLevelBase = v }),
		intSetting(sectionCF, "target_file_size_base", 64<<10, 1<<34, func(o *lsm.Options, v int64) { o.TargetFileSizeBase = v }),
		intSetting(sectionCF, "max_compaction_bytes", 64<<10, 1<<40, func(o *lsm.Options, v int64) { o.MaxCompactionBytes = v }),
		{sectionCF, "max_bytes_for_level_multiplier", func() (string, func(*lsm.Options, *model)) {
			v := float64(2+rng.Intn(40)) + float64(rng.Intn(4))/4
			return fmt.Sprint(v), func(o *lsm.Options, _ *model) { o.MaxBytesForLevelMultiplier = v }
		}},
		{sectionCF, "level_compaction_dynamic_level_bytes", func() (string, func(*lsm.Options, *model)) {
			b := rng.Intn(2) == 0
			return boolText(b), func(o *lsm.Options, _ *model) { o.StaticLevelBytes = !b }
		}},
		{sectionCF, "compression", func() (string, func(*lsm.Options, *model)) {
			if rng.Intn(2) == 0 {
				return "kNoCompression", func(o *lsm.Options, _ *model) { o.Compression = lsm.NoCompression }
			}
			return "kLZ4Compression", func(o *lsm.Options, _ *model) { o.Compression = lsm.LZ4Compression }
		}},
		intSetting(sectionTable, "block_size", 256, 64<<20, func(o *lsm.Options, v int64) { o.BlockSize = int(v) }),
		intSetting(sectionTable, "block_restart_interval", 1, 1<<16, func(o *lsm.Options, v int64) { o.BlockRestartInterval = int(v) }),
		intSetting(sectionTable, "index_block_restart_interval", 1, 1<<16, func(o *lsm.Options, v int64) { o.IndexBlockRestartInterval = int(v) }),
		intSetting(sectionTable, "metadata_block_size", 64, 64<<20, func(o *lsm.Options, v int64) { o.MetadataBlockSize = int(v) }),
		intSetting(sectionTable, "block_cache", 1, 1<<40, func(o *lsm.Options, v int64) { o.BlockCacheSize = v }),
		{sectionTable, "high_pri_pool_ratio", func() (string, func(*lsm.Options, *model)) {
			v := float64(1+rng.Intn(100)) / 100
			return fmt.Sprint(v), func(o *lsm.Options, _ *model) { o.BlockCacheHighPriorityRatio = v }
		}},
		{sectionTable, "filter_policy", func() (string, func(*lsm.Options, *model)) {
			bits := rng.Intn(65)
			want := bits
			if bits == 0 {
				want = -1
			}
			name := []string{"rocksdb.BloomFilter", "bloomfilter"}[rng.Intn(2)]
			return fmt.Sprintf("%s:%d:false", name, bits), func(o *lsm.Options, _ *model) { o.BloomBitsPerKey = want }
		}},
		{sectionTable, "index_type", func() (string, func(*lsm.Options, *model)) {
			v := []string{"kBinarySearch", "kTwoLevelIndexSearch"}[rng.Intn(2)]
			return v, func(_ *lsm.Options, m *model) { m.indexType = v }
		}},
		{sectionTable, "partition_filters", func() (string, func(*lsm.Options, *model)) {
			return boolText(rng.Intn(2) == 0), func(*lsm.Options, *model) {}
		}},
		{sectionTable, "optimize_key_common_prefix", func() (string, func(*lsm.Options, *model)) {
			v := []string{"kDisabled", "kIfFastSeek", "kEnabled"}[rng.Intn(3)]
			return v, func(o *lsm.Options, _ *model) { o.DisableCommonPrefix = v == "kDisabled" }
		}},
	}
	titles := map[string]string{sectionDB: "[DBOptions]", sectionCF: `[CFOptions "default"]`, sectionTable: `[TableOptions/BlockBasedTable "default"]`}
	for it := 0; it < iterations; it++ {
		bySection := map[string][]string{}
		want := lsm.DefaultOptions()
		m := &model{}
		ignoredAdded := false
		for _, i := range rng.Perm(len(settings))[:rng.Intn(len(settings)+1)] {
			s := settings[i]
			text, apply := s.gen()
			bySection[s.section] = append(bySection[s.section], fmt.Sprintf("%s%s%s=%s", []string{"", " ", "\t"}[rng.Intn(3)], s.key, []string{"", " "}[rng.Intn(2)], text))
			apply(want, m)
			if !ignoredAdded && rng.Intn(4) == 0 { // a RocksDB-only option in between
				bySection[sectionDB] = append(bySection[sectionDB], fmt.Sprintf("keep_log_file_num=%d", 1+rng.Intn(100)))
				ignoredAdded = true
			}
		}
		// The model: RocksDB's sanitizing and the layout from index_type.
		if want.Level0SlowdownWritesTrigger < want.Level0FileNumCompactionTrigger {
			want.Level0SlowdownWritesTrigger = want.Level0FileNumCompactionTrigger
		}
		if want.Level0StopWritesTrigger < want.Level0SlowdownWritesTrigger {
			want.Level0StopWritesTrigger = want.Level0SlowdownWritesTrigger
		}
		want.TableLayout = lsm.TableLayoutPartitioned
		if m.indexType == "kBinarySearch" {
			want.TableLayout = lsm.TableLayoutFull
		}
		var file strings.Builder
		for _, sec := range rng.Perm(3) {
			name := []string{sectionDB, sectionCF, sectionTable}[sec]
			if len(bySection[name]) == 0 && rng.Intn(2) == 0 {
				continue
			}
			file.WriteString(titles[name] + "\n")
			for _, line := range bySection[name] {
				file.WriteString(line)
				if rng.Intn(3) == 0 {
					file.WriteString("  # note")
				}
				file.WriteString("\n")
			}
		}
		got, _, err := parseEngineOptions("random.conf", []byte(file.String()))
		require.NoError(t, err, "iteration %d:\n%s", it, file.String())
		require.Equal(t, engineFields(want), engineFields(got), "iteration %d:\n%s", it, file.String())
		require.NoError(t, got.Validate())
	}
}

// model holds what the random test's model needs besides the options.
type model struct {
	indexType string
}

// TestOptionsClippedAsRocksDB: the values RocksDB's SanitizeOptions clips
// are clipped, with a note naming the rule, not refused.
func TestOptionsClippedAsRocksDB(t *testing.T) {
	const cf = `[CFOptions "default"]`
	const table = `[TableOptions/BlockBasedTable "default"]`
	for _, tc := range []struct {
		section, line string
		want          func(o *lsm.Options)
		note          string
	}{
		{cf, "write_buffer_size=1024", func(o *lsm.Options) { o.WriteBufferSize = 64 << 10 }, "clipped to 65536: RocksDB's SanitizeCfOptions clips write_buffer_size to [64 KiB, 64 GiB]"},
		{cf, "max_write_buffer_number=0", func(o *lsm.Options) { o.MaxWriteBufferNumber = 2 }, "clipped to 2: RocksDB's SanitizeCfOptions raises max_write_buffer_number to at least 2"},
		{cf, "num_levels=1", func(o *lsm.Options) { o.NumLevels = 2 }, "clipped to 2: RocksDB's SanitizeCfOptions raises num_levels to at least 2 with level compaction"},
		{cf, "level0_file_num_compaction_trigger=0", func(o *lsm.Options) { o.Level0FileNumCompactionTrigger = 1 }, "clipped to 1: RocksDB's SanitizeCfOptions raises level0_file_num_compaction_trigger 0 to 1"},
		{"[DBOptions]", "max_open_files=5", func(o *lsm.Options) { o.MaxOpenFiles = 20 }, "clipped to 20: RocksDB's SanitizeOptions clips max_open_files other than -1 to [20, 4194304]"},
		{table, "block_restart_interval=0", func(o *lsm.Options) { o.BlockRestartInterval = 1 }, "clipped to 1: RocksDB's block-based table factory raises block_restart_interval to at least 1"},
		{table, "index_block_restart_interval=-3", func(o *lsm.Options) { o.IndexBlockRestartInterval = 1 }, "clipped to 1: RocksDB's block-based table factory raises index_block_restart_interval to at least 1"},
	} {
		opts, notes, err := parseEngineOptions("x.conf", []byte(tc.section+"\n"+tc.line+"\n"))
		require.NoError(t, err, tc.line)
		require.Equal(t, defaultsWith(tc.want), engineFields(opts), tc.line)
		require.Equal(t, []string{tc.section + " " + tc.line + ": " + tc.note}, notes)
	}
}

// TestOptionsFileAllErrors: every problem of a file is reported at once,
// one line each, in file order.
func TestOptionsFileAllErrors(t *testing.T) {
	text := "[DBOptions]\nmax_backgroud_jobs=4\ncreate_if_missing=ture\n[CFOptions \"default\"]\nwrite_buffer_size=abc\n" +
		"[CFOptions \"ledgers\"]\nnum_levels=3\n[TableOptions/BlockBasedTable \"default\"]\nblock_size=100\n"
	_, _, err := parseEngineOptions("x.conf", []byte(text))
	require.Error(t, err)
	require.Equal(t, `x.conf: 5 problems:
  x.conf:2: [DBOptions] max_backgroud_jobs=4: unknown option; did you mean max_background_jobs?
  x.conf:3: [DBOptions] create_if_missing=ture: not a boolean (accepted: true, false)
  x.conf:5: [CFOptions "default"] write_buffer_size=abc: not an integer
  x.conf:6: section [CFOptions "ledgers"]: the entry location index has only the "default" column family (expected [CFOptions "default"])
  x.conf:9: [TableOptions/BlockBasedTable "default"] block_size=100: not accepted by the engine: lsm: BlockSize 100 is out of range [256, 64 MiB]`, err.Error())

	// Syntax errors too.
	_, _, err = parseEngineOptions("y.conf", []byte("[DBOptions]\nnot a line\n[DBOptions]\nx\n"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "line 2: ")
	require.Contains(t, err.Error(), "line 3: section [DBOptions] appears twice")
	require.Contains(t, err.Error(), "line 4: ")
}

// TestIdleCompactionKey: dbStorage_idleCompactionDelaySeconds reaches the
// engine in both modes (default 30 s), and 0 or a negative value turns the
// idle compaction off.
func TestIdleCompactionKey(t *testing.T) {
	shipped, err := os.ReadFile("entry_location_rocksdb.conf.default")
	require.NoError(t, err)
	optionsFile := writeFile(t, "entry_location_rocksdb.conf", string(shipped))
	for _, mode := range []string{"bookie-conf", "config-file"} {
		for value, want := range map[string]time.Duration{"": 30 * time.Second, "5": 5 * time.Second, "0": -1, "-3": -1} {
			overrides := map[string]string{}
			if mode == "config-file" {
				overrides["entryLocationRocksdbConf"] = optionsFile
			}
			if value != "" {
				overrides["dbStorage_idleCompactionDelaySeconds"] = value
			}
			c, err := Load(LoadOptions{Overrides: overrides})
			require.NoError(t, err)
			opts, _, err := c.EntryLocationOptions()
			require.NoError(t, err, "%s %q", mode, value)
			require.Equal(t, want, opts.IdleCompactionDelay, "%s %q", mode, value)
		}
	}
	_, err = Load(LoadOptions{Overrides: map[string]string{"dbStorage_idleCompactionDelaySeconds": "soon"}})
	require.ErrorContains(t, err, "dbStorage_idleCompactionDelaySeconds")
}

package conf

import (
	"math"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// optionSpec says what one RocksDB option means to bookie-index.
type optionSpec struct {
	// apply parses the value and sets it on the builder. Nil for options
	// the engine has no use for.
	apply func(b *optionsBuilder, value string) error
	// check validates the value of an option without apply (nil accepts
	// any value), so that a typo such as create_if_missing=ture is still
	// caught.
	check func(value string) error
	// silent marks an option without apply whose accepted values describe
	// what the engine always does (compaction_style=kCompactionStyleLevel):
	// it is not reported as ignored.
	silent bool
}

// The section names of an OPTIONS file.
const (
	sectionVersion = "Version"
	sectionDB      = "DBOptions"
	sectionCF      = "CFOptions"
	sectionTable   = "TableOptions/BlockBasedTable"
	defaultCF      = "default"
)

// sectionSpecs returns the options each section accepts.
func sectionSpecs() map[string]map[string]optionSpec {
	return map[string]map[string]optionSpec{
		sectionVersion: {
			"rocksdb_version":      {silent: true},
			"options_file_version": {silent: true},
		},
		sectionDB:    dbOptionSpecs(),
		sectionCF:    cfOptionSpecs(),
		sectionTable: tableOptionSpecs(),
	}
}

func dbOptionSpecs() map[string]optionSpec {
	m := map[string]optionSpec{
		"max_background_jobs":    {apply: intOption(func(o *lsm.Options, v int) { o.MaxBackgroundJobs = v })},
		"max_subcompactions":     {apply: intOption(func(o *lsm.Options, v int) { o.MaxSubcompactions = v })},
		"max_open_files":         {apply: intOption(func(o *lsm.Options, v int) { o.MaxOpenFiles = v })},
		"max_manifest_file_size": {apply: int64Option(func(o *lsm.Options, v int64) { o.MaxManifestFileSize = v })},
		"info_log_level":         {check: checkEnum("DEBUG_LEVEL", "INFO_LEVEL", "WARN_LEVEL", "ERROR_LEVEL", "FATAL_LEVEL", "HEADER_LEVEL")},
		"wal_recovery_mode":      {apply: applyWALRecoveryMode},
	}
	ignore(m, checkBool,
		"create_if_missing", "create_missing_column_families", "error_if_exists", "paranoid_checks",
		"use_fsync", "allow_mmap_reads", "allow_mmap_writes", "use_direct_reads",
		"use_direct_io_for_flush_and_compaction", "allow_fallocate", "is_fd_close_on_exec",
		"advise_random_on_open", "use_adaptive_mutex", "enable_thread_tracking", "enable_pipelined_write",
		"unordered_write", "allow_concurrent_memtable_write", "enable_write_thread_adaptive_yield",
		"skip_stats_update_on_db_open", "skip_checking_sst_file_sizes_on_db_open", "allow_2pc",
		"fail_if_options_file_error", "dump_malloc_stats", "avoid_flush_during_recovery",
		"avoid_flush_during_shutdown", "allow_ingest_behind", "two_write_queues", "manual_wal_flush",
		"atomic_flush", "avoid_unnecessary_blocking_io", "write_dbid_to_manifest", "persist_stats_to_disk",
		"best_efforts_recovery", "allow_data_in_errors", "track_and_verify_wals_in_manifest",
		"flush_verify_memtable_count", "strict_bytes_per_sync", "preserve_deletes",
		"new_table_reader_for_compaction_inputs", "enforce_single_del_contracts",
		"verify_sst_unique_id_in_manifest", "compaction_verify_record_count",
		"background_close_inactive_wals", "prefix_seek_opt_in_only", "write_identity_file",
		"track_and_verify_wals", "skip_log_error_on_recovery")
	ignore(m, checkInt,
		"max_file_opening_threads", "max_total_wal_size", "delete_obsolete_files_period_micros",
		"max_background_compactions", "max_background_flushes", "max_log_file_size",
		"log_file_time_to_roll", "keep_log_file_num", "recycle_log_file_num", "table_cache_numshardbits",
		"WAL_ttl_seconds", "WAL_size_limit_MB", "manifest_preallocation_size", "stats_dump_period_sec",
		"stats_persist_period_sec", "stats_history_buffer_size", "db_write_buffer_size",
		"compaction_readahead_size", "random_access_max_buffer_size", "writable_file_max_buffer_size",
		"bytes_per_sync", "wal_bytes_per_sync", "delayed_write_rate", "write_thread_max_yield_usec",
		"write_thread_slow_yield_usec", "max_write_batch_group_size_bytes", "max_bgerror_resume_count",
		"bgerror_resume_retry_interval", "log_readahead_size", "follower_refresh_catchup_period_ms",
		"follower_catchup_retry_count", "follower_catchup_retry_wait_ms")
	ignore(m, nil,
		"wal_dir", "db_log_dir", "access_hint_on_compaction_start", "wal_compression", "db_host_id",
		"rate_limiter", "file_checksum_gen_factory", "wal_filter", "lowest_used_cache_tier", "checksum_handoff_file_types", "daily_offpeak_time_utc",
		"metadata_write_temperature", "wal_write_temperature", "calculate_sst_write_lifetime_hint_set")
	ignore(m, checkFloat, "experimental_mempurge_threshold")
	return m
}

func cfOptionSpecs() map[string]optionSpec {
	m := map[string]optionSpec{
		"write_buffer_size":                  {apply: int64Option(func(o *lsm.Options, v int64) { o.WriteBufferSize = v })},
		"max_write_buffer_number":            {apply: intOption(func(o *lsm.Options, v int) { o.MaxWriteBufferNumber = v })},
		"num_levels":                         {apply: intOption(func(o *lsm.Options, v int) { o.NumLevels = v })},
		"level0_file_num_compaction_trigger": {apply: intOption(func(o *lsm.Options, v int) { o.Level0FileNumCompactionTrigger = v })},
		"level0_slowdown_writes_trigger": {apply: func(b *optionsBuilder, v string) error {
			b.slowdownSet, b.slowdownAt = true, b.at
			return intOption(func(o *lsm.Options, n int) { o.Level0SlowdownWritesTrigger = n })(b, v)
		}},
		"level0_stop_writes_trigger": {apply: func(b *optionsBuilder, v string) error {
			b.stopSet, b.stopAt = true, b.at
			return intOption(func(o *lsm.Options, n int) { o.Level0StopWritesTrigger = n })(b, v)
		}},
		"max_bytes_for_level_base":             {apply: int64Option(func(o *lsm.Options, v int64) { o.MaxBytesForLevelBase = v })},
		"max_bytes_for_level_multiplier":       {apply: floatOption(func(o *lsm.Options, v float64) { o.MaxBytesForLevelMultiplier = v })},
		"target_file_size_base":                {apply: int64Option(func(o *lsm.Options, v int64) { o.TargetFileSizeBase = v })},
		"max_compaction_bytes":                 {apply: int64Option(func(o *lsm.Options, v int64) { o.MaxCompactionBytes = v })},
		"level_compaction_dynamic_level_bytes": {apply: boolOption(func(b *optionsBuilder, v bool) { b.opts.StaticLevelBytes = !v })},
		"compression":                          {apply: applyCompression},
		// Settings the engine always has: accepted silently when they agree.
		"compaction_style":          {check: checkEnum("kCompactionStyleLevel"), silent: true},
		"comparator":                {check: checkEnum("leveldb.BytewiseComparator"), silent: true},
		"table_factory":             {check: checkEnum("BlockBasedTable"), silent: true},
		"merge_operator":            {check: checkEnum("nullptr"), silent: true},
		"compaction_filter":         {check: checkEnum("nullptr"), silent: true},
		"compaction_filter_factory": {check: checkEnum("nullptr"), silent: true},
	}
	ignore(m, checkBool,
		"inplace_update_support", "memtable_whole_key_filtering", "optimize_filters_for_hits",
		"paranoid_file_checks", "report_bg_io_stats", "force_consistency_checks", "disable_auto_compactions",
		"enable_blob_files", "enable_blob_garbage_collection", "check_flush_compaction_key_order",
		"level_compaction_dynamic_file_size", "ignore_max_compaction_bytes_for_input",
		"persist_user_defined_timestamps", "purge_redundant_kvs_while_flush", "verify_checksums_in_compaction",
		"filter_deletes", "compaction_measure_io_stats", "paranoid_memory_checks",
		"strict_max_successive_merges", "cf_allow_ingest_behind")
	ignore(m, checkInt,
		"min_write_buffer_number_to_merge", "max_write_buffer_number_to_maintain",
		"max_write_buffer_size_to_maintain", "target_file_size_multiplier",
		"soft_pending_compaction_bytes_limit", "hard_pending_compaction_bytes_limit", "arena_block_size",
		"memtable_huge_page_size", "bloom_locality", "max_successive_merges", "inplace_update_num_locks",
		"max_sequential_skip_in_iterations", "ttl", "periodic_compaction_seconds", "sample_for_compression",
		"min_blob_size", "blob_file_size", "blob_compaction_readahead_size", "blob_file_starting_level",
		"preclude_last_level_data_seconds", "preserve_internal_time_seconds",
		"memtable_protection_bytes_per_key", "block_protection_bytes_per_key",
		"bottommost_file_compaction_delay", "memtable_max_range_deletions", "source_compaction_factor",
		"max_grandparent_overlap_factor", "expanded_compaction_factor", "min_partial_merge_operands",
		"memtable_prefix_bloom_bits", "memtable_prefix_bloom_probes", "uncache_aggressiveness",
		"memtable_op_scan_flush_trigger", "memtable_avg_op_scan_flush_trigger")
	ignore(m, nil,
		"bottommost_compression", "compression_per_level", "compression_opts", "bottommost_compression_opts",
		"compaction_pri", "compaction_options_universal", "compaction_options_fifo",
		"max_bytes_for_level_multiplier_additional", "blob_compression_type", "prepopulate_blob_cache", "bottommost_temperature",
		"last_level_temperature", "default_temperature", "default_write_temperature",
		"sst_partitioner_factory", "memtable_factory", "memtable_insert_with_hint_prefix_extractor",
		"prefix_extractor", "blob_cache", "table_properties_collectors")
	ignore(m, checkFloat, "memtable_prefix_bloom_size_ratio", "blob_garbage_collection_age_cutoff",
		"blob_garbage_collection_force_threshold")
	return m
}

func tableOptionSpecs() map[string]optionSpec {
	m := map[string]optionSpec{
		"block_size":                   {apply: intOption(func(o *lsm.Options, v int) { o.BlockSize = v })},
		"block_restart_interval":       {apply: intOption(func(o *lsm.Options, v int) { o.BlockRestartInterval = v })},
		"index_block_restart_interval": {apply: intOption(func(o *lsm.Options, v int) { o.IndexBlockRestartInterval = v })},
		"metadata_block_size":          {apply: intOption(func(o *lsm.Options, v int) { o.MetadataBlockSize = v })},
		"block_cache":                  {apply: applyBlockCache},
		"high_pri_pool_ratio":          {apply: applyHighPriPoolRatio},
		"filter_policy":                {apply: applyFilterPolicy},
		"index_type":                   {apply: applyIndexType},
		"partition_filters":            {apply: boolOption(func(b *optionsBuilder, v bool) { b.partitionFilters, b.partitionFiltersAt = &v, b.at })},
		"optimize_key_common_prefix":   {apply: applyOptimizeKeyCommonPrefix},
		// Index and filter blocks always go through the block cache, at
		// high priority, with the top-level blocks pinned: true agrees and
		// is silent, false cannot be honoured and is reported.
		"cache_index_and_filter_blocks":                    {apply: alwaysTrue("index and filter blocks always go through the block cache")},
		"cache_index_and_filter_blocks_with_high_priority": {apply: alwaysTrue("index and filter blocks are always cached at high priority")},
		"pin_top_level_index_and_filter":                   {apply: alwaysTrue("top-level index and filter blocks are always pinned")},
		"format_version":                                   {check: checkInt},
		"checksum":                                         {check: checkEnum(checksumTypeNames()...)},
	}
	ignore(m, checkBool,
		"no_block_cache", "whole_key_filtering", "hash_index_allow_collision", "verify_compression",
		"enable_index_compression", "block_align", "pin_l0_filter_and_index_blocks_in_cache",
		"optimize_filters_for_memory", "detect_filter_construct_corruption", "reserve_table_builder_memory",
		"use_delta_encoding", "skip_table_builder_flush", "decouple_partitioned_filters",
		"fail_if_no_udi_on_open", "separate_key_value_in_data_block")
	ignore(m, checkInt,
		"block_size_deviation", "read_amp_bytes_per_bit", "max_auto_readahead_size",
		"initial_auto_readahead_size", "num_file_reads_for_auto_readahead", "super_block_alignment_size",
		"super_block_alignment_space_overhead_ratio")
	ignore(m, nil,
		"data_block_index_type", "index_shortening",
		"prepopulate_block_cache", "metadata_cache_options", "cache_usage_options",
		"flush_block_policy_factory", "block_cache_compressed", "persistent_cache",
		"user_defined_index_factory")
	ignore(m, checkFloat, "data_block_hash_table_util_ratio")
	return m
}

// ignore adds RocksDB-only options whose values check validates.
func ignore(m map[string]optionSpec, check func(string) error, names ...string) {
	for _, n := range names {
		m[n] = optionSpec{check: check}
	}
}

// parseRocksInt parses an integer as RocksDB does: decimal, optionally
// negative, with an optional size suffix k, m, g or t (either case; powers
// of 1024). Values above 2^63-1, such as the 18446744073709551615 RocksDB
// writes for "unlimited", are taken as 2^63-1.
func parseRocksInt(s string) (int64, error) {
	mult := int64(1)
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if u, uerr := strconv.ParseUint(s, 10, 64); uerr == nil && u > math.MaxInt64 {
			return math.MaxInt64, nil
		}
		if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
			return math.MaxInt64, nil
		}
		return 0, errors.New("not an integer")
	}
	if v > math.MaxInt64/mult || v < math.MinInt64/mult {
		return 0, errors.New("out of range")
	}
	return v * mult, nil
}

// parseRocksBool accepts true, false, 1 and 0, as RocksDB does.
func parseRocksBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, errors.New("not a boolean (accepted: true, false)")
}

func checkInt(s string) error  { _, err := parseRocksInt(s); return err }
func checkBool(s string) error { _, err := parseRocksBool(s); return err }
func checkFloat(s string) error {
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return errors.New("not a number")
	}
	return nil
}

// checkEnum accepts exactly one of values.
func checkEnum(values ...string) func(string) error {
	return func(s string) error {
		for _, v := range values {
			if s == v {
				return nil
			}
		}
		return errors.Newf("not accepted (accepted: %s)", strings.Join(values, ", "))
	}
}

func intOption(set func(o *lsm.Options, v int)) func(b *optionsBuilder, value string) error {
	return func(b *optionsBuilder, value string) error {
		v, err := parseRocksInt(value)
		if err != nil {
			return err
		}
		if v > math.MaxInt32 || v < math.MinInt32 {
			return errors.Newf("out of range [%d, %d]", math.MinInt32, math.MaxInt32)
		}
		set(b.opts, int(v))
		return nil
	}
}

func int64Option(set func(o *lsm.Options, v int64)) func(b *optionsBuilder, value string) error {
	return func(b *optionsBuilder, value string) error {
		v, err := parseRocksInt(value)
		if err != nil {
			return err
		}
		set(b.opts, v)
		return nil
	}
}

func floatOption(set func(o *lsm.Options, v float64)) func(b *optionsBuilder, value string) error {
	return func(b *optionsBuilder, value string) error {
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("not a number")
		}
		set(b.opts, v)
		return nil
	}
}

func boolOption(set func(b *optionsBuilder, v bool)) func(b *optionsBuilder, value string) error {
	return func(b *optionsBuilder, value string) error {
		v, err := parseRocksBool(value)
		if err != nil {
			return err
		}
		set(b, v)
		return nil
	}
}

// alwaysTrue is a boolean option the engine always has on: false is
// accepted and reported with why.
func alwaysTrue(why string) func(b *optionsBuilder, value string) error {
	return func(b *optionsBuilder, value string) error {
		v, err := parseRocksBool(value)
		if err != nil {
			return err
		}
		if !v {
			b.note("ignored: " + why)
		}
		return nil
	}
}

func applyCompression(b *optionsBuilder, value string) error {
	switch value {
	case "kNoCompression":
		b.opts.Compression = lsm.NoCompression
	case "kLZ4Compression":
		b.opts.Compression = lsm.LZ4Compression
	case "kSnappyCompression", "kZlibCompression", "kBZip2Compression", "kLZ4HCCompression",
		"kXpressCompression", "kZSTD", "kZSTDNotFinalCompression", "kDisableCompressionOption":
		return errors.New("not supported by this engine (accepted: kNoCompression, kLZ4Compression)")
	default:
		return errors.New("not a compression type (accepted: kNoCompression, kLZ4Compression)")
	}
	return nil
}

// applyWALRecoveryMode maps RocksDB's modes onto the engine's two: a torn
// tail is always dropped, and damage within synced bytes either refuses the
// open or ends the recovery there.
func applyWALRecoveryMode(b *optionsBuilder, value string) error {
	switch value {
	case "kTolerateCorruptedTailRecords", "kAbsoluteConsistency":
		b.opts.WALRecoveryMode = lsm.WALRecoveryRefuse
	case "kPointInTimeRecovery":
		b.opts.WALRecoveryMode = lsm.WALRecoveryPointInTime
	case "kSkipAnyCorruptedRecords":
		return errors.New("not supported by this engine: it would recover later writes without earlier ones " +
			"(accepted: kTolerateCorruptedTailRecords, kAbsoluteConsistency, kPointInTimeRecovery)")
	default:
		return errors.New("not a WAL recovery mode (accepted: kTolerateCorruptedTailRecords, kAbsoluteConsistency, kPointInTimeRecovery)")
	}
	return nil
}

func applyIndexType(b *optionsBuilder, value string) error {
	switch value {
	case "kBinarySearch", "kTwoLevelIndexSearch":
		b.indexType = value
		return nil
	case "kHashSearch", "kBinarySearchWithFirstKey":
		return errors.New("not supported by this engine (accepted: kBinarySearch, kTwoLevelIndexSearch)")
	}
	return errors.New("not an index type (accepted: kBinarySearch, kTwoLevelIndexSearch)")
}

func applyOptimizeKeyCommonPrefix(b *optionsBuilder, value string) error {
	switch value {
	case "kDisabled":
		b.opts.DisableCommonPrefix = true
	case "kIfFastSeek", "kEnabled":
		// The comparator is bytewise, so "if fast seek" is always.
		b.opts.DisableCommonPrefix = false
	default:
		return errors.New("not accepted (accepted: kDisabled, kIfFastSeek, kEnabled)")
	}
	return nil
}

// applyFilterPolicy accepts nullptr (no filter), and
// [rocksdb.]BloomFilter:<bits per key>[:<use block-based builder>], the
// name in either case. 0 bits per key also means no filter.
func applyFilterPolicy(b *optionsBuilder, value string) error {
	const accepted = "accepted: nullptr, rocksdb.BloomFilter:<bits>:false, bloomfilter:<bits>:false"
	if value == "nullptr" {
		b.opts.BloomBitsPerKey = -1
		return nil
	}
	lower := strings.ToLower(value)
	var rest string
	switch {
	case strings.HasPrefix(lower, "rocksdb.bloomfilter:"):
		rest = value[len("rocksdb.bloomfilter:"):]
	case strings.HasPrefix(lower, "bloomfilter:"):
		rest = value[len("bloomfilter:"):]
	default:
		return errors.Newf("not a supported filter policy (%s)", accepted)
	}
	bitsText, blockBasedText, hasBlockBased := strings.Cut(rest, ":")
	bits, err := strconv.ParseFloat(bitsText, 64)
	if err != nil || bits != math.Trunc(bits) || bits < 0 || bits > 64 {
		return errors.Newf("bits per key %q must be a whole number in [0, 64] (%s)", bitsText, accepted)
	}
	if hasBlockBased {
		blockBased, err := parseRocksBool(blockBasedText)
		if err != nil {
			return errors.Newf("use_block_based_builder %q: %v (%s)", blockBasedText, err, accepted)
		}
		if blockBased {
			b.note("block-based filter requested: a full (or partitioned) filter is used, as in RocksDB 7 and later")
		}
	}
	if bits == 0 {
		b.opts.BloomBitsPerKey = -1
	} else {
		b.opts.BloomBitsPerKey = int(bits)
	}
	return nil
}

// applyBlockCache accepts a capacity in bytes, or RocksDB's struct form
// {capacity=N;num_shard_bits=N;high_pri_pool_ratio=R;...}, or nullptr (the
// engine's default cache).
func applyBlockCache(b *optionsBuilder, value string) error {
	if value == "nullptr" {
		b.note("the engine's default block cache is used")
		return nil
	}
	if !strings.HasPrefix(value, "{") {
		return setBlockCacheCapacity(b, value)
	}
	if !strings.HasSuffix(value, "}") {
		return errors.New("a {...} block cache description must end with '}'")
	}
	for _, field := range strings.Split(value[1:len(value)-1], ";") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		k, v, ok := strings.Cut(field, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return errors.Newf("%q is not key=value", field)
		}
		var err error
		switch k {
		case "capacity":
			err = setBlockCacheCapacity(b, v)
		case "num_shard_bits":
			var n int64
			if n, err = parseRocksInt(v); err == nil {
				switch {
				case n > 0:
					b.opts.BlockCacheNumShardBits = int(min(n, math.MaxInt32))
				case n == 0: // one shard; the engine spells it negative
					b.opts.BlockCacheNumShardBits = -1
				} // negative: RocksDB's "default", the engine's 0
			}
		case "high_pri_pool_ratio":
			err = applyHighPriPoolRatio(b, v)
		case "strict_capacity_limit", "low_pri_pool_ratio", "metadata_charge_policy", "use_adaptive_mutex",
			"memory_allocator", "id", "estimated_entry_charge", "eviction_effort_cap":
			b.note("ignored: " + k + " is RocksDB-only")
		default:
			err = errors.New("unknown block cache field (accepted: capacity, num_shard_bits, high_pri_pool_ratio)")
		}
		if err != nil {
			return errors.Wrapf(err, "%s", k)
		}
	}
	return nil
}

func setBlockCacheCapacity(b *optionsBuilder, value string) error {
	n, err := parseRocksInt(value)
	if err != nil {
		return err
	}
	if n <= 0 {
		return errors.New("must be a positive number of bytes (the engine always reads through a block cache)")
	}
	b.opts.BlockCacheSize = n
	return nil
}

// applyHighPriPoolRatio takes the share of the block cache kept for index
// and filter partitions. RocksDB's 0 (no share) is the engine's negative.
func applyHighPriPoolRatio(b *optionsBuilder, value string) error {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(v) {
		return errors.New("not a number")
	}
	if v < 0 || v > 1 {
		return errors.New("must be in [0, 1]")
	}
	if v == 0 {
		v = -1
	}
	b.opts.BlockCacheHighPriorityRatio = v
	return nil
}

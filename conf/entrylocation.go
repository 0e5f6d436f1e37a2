package conf

import (
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// EntryLocationOptions returns the engine options of every entry location
// index, chosen as BookKeeper chooses the RocksDB options of its
// "locations" database:
//
//   - Config-file mode: EntryLocationRocksdbConf names an existing file.
//     It is read as a RocksDB OPTIONS file (see ReadOptionsFile); the
//     dbStorage_rocksDB_* keys are not used.
//   - Bookie-conf mode, otherwise: the options come from the
//     dbStorage_rocksDB_* keys, mapped as upstream's
//     initializeRocksDBWithBookieConf does (see docs/configuration.md).
//
// In both modes EnableStatistics comes from enableStatistics. The second
// result lists the settings that have no effect on this engine, one line
// each ("[DBOptions] keep_log_file_num=30: ignored: RocksDB-only option"),
// for the service to log at startup. FS and Logger are the engine's
// defaults; the caller sets its own logger.
func (c *Config) EntryLocationOptions() (*lsm.Options, []string, error) {
	path, err := c.EntryLocationOptionsFile()
	if err != nil {
		return nil, nil, err
	}
	if path == "" {
		return c.bookieConfOptions()
	}
	opts, notes, err := ReadOptionsFile(path)
	if err != nil {
		return nil, nil, err
	}
	opts.EnableStatistics = c.EnableStatistics
	c.applyIdleCompaction(opts)
	return opts, append(notes, c.unusedRocksDBKeys(path)...), nil
}

// EntryLocationOptionsFile returns the OPTIONS file EntryLocationOptions
// reads, or "" in bookie-conf mode: EntryLocationRocksdbConf is empty or
// names no file. A path that exists but is a directory or cannot be
// examined is an error.
func (c *Config) EntryLocationOptionsFile() (string, error) {
	path := strings.TrimSpace(c.EntryLocationRocksdbConf)
	if path == "" {
		return "", nil
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", errors.Wrapf(err, "entryLocationRocksdbConf: %q", path)
	case info.IsDir():
		return "", errors.Newf("entryLocationRocksdbConf: %q is a directory, not a RocksDB OPTIONS file", path)
	}
	return path, nil
}

// ReadOptionsFile reads a RocksDB OPTIONS file and maps it onto engine
// options. Options the file does not set keep the engine's defaults
// (lsm.DefaultOptions), not RocksDB's: in particular the index and filter
// are partitioned unless index_type=kBinarySearch.
//
// Every option must be known: the ones the engine uses are mapped (see
// docs/configuration.md), RocksDB-only ones are checked for their value's
// form and listed in the second result as ignored. An unknown option, an
// option in the wrong section, a malformed or out-of-range value, an
// unknown section, or a column family other than "default" is an error
// naming the file, the line, the section, the option and the value.
func ReadOptionsFile(path string) (*lsm.Options, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, errors.Wrap(err, "entryLocationRocksdbConf: reading RocksDB OPTIONS file")
	}
	return parseEngineOptions(path, data)
}

// parseEngineOptions maps the OPTIONS file data, called name in errors.
// Every problem of the file is reported, in one error, one line each.
func parseEngineOptions(name string, data []byte) (*lsm.Options, []string, error) {
	sections, err := parseOptionsFile(data)
	if err != nil {
		return nil, nil, prefixProblems(name, err)
	}
	specs := sectionSpecs()
	sanitizers := rocksSanitizers()
	b := newOptionsBuilder()
	var probs problems
	for _, s := range sections {
		table, err := sectionOptions(specs, s)
		if err != nil {
			probs.addf("%s:%d: %v", name, s.line, err)
			continue
		}
		for _, e := range s.entries {
			at := fmt.Sprintf("%s %s=%s", s.title(), e.key, e.value)
			spec, ok := table[e.key]
			if !ok {
				probs.addf("%s:%d: %s: %s", name, e.line, at, unknownOptionMessage(specs, s.name, e.key))
				continue
			}
			if spec.apply == nil {
				if spec.check != nil {
					if err := spec.check(e.value); err != nil {
						probs.addf("%s:%d: %s: %v", name, e.line, at, err)
						continue
					}
				}
				if !spec.silent {
					b.notes = append(b.notes, at+": ignored: RocksDB-only option")
				}
				continue
			}
			// Check the value alone against defaults first, so that an
			// out-of-range value is reported with its own line. A value
			// RocksDB clips is clipped, with a note.
			probe := newOptionsBuilder()
			if err := spec.apply(probe, e.value); err != nil {
				probs.addf("%s:%d: %s: %v", name, e.line, at, err)
				continue
			}
			sanitizer, clips := sanitizers[e.key]
			if clips {
				sanitizer.clip(probe.opts)
			}
			probe.finish()
			if err := probe.opts.Validate(); err != nil {
				probs.addf("%s:%d: %s: not accepted by the engine: %v", name, e.line, at, err)
				continue
			}
			b.at = at
			if err := spec.apply(b, e.value); err != nil {
				probs.addf("%s:%d: %s: %v", name, e.line, at, err)
				continue
			}
			if clips {
				if to := sanitizer.clip(b.opts); to != "" {
					b.note(fmt.Sprintf("clipped to %s: %s", to, sanitizer.rule))
				}
			}
		}
	}
	if err := probs.err(name); err != nil {
		return nil, nil, err
	}
	b.finish()
	if err := b.opts.Validate(); err != nil {
		return nil, nil, errors.Wrapf(err, "%s: the options together are not accepted by the engine", name)
	}
	return b.opts, b.notes, nil
}

// sectionOptions returns the options section s accepts.
func sectionOptions(specs map[string]map[string]optionSpec, s *optionsSection) (map[string]optionSpec, error) {
	switch {
	case s.name == sectionVersion || s.name == sectionDB:
		if s.hasArg {
			return nil, errors.Newf("section %s takes no argument (expected [%s])", s.title(), s.name)
		}
		return specs[s.name], nil
	case s.name == sectionCF || s.name == sectionTable:
		if !s.hasArg || s.arg != defaultCF {
			return nil, errors.Newf("section %s: the entry location index has only the \"default\" column family (expected [%s \"default\"])", s.title(), s.name)
		}
		return specs[s.name], nil
	case strings.HasPrefix(s.name, "TableOptions/"):
		return nil, errors.Newf("section %s: table format %q is not supported (accepted: [%s \"default\"])",
			s.title(), strings.TrimPrefix(s.name, "TableOptions/"), sectionTable)
	}
	return nil, errors.Newf("section %s: unknown section (accepted: [%s], [%s], [%s \"default\"], [%s \"default\"])",
		s.title(), sectionVersion, sectionDB, sectionCF, sectionTable)
}

// unknownOptionMessage explains an unknown option: it belongs in another
// section, differs from a known one in case or by a typo, or is unknown.
func unknownOptionMessage(specs map[string]map[string]optionSpec, section, key string) string {
	for _, other := range []string{sectionDB, sectionCF, sectionTable} {
		if _, ok := specs[other][key]; ok && other != section {
			if other == sectionDB {
				return fmt.Sprintf("unknown option here: %s belongs in [%s]", key, other)
			}
			return fmt.Sprintf("unknown option here: %s belongs in [%s \"default\"]", key, other)
		}
	}
	names := make([]string, 0, len(specs[section]))
	for n := range specs[section] {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestDist := "", len(key)/3+2
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return fmt.Sprintf("unknown option; options are case-sensitive: did you mean %s?", n)
		}
		if d := editDistance(n, key); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown option; did you mean %s?", best)
	}
	return "unknown option (the accepted options are listed in docs/configuration.md)"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// optionsBuilder accumulates the engine options of an OPTIONS file. Some
// options only take effect together, in finish.
type optionsBuilder struct {
	opts *lsm.Options
	// indexType is index_type as written, "" when unset.
	indexType string
	// partitionFilters is partition_filters, nil when unset.
	partitionFilters *bool
	// partitionFiltersAt locates partition_filters for notes.
	partitionFiltersAt string
	// slowdownSet and stopSet: the L0 write triggers were given.
	slowdownSet, stopSet bool
	slowdownAt, stopAt   string
	// at locates the option being applied, for notes.
	at    string
	notes []string
}

func newOptionsBuilder() *optionsBuilder {
	return &optionsBuilder{opts: lsm.DefaultOptions()}
}

// note records that the option being applied was not taken as written.
func (b *optionsBuilder) note(msg string) {
	b.notes = append(b.notes, b.at+": "+msg)
}

// finish applies what depends on several options: the table layout and
// the L0 write triggers.
func (b *optionsBuilder) finish() {
	switch b.indexType {
	case "kBinarySearch":
		b.opts.TableLayout = lsm.TableLayoutFull
		if b.partitionFilters != nil && *b.partitionFilters {
			b.notes = append(b.notes, b.partitionFiltersAt+": ignored: filters are partitioned only with index_type=kTwoLevelIndexSearch (RocksDB ignores it too)")
		}
	default: // kTwoLevelIndexSearch, or unset: the engine's default
		b.opts.TableLayout = lsm.TableLayoutPartitioned
		if b.partitionFilters != nil && !*b.partitionFilters {
			b.notes = append(b.notes, b.partitionFiltersAt+": ignored: with a two-level index the filter is partitioned too (use index_type=kBinarySearch for a full index and filter)")
		}
	}
	slowdown, stop := sanitizeL0Triggers(b.opts)
	if slowdown && b.slowdownSet {
		b.notes = append(b.notes, fmt.Sprintf("%s: raised to %d, level0_file_num_compaction_trigger, as RocksDB does", b.slowdownAt, b.opts.Level0SlowdownWritesTrigger))
	}
	if stop && b.stopSet {
		b.notes = append(b.notes, fmt.Sprintf("%s: raised to %d, level0_slowdown_writes_trigger, as RocksDB does", b.stopAt, b.opts.Level0StopWritesTrigger))
	}
}

// sanitizeL0Triggers raises the L0 slowdown trigger to at least the
// compaction trigger and the stop trigger to at least the slowdown
// trigger, as RocksDB's SanitizeOptions does, and reports which it raised.
func sanitizeL0Triggers(o *lsm.Options) (slowdown, stop bool) {
	if o.Level0SlowdownWritesTrigger < o.Level0FileNumCompactionTrigger {
		o.Level0SlowdownWritesTrigger = o.Level0FileNumCompactionTrigger
		slowdown = true
	}
	if o.Level0StopWritesTrigger < o.Level0SlowdownWritesTrigger {
		o.Level0StopWritesTrigger = o.Level0SlowdownWritesTrigger
		stop = true
	}
	return slowdown, stop
}

// Settings upstream's bookie-conf mode hard-codes for the entry location
// database.
const (
	bookieConfMaxWriteBufferNumber = 4
	bookieConfMaxBackgroundJobs    = 32
	bookieConfMaxOpenFiles         = -1
)

// bookieSetting maps one dbStorage_rocksDB_* key onto the engine options.
type bookieSetting struct {
	key   string
	apply func(o *lsm.Options)
}

// bookieConfSettings returns the mapping of upstream's
// initializeRocksDBWithBookieConf for DbConfigType.EntryLocation.
func (c *Config) bookieConfSettings() []bookieSetting {
	r := &c.RocksDB
	return []bookieSetting{
		{"dbStorage_rocksDB_writeBufferSizeMB", func(o *lsm.Options) { o.WriteBufferSize = r.WriteBufferSizeMB << 20 }},
		{"dbStorage_rocksDB_numLevels", func(o *lsm.Options) {
			if r.NumLevels > 0 { // upstream sets num_levels only when positive
				o.NumLevels = r.NumLevels
			}
		}},
		{"dbStorage_rocksDB_numFilesInLevel0", func(o *lsm.Options) { o.Level0FileNumCompactionTrigger = r.NumFilesInLevel0 }},
		{"dbStorage_rocksDB_maxSizeInLevel1MB", func(o *lsm.Options) { o.MaxBytesForLevelBase = r.MaxSizeInLevel1MB << 20 }},
		{"dbStorage_rocksDB_sstSizeInMB", func(o *lsm.Options) { o.TargetFileSizeBase = r.SSTSizeInMB << 20 }},
		{"dbStorage_rocksDB_blockCacheSize", func(o *lsm.Options) { o.BlockCacheSize = r.BlockCacheSize }},
		{"dbStorage_rocksDB_blockSize", func(o *lsm.Options) { o.BlockSize = r.BlockSize }},
		{"dbStorage_rocksDB_bloomFilterBitsPerKey", func(o *lsm.Options) {
			if r.BloomFilterBitsPerKey > 0 {
				o.BloomBitsPerKey = r.BloomFilterBitsPerKey
			} else {
				o.BloomBitsPerKey = -1 // no filter, as upstream sets no filter policy
			}
		}},
		{"dbStorage_rocksDB_lz4CompressionEnabled", func(o *lsm.Options) {
			if r.LZ4CompressionEnabled {
				o.Compression = lsm.LZ4Compression
			} else {
				o.Compression = lsm.NoCompression
			}
		}},
		{"dbStorage_rocksDB_partitionedIndexAndFiltersEnabled", func(o *lsm.Options) {
			if r.PartitionedIndexAndFiltersEnabled {
				o.TableLayout = lsm.TableLayoutPartitioned
			} else {
				o.TableLayout = lsm.TableLayoutFull
			}
		}},
	}
}

// bookieConfOptions builds the engine options of bookie-conf mode.
func (c *Config) bookieConfOptions() (*lsm.Options, []string, error) {
	if err := c.RocksDB.validate(); err != nil {
		return nil, nil, err
	}
	o := lsm.DefaultOptions()
	o.MaxWriteBufferNumber = bookieConfMaxWriteBufferNumber
	o.MaxBackgroundJobs = bookieConfMaxBackgroundJobs
	o.MaxOpenFiles = bookieConfMaxOpenFiles
	o.StaticLevelBytes = false // level_compaction_dynamic_level_bytes=true
	for _, s := range c.bookieConfSettings() {
		probe := lsm.DefaultOptions()
		s.apply(probe)
		sanitizeL0Triggers(probe)
		if err := probe.Validate(); err != nil {
			return nil, nil, errors.Newf("%s: %s is not accepted by the engine: %v", s.key, c.Settings()[s.key], err)
		}
		s.apply(o)
	}
	sanitizeL0Triggers(o) // RocksDB's defaults 20 and 36 rise with numFilesInLevel0
	o.EnableStatistics = c.EnableStatistics
	c.applyIdleCompaction(o)
	if err := o.Validate(); err != nil {
		return nil, nil, errors.Wrap(err, "dbStorage_rocksDB_* settings together are not accepted by the engine")
	}
	var notes []string
	r := &c.RocksDB
	for _, n := range []struct {
		changed bool
		key     string
		value   string
		why     string
	}{
		{r.FormatVersion != 5, "dbStorage_rocksDB_format_version", fmt.Sprint(r.FormatVersion), "tables use bookie-index's own format"},
		{r.ChecksumType != "kxxHash", "dbStorage_rocksDB_checksum_type", r.ChecksumType, "blocks always carry CRC-32C"},
		{r.LogPath != "", "dbStorage_rocksDB_logPath", r.LogPath, "the engine logs through the service's logger"},
		{r.LogLevel != "info", "dbStorage_rocksDB_logLevel", r.LogLevel, "the engine logs through the service's logger"},
	} {
		if n.changed {
			notes = append(notes, fmt.Sprintf("%s=%s: ignored: %s", n.key, n.value, n.why))
		}
	}
	return o, notes, nil
}

// unusedRocksDBKeys lists the dbStorage_rocksDB_* keys set to other than
// their defaults, which an OPTIONS file overrides (upstream ignores them
// silently in config-file mode).
func (c *Config) unusedRocksDBKeys(path string) []string {
	defaults := &Config{}
	for _, s := range keySpecs() {
		_ = s.decode(defaults, s.def) // defaults always decode; TestDefaultsDecode checks
	}
	var notes []string
	for _, s := range keySpecs() {
		if !strings.HasPrefix(s.name, "dbStorage_rocksDB_") {
			continue
		}
		if v := s.encode(c); v != s.encode(defaults) {
			notes = append(notes, fmt.Sprintf("%s=%s: ignored: entryLocationRocksdbConf %s is used instead", s.name, v, path))
		}
	}
	return notes
}

// applyIdleCompaction sets the engine's idle-compaction delay from
// dbStorage_idleCompactionDelaySeconds (both modes): 0 or negative is off.
func (c *Config) applyIdleCompaction(o *lsm.Options) {
	if c.IdleCompactionDelay > 0 {
		o.IdleCompactionDelay = c.IdleCompactionDelay
	} else {
		o.IdleCompactionDelay = -1
	}
}

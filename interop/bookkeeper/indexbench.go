package bookkeeper

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/benchmark"
	"github.com/cockroachdb/errors"
)

// BenchJVMFlags are the JVM's flags for the benchmark's BookKeeper arm:
// the heap and direct memory of BookKeeper's bkenv.sh defaults
// (BOOKIE_MIN_HEAP_MEMORY=BOOKIE_MAX_HEAP_MEMORY=1g,
// BOOKIE_MAX_DIRECT_MEMORY=2g) and G1, the JDK's collector on a server
// machine, named so that a small machine does not pick another. The
// RocksDB block cache is native memory, outside both the heap and the
// direct memory limit.
var BenchJVMFlags = []string{"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=2g", "-XX:+UseG1GC"}

// DefaultBenchOptionsFile is the OPTIONS file of the arm's config-file
// mode: the repository's conf/entry_location_rocksdb.conf.default,
// BookKeeper's file with the partitioned index and filter settings.
func DefaultBenchOptionsFile() string {
	return filepath.Join(RepoDir(), "conf", "entry_location_rocksdb.conf.default")
}

// The BookKeeper arm's option modes.
const (
	// ModeBookieConf is bookie-conf mode, BookKeeper's own defaults (no
	// OPTIONS file; the dbStorage_rocksDB_* keys at their defaults with
	// the run's sizes): in 4.18.2, partitioned index and filters
	// (dbStorage_rocksDB_partitionedIndexAndFiltersEnabled=true).
	ModeBookieConf = "bookie-conf"
	// ModeBookieConfFull is bookie-conf mode with
	// dbStorage_rocksDB_partitionedIndexAndFiltersEnabled=false: one full
	// filter and a one-level index per table.
	ModeBookieConfFull = "bookie-conf-full"
	// ModeFile is config-file mode: an OPTIONS file as
	// entryLocationRocksdbConf (DefaultBenchOptionsFile unless set).
	ModeFile = "file"
)

// IndexBenchArm is the BookKeeper arm of the benchmark (docs/benchmarks.md,
// "BookKeeper arm"): BookKeeper 4.18.2's own EntryLocationIndex over its
// KeyValueStorageRocksDB, run by the program IndexBench in a JVM with the
// workload of the run's Config. It is a benchmark.ProcessArm; its rows say
// "engine":"bookkeeper", with the rocksdbjni version and the options mode
// in engine_version and options.
type IndexBenchArm struct {
	cfg *benchmark.Config
	// Mode is ModeBookieConf, ModeBookieConfFull or ModeFile. In the
	// bookie-conf modes the dbStorage_rocksDB_* keys carry the run's cache,
	// table size, memtable size, block size, Bloom bits and compression.
	Mode string
	// OptionsFile is the RocksDB OPTIONS file of ModeFile, given as
	// entryLocationRocksdbConf (its block_cache, target_file_size_base and
	// write_buffer_size replaced by the run's).
	OptionsFile string
	// RocksDB is the rocksdbjni version: BookKeeperRocksDB or OtherRocksDB.
	RocksDB string
	// JVMFlags are the JVM's flags (BenchJVMFlags unless set).
	JVMFlags []string
	// NoPerfContext runs the reads without RocksDB's perf context: no
	// per-op block counters (their columns are 0), none of their cost.
	NoPerfContext bool
}

// NewIndexBenchArm returns the arm of cfg's workload in mode on
// rocksdbjni of version rocksdb.
func NewIndexBenchArm(cfg *benchmark.Config, mode, rocksdb string) (*IndexBenchArm, error) {
	a := &IndexBenchArm{cfg: cfg, Mode: mode, RocksDB: rocksdb, JVMFlags: BenchJVMFlags}
	switch mode {
	case ModeBookieConf, ModeBookieConfFull:
	case ModeFile:
		a.OptionsFile = DefaultBenchOptionsFile()
	default:
		return nil, errors.Newf("the BookKeeper arm's mode %q: accepted %s, %s, %s", mode, ModeBookieConf, ModeBookieConfFull, ModeFile)
	}
	if rocksdb != BookKeeperRocksDB && rocksdb != OtherRocksDB {
		return nil, errors.Newf("the BookKeeper arm's rocksdbjni %q: accepted %s, %s", rocksdb, BookKeeperRocksDB, OtherRocksDB)
	}
	return a, nil
}

// Name is the engine's name in the rows.
func (a *IndexBenchArm) Name() string { return "bookkeeper" }

// DirName is the arm's directory under the run's: bookkeeper-, the mode
// and the rocksdbjni version.
func (a *IndexBenchArm) DirName() string {
	return "bookkeeper-" + a.Mode + "-rocksdb" + a.RocksDB
}

// Command is the java command of IndexBench (benchmark.ProcessArm).
func (a *IndexBenchArm) Command(dir string, phases []string, cacheSizes []int64) (*exec.Cmd, error) {
	p, err := Compile()
	if err != nil {
		return nil, errors.Wrap(err, "the BookKeeper arm")
	}
	if p, err = p.WithRocksDB(a.RocksDB); err != nil {
		return nil, errors.Wrap(err, "the BookKeeper arm")
	}
	return p.Command("IndexBench", a.JVMFlags, a.Args(dir, phases, cacheSizes)...), nil
}

// ReaderCommand is the disk-bound mode's reader of one cache size
// (benchmark.DiskBoundReader): the same program, its read phases only, on
// the loaded store in dir, counting the bytes it reads from the disk.
func (a *IndexBenchArm) ReaderCommand(dir string, cacheBytes int64, phases []string) (*exec.Cmd, error) {
	cmd, err := a.Command(dir, phases, []int64{cacheBytes})
	if err != nil {
		return nil, err
	}
	cmd.Args = append(cmd.Args, "--disk-io", "true")
	return cmd, nil
}

// Args are IndexBench's arguments for the run's Config.
func (a *IndexBenchArm) Args(dir string, phases []string, cacheSizes []int64) []string {
	cfg := a.cfg
	caches := make([]string, len(cacheSizes))
	for i, c := range cacheSizes {
		caches[i] = strconv.FormatInt(c, 10)
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	args := []string{
		"--dir", dir,
		"--ledgers", i64(cfg.Ledgers), "--entries", i64(cfg.Entries), "--flush-entries", i64(cfg.FlushEntries),
		"--phases", strings.Join(phases, ","), "--cache", strings.Join(caches, ","),
		"--threads", strconv.Itoa(cfg.Threads),
		"--warmup-ms", i64(cfg.Warmup.Milliseconds()), "--duration-ms", i64(cfg.Duration.Milliseconds()),
		"--target-file-size", i64(cfg.EffectiveTargetFileSize()), "--write-buffer", i64(cfg.EffectiveWriteBuffer()),
		"--block-size", strconv.Itoa(cfg.BlockSize), "--bloom-bits", strconv.Itoa(cfg.BloomBits),
		"--compression", cfg.Compression,
	}
	switch a.Mode {
	case ModeFile:
		args = append(args, "--options-file", a.OptionsFile)
	case ModeBookieConfFull:
		args = append(args, "--partitioned", "false")
	}
	if a.NoPerfContext {
		args = append(args, "--perf-context", "off")
	}
	return args
}

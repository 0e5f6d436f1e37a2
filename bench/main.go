// Command bench runs the benchmark workload (docs/benchmarks.md) on
// bookie-index and on Pebble v2, one engine after the other in the same
// process, and on BookKeeper's own EntryLocationIndex in a JVM
// (--engines ...,bookkeeper), printing the same rows as `bookie-index
// bench` with "engine" telling the arms apart.
//
// It lives in its own module so that the main module never depends on
// Pebble. From this directory:
//
//	go run . [bookie-index bench flags] [--engines bookie-index,pebble,bookkeeper]
//	         [--bookkeeper-options bookie-conf,file] [--bookkeeper-rocksdb 9.9.3,10.10.1]
//
// The BookKeeper arm (interop/bookkeeper's IndexBench, built with Maven on
// first use) runs one JVM per option mode and rocksdbjni version, in that
// order: the versions outside, the modes inside.
//
// Exit status: 0 success, 1 the run failed (including gets of existing keys
// that found nothing), 2 bad usage.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bookie-index/bookie-index/benchmark"
	"github.com/bookie-index/bookie-index/interop/bookkeeper"
	"github.com/cockroachdb/errors"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// engineNames are the arms this command knows; the default runs the
// first two, in this order.
var engineNames = []string{"bookie-index", "pebble", "bookkeeper"}

// bookkeeperFlags are the settings of the BookKeeper arm.
type bookkeeperFlags struct {
	options     string // bookie-conf, bookie-conf-full, file, comma separated
	rocksdb     string // rocksdbjni versions, comma separated
	optionsFile string // the OPTIONS file of the file mode
	jvm         string // the JVM's flags, space separated
	noPerf      bool
}

func (b *bookkeeperFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.options, "bookkeeper-options", bookkeeper.ModeBookieConf, "the BookKeeper arm's option modes, comma separated: bookie-conf (no OPTIONS file: BookKeeper 4.18.2's dbStorage_rocksDB_* defaults, partitioned index and filters), bookie-conf-full (the same with dbStorage_rocksDB_partitionedIndexAndFiltersEnabled=false: full filters), file (--bookkeeper-options-file as entryLocationRocksdbConf)")
	fs.StringVar(&b.rocksdb, "bookkeeper-rocksdb", bookkeeper.BookKeeperRocksDB, "the BookKeeper arm's rocksdbjni versions, comma separated: "+bookkeeper.BookKeeperRocksDB+" (BookKeeper 4.18.2's own), "+bookkeeper.OtherRocksDB)
	fs.StringVar(&b.optionsFile, "bookkeeper-options-file", bookkeeper.DefaultBenchOptionsFile(), "the BookKeeper arm's OPTIONS file in file mode (its block_cache, target_file_size_base and write_buffer_size are set per run)")
	fs.StringVar(&b.jvm, "bookkeeper-jvm", strings.Join(bookkeeper.BenchJVMFlags, " "), "the BookKeeper arm's JVM flags, space separated")
	fs.BoolVar(&b.noPerf, "bookkeeper-no-perf-context", false, "run the BookKeeper arm's reads without RocksDB's perf context (no block counters)")
}

// arms builds the BookKeeper arms: one per rocksdbjni version and option
// mode.
func (b *bookkeeperFlags) arms(cfg *benchmark.Config) ([]benchmark.Arm, error) {
	var arms []benchmark.Arm
	for _, v := range strings.Split(b.rocksdb, ",") {
		for _, mode := range strings.Split(b.options, ",") {
			a, err := bookkeeper.NewIndexBenchArm(cfg, strings.TrimSpace(mode), strings.TrimSpace(v))
			if err != nil {
				return nil, err
			}
			if a.Mode == bookkeeper.ModeFile {
				if _, err := os.Stat(b.optionsFile); err != nil {
					return nil, errors.Wrap(err, "--bookkeeper-options-file")
				}
				a.OptionsFile = b.optionsFile
			}
			a.JVMFlags = strings.Fields(b.jvm)
			a.NoPerfContext = b.noPerf
			arms = append(arms, a)
		}
	}
	return arms, nil
}

// newEngines builds the arms a comma-separated list names, in its order.
func newEngines(cfg *benchmark.Config, list string, bk *bookkeeperFlags) ([]benchmark.Arm, error) {
	var arms []benchmark.Arm
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if seen[name] {
			return nil, errors.Newf("--engines names %q twice", name)
		}
		seen[name] = true
		switch name {
		case "bookie-index":
			arms = append(arms, benchmark.NewBookieEngine(cfg))
		case "pebble":
			arms = append(arms, NewPebbleEngine(cfg))
		case "bookkeeper":
			bks, err := bk.arms(cfg)
			if err != nil {
				return nil, err
			}
			arms = append(arms, bks...)
		default:
			return nil, errors.Newf("--engines: unknown engine %q (accepted: %s)", name, strings.Join(engineNames, ", "))
		}
	}
	return arms, nil
}

// run is the command; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg benchmark.Config
	cfg.RegisterFlags(fs)
	engineList := fs.String("engines", strings.Join(engineNames[:2], ","), "engines to run, in order, comma separated: "+strings.Join(engineNames, ", ")+" (a JVM running BookKeeper's own EntryLocationIndex; needs java and mvn)")
	var bk bookkeeperFlags
	bk.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run . [flags]   (from bench/: the workload of docs/benchmarks.md on each engine in turn)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	engines, err := newEngines(&cfg, *engineList, &bk)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if err := benchmark.CheckArms(&cfg, engines); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if exe, err := os.Executable(); err == nil {
		cfg.ReaderCommand = append([]string{exe}, args...) // --disk-bound runs its readers with it
	}
	var progress io.Writer = stderr
	if cfg.JSON {
		progress = nil
	}
	if err := benchmark.RunArms(&cfg, engines, stdout, progress); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

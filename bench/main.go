// Command bench runs the benchmark workload (docs/benchmarks.md) on
// bookie-index and on Pebble v2, one engine after the other in the same
// process, printing the same rows as `bookie-index bench` with "engine"
// telling the arms apart.
//
// It lives in its own module so that the main module never depends on
// Pebble. From this directory:
//
//	go run . [bookie-index bench flags] [--engines bookie-index,pebble]
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
	"github.com/cockroachdb/errors"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// engineNames are the arms this command knows, in their default order.
var engineNames = []string{"bookie-index", "pebble"}

// newEngines builds the engines a comma-separated list names, in its order.
func newEngines(cfg *benchmark.Config, list string) ([]benchmark.Engine, error) {
	var engines []benchmark.Engine
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if seen[name] {
			return nil, errors.Newf("--engines names %q twice", name)
		}
		seen[name] = true
		switch name {
		case "bookie-index":
			engines = append(engines, benchmark.NewBookieEngine(cfg))
		case "pebble":
			engines = append(engines, NewPebbleEngine(cfg))
		default:
			return nil, errors.Newf("--engines: unknown engine %q (accepted: %s)", name, strings.Join(engineNames, ", "))
		}
	}
	return engines, nil
}

// run is the command; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg benchmark.Config
	cfg.RegisterFlags(fs)
	engineList := fs.String("engines", strings.Join(engineNames, ","), "engines to run, in order, comma separated: bookie-index, pebble")
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
	engines, err := newEngines(&cfg, *engineList)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if err := benchmark.CheckEngines(&cfg, engines); err != nil {
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
	if err := benchmark.Run(&cfg, engines, stdout, progress); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

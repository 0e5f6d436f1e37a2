package main

import (
	"flag"
	"io"
	"os"
	"time"

	"github.com/bookie-index/bookie-index/benchmark"
)

// benchProgressEvery is how often bench prints a status line when stderr
// is not a terminal.
const benchProgressEvery = 5 * time.Second

// runBench runs the workload of docs/benchmarks.md on bookie-index.
func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var cfg benchmark.Config
	cfg.RegisterFlags(fs)
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return withHelpHeader(err, "usage: bookie-index bench [flags]\n\n"+
			"Runs the entry-location workload of docs/benchmarks.md on bookie-index: the phases\n"+
			"load, get, floor, miss, delete, mixed (and add-entry, read-entry on the storage).\n"+
			"Rows go to stdout; progress to stderr, redrawn in place on a terminal and as a\n"+
			"plain line every few seconds otherwise.")
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	if err := cfg.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	if exe, err := os.Executable(); err == nil {
		cfg.ReaderCommand = append([]string{exe, "bench"}, args...) // --disk-bound runs its readers with it
	}
	progress := progressOutput(stderr, benchProgressEvery)
	if cfg.JSON {
		progress = nil
	}
	return benchmark.Run(&cfg, []benchmark.Engine{benchmark.NewBookieEngine(&cfg)}, stdout, progress)
}

package main

import (
	"flag"
	"io"

	"github.com/bookie-index/bookie-index/internal/benchmark"
)

// runBench runs the benchmark workload (docs/benchmarks.md) on bookie-index.
func runBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var cfg benchmark.Config
	cfg.RegisterFlags(fs)
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	if err := cfg.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	var progress io.Writer = stderr
	if cfg.JSON {
		progress = nil
	}
	return benchmark.Run(&cfg, []benchmark.Engine{benchmark.NewBookieEngine(&cfg)}, stdout, progress)
}

// Command benchplot draws the scale curve of the bench: ops/s against the
// block cache size and against the key count, for the get and floor phases
// of every engine, as one standalone SVG.
//
//	go run ./cmd/benchplot -o docs/scale.svg 5m.jsonl 50m.jsonl 500m.jsonl
//	go run ./cmd/benchplot -o docs/scale.svg 5M=5m-existing.jsonl 50m.jsonl
//
// Each argument is the output of `bookie-index bench --json` or of
// `cd bench && go run . --json` (one JSON row per line). An op row carries
// no key count: its key count is the keys of the last load row of the same
// engine and layout before it in the same file. A run with --use-existing
// has no load row; name its key count in front of the path, KEYS=PATH, with
// KEYS a count such as 5000000, 5M (or 5m), 500M or 1G (a load row in such a file
// must agree with it). Rows of phases other than get and floor are skipped.
//
// The SVG is a 2×2 grid: a row per phase (get, floor), and a row more for
// each phase the inputs have disk-bound rows of (bench --disk-bound,
// "get (disk-bound)" and "floor (disk-bound)"); on the left ops/s
// against the cache size (log scale), a line per engine and key count; on
// the right ops/s against the key count (log scale), a line per engine and
// cache size. Colour tells the engine, the dash pattern the other series
// dimension. Rows that share engine, variant, layout, phase, key count and
// cache size (repeated rounds) are one point, their median ops/s; the note
// under the title says so. A variant is an arm of an engine with its own
// engine_version or options (the BookKeeper arm's rocksdbjni versions and
// option modes): each is a series of its own. When the inputs hold more
// than one layout, the layout is part of the engine's name, and when they
// hold more than one variant of an engine, the words of the variant that
// not all of them share are (the mode when one rocksdbjni ran). The output
// depends only on the rows (sorted series, fixed float formatting), so
// testdata/*.svg pins it.
//
// Exit codes: 0 success, 1 an input could not be read or plotted, 2 bad
// usage. -h prints the usage on stdout.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/errors"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: benchplot [-o FILE] [KEYS=]PATH...
  Reads bench --json output (one row per line) and writes an SVG of ops/s
  against cache size and key count for the get and floor phases.
  KEYS=PATH gives the key count of a file without a load row (5M, 500M, 1G).
  -o FILE   write the SVG to FILE (default: stdout)
`

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchplot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the SVG to `FILE` (default stdout)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "benchplot: %v\n%s", err, usage)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "benchplot: no input files\n%s", usage)
		return 2
	}
	var samples []sample
	for _, arg := range fs.Args() {
		s, err := readArg(arg)
		if err != nil {
			fmt.Fprintf(stderr, "benchplot: %v\n", err)
			return 1
		}
		samples = append(samples, s...)
	}
	var buf bytes.Buffer
	if err := render(&buf, medians(samples)); err != nil {
		fmt.Fprintf(stderr, "benchplot: %v\n", err)
		return 1
	}
	if *out == "" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			fmt.Fprintf(stderr, "benchplot: %v\n", err)
			return 1
		}
		return 0
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "benchplot: %v\n", err)
		return 1
	}
	return 0
}

// Package benchmark runs the entry-location workload (docs/benchmarks.md,
// "The contract") against an Engine: flush-like sorted batches (load),
// random point lookups (get), floor lookups per ledger (floor), and the
// optional miss, delete and mixed phases, one row per block cache size,
// reopening the store for each. It prints the contract's table columns for
// people and one JSON object per row with --json.
//
// The package knows nothing of any engine: `bookie-index bench` runs it on
// bookie-index and the separate module in bench/ runs it on Pebble too, in
// the same process, one arm after the other.
package benchmark

package entrylocation

import (
	"time"

	"log/slog"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// DefaultMaxBatchOps is BookKeeper's default
// maxOperationNumbersInSingleRocksdbWriteBatch.
const DefaultMaxBatchOps = 100_000

// Options configure an Index. The zero value (and a nil *Options) means
// the defaults.
type Options struct {
	// Engine configures the lsm engine; nil means lsm.DefaultOptions().
	// Open copies it and leaves the caller's struct alone. The engine's
	// defaults are the ones measured for this workload: partitioned index
	// and filters behind pinned top-level blocks, a 64-shard block cache,
	// and each block's common key prefix stored once.
	Engine *lsm.Options

	// MaxBatchOps bounds the operations a batch holds: reaching it commits
	// the batch and starts an empty one, as upstream's write batches do.
	// UpdateLocations and RemoveOffsetFromDeletedLedgers commit in chunks
	// of this size too. Default DefaultMaxBatchOps; negative is an error.
	MaxBatchOps int

	// EnableStatistics turns on latency measurement of lookups (the
	// lookup-entry-location and get-last-entry-in-ledger latencies) and
	// the engine's timers. Counts are always kept; timing costs clock
	// reads and is skipped entirely when false.
	EnableStatistics bool
	// LatencyRollover is the window the lookup latencies' quantiles cover
	// (prometheusStatsLatencyRolloverSeconds). Zero: 60 seconds
	// (opstats.DefaultRollover).
	LatencyRollover time.Duration

	// Logger receives the index's log lines (purges, compactions) and, if
	// Engine.Logger is nil (as lsm.DefaultOptions and conf leave it), the
	// engine's: one logger for the index and its engine. Default:
	// discarded.
	Logger *slog.Logger
}

// DefaultOptions returns the defaults, with the engine's options filled in.
func DefaultOptions() *Options {
	return &Options{Engine: lsm.DefaultOptions(), MaxBatchOps: DefaultMaxBatchOps}
}

// resolve returns a copy of o (nil: the defaults) with every default
// filled in, and the engine options Open passes to lsm.Open.
func (o *Options) resolve() (Options, *lsm.Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxBatchOps < 0 {
		return r, nil, errors.Wrapf(ErrInvalidArgument, "entrylocation: MaxBatchOps %d is negative (0 means the default %d)", r.MaxBatchOps, DefaultMaxBatchOps)
	}
	if r.MaxBatchOps == 0 {
		r.MaxBatchOps = DefaultMaxBatchOps
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	var engine lsm.Options
	if r.Engine != nil {
		engine = *r.Engine
	} else {
		engine = *lsm.DefaultOptions()
	}
	if engine.Logger == nil {
		engine.Logger = r.Logger
	}
	if r.EnableStatistics {
		engine.EnableStatistics = true
	}
	r.Engine = &engine
	return r, &engine, nil
}

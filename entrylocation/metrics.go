package entrylocation

import (
	"math"

	"github.com/bookie-index/bookie-index/internal/opstats"
	"github.com/bookie-index/bookie-index/lsm"
)

// Names of the index's statistics, as BookKeeper's EntryLocationIndexStats
// registers them. A Prometheus exporter names them "bookie_" + the name
// with '-' turned into '_' (bookie_entries_count, a gauge;
// bookie_lookup_entry_location and bookie_get_last_entry_in_ledger,
// summaries labelled success="true" or "false", in milliseconds).
const (
	StatEntriesCount         = "entries-count"
	StatLookupEntryLocation  = "lookup-entry-location"
	StatGetLastEntryInLedger = "get-last-entry-in-ledger"
)

// OpStats is one operation's statistics (counts and latency distributions
// of successes and failures), and LatencyStats one distribution: the types
// live in an internal package shared with bookie and httpapi, and these
// aliases let code outside the module name them.
type (
	OpStats      = opstats.Stats
	LatencyStats = opstats.LatencyStats
)

// Metrics is a snapshot of an Index's statistics.
type Metrics struct {
	// EntriesCount is the engine's estimate of the keys it holds (entries
	// in tables and memtables before overwritten and range-deleted ones are
	// compacted away), like upstream's rocksdb.estimate-num-keys. It is -1
	// after Close, as upstream's gauge.
	EntriesCount int64
	// LookupEntryLocation is GetLocation's: a miss (location 0) and an
	// error count as failures.
	LookupEntryLocation opstats.Stats
	// GetLastEntryInLedger is GetLastEntryInLedger's: a ledger with no
	// entry or marked deleted, and an error, count as failures.
	GetLastEntryInLedger opstats.Stats
	// Engine is the lsm engine's metrics; zero after Close.
	Engine lsm.Metrics
}

// Metrics returns a snapshot of the index's statistics.
func (ix *Index) Metrics() Metrics {
	m := Metrics{
		EntriesCount:         -1,
		LookupEntryLocation:  ix.lookupStats.Snapshot(),
		GetLastEntryInLedger: ix.lastEntryStats.Snapshot(),
	}
	if ix.enter("Metrics") != nil {
		return m
	}
	defer ix.exit()
	m.Engine = ix.db.Metrics()
	m.EntriesCount = int64(min(m.Engine.EstimatedKeys, math.MaxInt64))
	return m
}

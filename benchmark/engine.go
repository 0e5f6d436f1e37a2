package benchmark

import "iter"

// Entry is one entry location.
type Entry struct {
	Ledger, EntryID, Location int64
}

// OpStats are an engine's per-operation counters, cumulative per Reader.
// Engines that cannot split block reads by kind report them as data reads.
// FilterSkips counts lookups that went to a data block without reading a
// filter block that was not in memory (bookie-index only).
type OpStats struct {
	FilterReads, IndexReads, DataReads, BytesRead, CacheHits, FilterSkips int64
}

// Tiers are bytes per table tier (uncompressed).
type Tiers struct {
	Data      int64 `json:"data"`
	Index     int64 `json:"index"`
	TopIndex  int64 `json:"top_index"`
	Filter    int64 `json:"filter"`
	TopFilter int64 `json:"top_filter"`
}

// Storage describes what an engine has on disk.
type Storage struct {
	TablesPerLevel      []int
	TableBytes          int64
	BytesByTier         Tiers
	MaxFilterBlockBytes int64
}

// Engine is a store under test.
type Engine interface {
	// Name is the engine's name in the output ("bookie-index", "pebble").
	Name() string
	// Open opens (creating if needed) the store in dir with a block cache
	// of cacheBytes.
	Open(dir string, cacheBytes int64) error
	// WriteBatch writes entries, sorted by (ledger, entry), as one synced
	// batch.
	WriteBatch(entries []Entry) error
	// Settle waits until background compactions are done.
	Settle() error
	// Storage reports tables and bytes.
	Storage() (Storage, error)
	// NewReader returns a reader for one goroutine.
	NewReader() Reader
	// DeleteLedgers deletes ledgers and purges their locations as
	// BookKeeper's GC does.
	DeleteLedgers(ledgers []int64) error
	// Close closes the store.
	Close() error
}

// IdleWaiter is an Engine with work it does once writes stop. The load
// phase waits for it after the settle, as a reader of an index whose
// writes stopped a while ago sees it.
type IdleWaiter interface {
	// WaitIdle waits until that work is done.
	WaitIdle() error
}

// MemoryReporter is an Engine that can say what its block cache holds from
// the system outside the Go heap (the read rows' cache_memory_bytes).
type MemoryReporter interface {
	BlockCacheMemory() int64
}

// LoadStatser is an Engine that counts what its writes cost: the load
// row's extra carries these counters (cumulative since Open) after the
// settle, and the growth of compaction_bytes_written during the idle wait.
type LoadStatser interface {
	// LoadStats returns flushes, flush_bytes, compactions,
	// compaction_bytes_written and write_stops, as far as the engine
	// counts them.
	LoadStats() map[string]float64
}

// Ingester is an Engine that can load the workload by ingesting tables
// built outside the store (--load-via ingest), as an index rebuild does.
type Ingester interface {
	// IngestSorted writes entries, which come in key order, into tables
	// and ingests them into the empty store; it returns the number of
	// tables.
	IngestSorted(entries iter.Seq[Entry]) (tables int, err error)
}

// Reader does lookups for one goroutine and counts their work.
type Reader interface {
	// Get looks up one entry's location.
	Get(ledger, entryID int64) (found bool, err error)
	// Floor finds the last entry of a ledger.
	Floor(ledger int64) (found bool, err error)
	// Stats returns the counters so far.
	Stats() OpStats
}

package benchmark

import (
	"context"
	"os"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// BookieEngine runs the benchmark on an entrylocation.Index.
type BookieEngine struct {
	cfg  *Config
	ix   *entrylocation.Index
	dir  string       // the index's directory (Open)
	opts *lsm.Options // the engine options it was opened with
}

// NewBookieEngine returns the bookie-index arm of the
func NewBookieEngine(cfg *Config) *BookieEngine { return &BookieEngine{cfg: cfg} }

// Name implements Engine.
func (e *BookieEngine) Name() string { return "bookie-index" }

// Options returns the engine options the benchmark's flags ask for.
func (e *BookieEngine) Options(cacheBytes int64) (*lsm.Options, error) {
	o := lsm.DefaultOptions()
	var err error
	if o.TableLayout, err = lsm.ParseTableLayout(e.cfg.Layout); err != nil {
		return nil, err
	}
	if o.Compression, err = lsm.ParseCompression(e.cfg.Compression); err != nil {
		return nil, err
	}
	o.DisableCommonPrefix = !e.cfg.CommonPrefix
	o.AlwaysLoadFilters = e.cfg.AlwaysLoadFilters
	o.BlockSize = e.cfg.BlockSize
	o.BloomBitsPerKey = e.cfg.BloomBits
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = -1
	}
	o.BlockCacheSize = cacheBytes
	o.BlockCacheNumShardBits = 6 // 64 shards at every size (the rows' shard_bytes), as upstream's default caches
	o.TargetFileSizeBase = e.cfg.EffectiveTargetFileSize()
	o.WriteBufferSize = e.cfg.EffectiveWriteBuffer()
	if e.cfg.IdleCompactionDelay != 0 {
		o.IdleCompactionDelay = e.cfg.IdleCompactionDelay
	}
	if e.cfg.MaxSubcompactions != 0 {
		o.MaxSubcompactions = e.cfg.MaxSubcompactions
	}
	return o, o.Validate()
}

// Open implements Engine.
func (e *BookieEngine) Open(dir string, cacheBytes int64) error {
	o, err := e.Options(cacheBytes)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errors.Wrap(err, "bench")
	}
	e.ix, err = entrylocation.Open(dir, &entrylocation.Options{Engine: o})
	e.dir, e.opts = dir, o
	return err
}

// WriteBatch implements Engine.
func (e *BookieEngine) WriteBatch(entries []Entry) error {
	b := e.ix.NewBatch()
	defer b.Close()
	for _, en := range entries {
		if err := b.AddLocation(en.Ledger, en.EntryID, en.Location); err != nil {
			return err
		}
	}
	return b.Flush()
}

// Settle implements Engine: it flushes the memtables and waits
// for the compactions that follow.
func (e *BookieEngine) Settle() error {
	if err := e.ix.DB().Flush(); err != nil {
		return err
	}
	return e.ix.DB().WaitForCompactions(context.Background())
}

// WaitIdle implements IdleWaiter: it waits for the idle compaction
// (lsm.Options.IdleCompactionDelay after the last write) to empty L0.
func (e *BookieEngine) WaitIdle() error {
	delay := e.ix.DB().IdleCompactionDelay()
	if delay <= 0 {
		return nil
	}
	deadline := time.Now().Add(delay + 10*time.Minute)
	for e.ix.Metrics().Engine.Levels[0].Tables > 0 {
		if time.Now().After(deadline) {
			return errors.Newf("bench: L0 still holds tables %s after the last write", delay+10*time.Minute)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return e.ix.DB().WaitForCompactions(context.Background())
}

// LoadStats implements LoadStatser.
func (e *BookieEngine) LoadStats() map[string]float64 {
	m := e.ix.Metrics().Engine
	return map[string]float64{
		"flushes": float64(m.ImmutableFlushes), "flush_bytes": float64(m.FlushBytes),
		"compactions": float64(m.Compactions), "compaction_bytes_written": float64(m.CompactionBytesOut),
		"trivial_moves": float64(m.TrivialMoves), "write_stops": float64(m.WriteStops), "write_slowdowns": float64(m.WriteSlowdowns),
		"subcompactions": float64(m.Subcompactions), "wal_syncs": float64(m.WALSyncs), "wal_sync_seconds": float64(m.WALSyncNanos) / 1e9,
	}
}

// Storage implements Engine.
func (e *BookieEngine) Storage() (Storage, error) {
	tables, err := e.ix.DB().Tables()
	if err != nil {
		return Storage{}, err
	}
	var s Storage
	m := e.ix.Metrics().Engine
	for _, l := range m.Levels {
		s.TablesPerLevel = append(s.TablesPerLevel, l.Tables)
		s.TableBytes += int64(l.Bytes)
	}
	for _, t := range tables {
		if p := t.Properties; p != nil {
			s.BytesByTier.Data += int64(p.DataBytes)
			s.BytesByTier.Index += int64(p.IndexBytes)
			s.BytesByTier.TopIndex += int64(p.TopIndexBytes)
			s.BytesByTier.Filter += int64(p.FilterBytes)
			s.BytesByTier.TopFilter += int64(p.TopFilterBytes)
			s.MaxFilterBlockBytes = max(s.MaxFilterBlockBytes, int64(p.MaxFilterBlockSize))
		}
	}
	return s, nil
}

// NewReader implements Engine.
func (e *BookieEngine) NewReader() Reader { return &bookieReader{ix: e.ix} }

// DeleteLedgers implements Engine.
func (e *BookieEngine) DeleteLedgers(ledgers []int64) error {
	for _, l := range ledgers {
		if err := e.ix.Delete(l); err != nil {
			return err
		}
	}
	if err := e.ix.RemoveOffsetFromDeletedLedgers(); err != nil {
		return err
	}
	// The purge's tombstones go to a table as the memtable fills; flush
	// them now so that the space comes back within the phase.
	return e.ix.DB().Flush()
}

// BlockCacheMemory implements MemoryReporter.
func (e *BookieEngine) BlockCacheMemory() int64 { return e.ix.Metrics().Engine.BlockCache.MappedBytes }

// Close implements Engine.
func (e *BookieEngine) Close() error {
	if e.ix == nil {
		return nil
	}
	err := e.ix.Close()
	e.ix = nil
	return err
}

type bookieReader struct {
	ix    *entrylocation.Index
	stats lsm.ReadStats
}

func (r *bookieReader) Get(ledger, entryID int64) (bool, error) {
	loc, err := r.ix.GetLocationStats(ledger, entryID, &r.stats)
	return loc != 0, err
}

func (r *bookieReader) Floor(ledger int64) (bool, error) {
	_, err := r.ix.GetLastEntryInLedgerStats(ledger, &r.stats)
	if errors.Is(err, entrylocation.ErrNoEntry) {
		return false, nil
	}
	return err == nil, err
}

func (r *bookieReader) Stats() OpStats {
	s := r.stats
	return OpStats{FilterReads: s.FilterReads, IndexReads: s.IndexReads, DataReads: s.DataReads, BytesRead: s.BytesRead, CacheHits: s.CacheHits, FilterSkips: s.FilterSkips}
}

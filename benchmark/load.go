package benchmark

import (
	"iter"
	"runtime"
	"time"

	"github.com/cockroachdb/errors"
)

// locationsPerLog is how many locations a locationSequence hands out per
// log: the offsets 1024 + j·1028 whose entry ends within the GiB.
const locationsPerLog = (1<<30-2052)/1028 + 1

// loadLocation is the location of the i-th entry the load writes: what
// the i-th call of next returns on a locationSequence{log: 1, offset:
// 1024}, computed directly so that the entries can also be produced in
// key order (--load-via ingest).
func loadLocation(i int64) int64 {
	log, j := 1+i/locationsPerLog, i%locationsPerLog
	return log<<32 | (1024 + j*1028 + 4)
}

// loadMemProfileRate is runtime.MemProfileRate while a profiled load
// runs: one sample per 64 KiB allocated, finer than the default 512 KiB.
// The allocation profile counts from the process's start, so it holds
// the load and the little allocated before it.
const loadMemProfileRate = 64 << 10

// loadIndex is the position of (ledger, entry) in the load's write order:
// batch k = entry/F holds entries [k·F, (k+1)·F) of every ledger in turn.
func (c *Config) loadIndex(ledger, entry int64) int64 {
	lo := entry / c.FlushEntries * c.FlushEntries
	width := min(c.FlushEntries, c.Entries-lo)
	return lo*c.Ledgers + ledger*width + (entry - lo)
}

// loadEntry is the entry the load writes for (ledger, entry).
func (c *Config) loadEntry(ledger, entry int64) Entry {
	return Entry{Ledger: ledger, EntryID: entry, Location: loadLocation(c.loadIndex(ledger, entry))}
}

// sortedLoad yields every entry of the load in key order (ledger, then
// entry), with the locations the batched writes give them.
func (c *Config) sortedLoad() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for l := range c.Ledgers {
			for e := range c.Entries {
				if !yield(c.loadEntry(l, e)) {
					return
				}
			}
		}
	}
}

// load fills the index with the workload, by --load-via: written as
// batches (writeLoad) or ingested as tables (ingestLoad); then it waits
// for compactions to settle and reports the load row.
func (r *runner) load() error {
	cfg := r.cfg
	rss := startRSSSampler()
	if r.cfg.CPUProfile != "" {
		// Finer allocation samples for the load's profile, not for the
		// read phases after it.
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = loadMemProfileRate
	}
	p0 := sampleProcess()
	start := time.Now()
	err := r.profiled("load-write", func() error {
		if cfg.EffectiveLoadVia() == LoadViaIngest {
			return r.ingestLoad()
		}
		return r.writeLoad()
	})
	if err != nil {
		rss.finish()
		return err
	}
	writeTime := time.Since(start)
	p1 := sampleProcess()
	r.logf("load: waiting for compactions to settle")
	settleStart := time.Now()
	if err := r.profiled("load-settle", r.e.Settle); err != nil {
		rss.finish()
		return err
	}
	settle := time.Since(settleStart)
	p2 := sampleProcess()
	var extra map[string]float64
	if ls, ok := r.e.(LoadStatser); ok {
		extra = ls.LoadStats()
	}
	var idle time.Duration
	if w, ok := r.e.(IdleWaiter); ok {
		r.logf("load: waiting for the work done once writes stop")
		idleStart := time.Now()
		if err := r.profiled("load-idle", w.WaitIdle); err != nil {
			rss.finish()
			return err
		}
		idle = time.Since(idleStart)
	}
	p3 := sampleProcess()
	if ls, ok := r.e.(LoadStatser); ok {
		extra["idle_compaction_bytes_written"] = ls.LoadStats()["compaction_bytes_written"] - extra["compaction_bytes_written"]
	}
	if err := r.writeAllocProfile("load"); err != nil {
		rss.finish()
		return err
	}
	r.endProgress()
	st, err := r.e.Storage()
	if err != nil {
		rss.finish()
		return err
	}
	keys := cfg.Keys()
	r.rep.emit(LoadRow{
		Engine: r.e.Name(), Phase: "load", LoadVia: cfg.EffectiveLoadVia(), Layout: cfg.Layout, Keys: keys,
		WriteKeysPerSec: float64(keys) / writeTime.Seconds(), TotalKeysPerSec: float64(keys) / (writeTime + settle).Seconds(),
		WriteSeconds: writeTime.Seconds(), SettleSeconds: settle.Seconds(), IdleSeconds: idle.Seconds(),
		WriteCPUSeconds: (p1.cpu - p0.cpu).Seconds(), SettleCPUSeconds: (p2.cpu - p1.cpu).Seconds(), IdleCPUSeconds: (p3.cpu - p2.cpu).Seconds(),
		TableBytes: st.TableBytes, BytesPerKey: float64(st.TableBytes) / float64(keys),
		TablesPerLevel: st.TablesPerLevel, BytesByTier: st.BytesByTier, MaxFilterBlockBytes: st.MaxFilterBlockBytes,
		PeakRSSBytes: rss.finish(), Extra: extra,
	})
	return nil
}

// writeLoad writes the workload: batch k holds entries [k·F, (k+1)·F) of
// every ledger, in key order, each batch synced.
func (r *runner) writeLoad() error {
	cfg := r.cfg
	batches := (cfg.Entries + cfg.FlushEntries - 1) / cfg.FlushEntries
	entries := make([]Entry, 0, cfg.Ledgers*cfg.FlushEntries)
	start := time.Now()
	for k := int64(0); k < batches; k++ {
		entries = entries[:0]
		hi := min((k+1)*cfg.FlushEntries, cfg.Entries)
		for l := int64(0); l < cfg.Ledgers; l++ {
			for e := k * cfg.FlushEntries; e < hi; e++ {
				entries = append(entries, cfg.loadEntry(l, e))
			}
		}
		if err := r.e.WriteBatch(entries); err != nil {
			return errors.Wrapf(err, "load: batch %d", k)
		}
		written := hi * cfg.Ledgers
		r.logf("load: batch %d/%d, %.0f keys/s", k+1, batches, float64(written)/time.Since(start).Seconds())
	}
	return nil
}

// ingestLoad loads the same entries as writeLoad by ingesting tables built
// from them in key order (Ingester; Run checked that the engine is one).
func (r *runner) ingestLoad() error {
	cfg := r.cfg
	ing := r.e.(Ingester)
	start := time.Now()
	var n int64
	entries := func(yield func(Entry) bool) {
		for en := range cfg.sortedLoad() {
			if !yield(en) {
				return
			}
			if n++; n%(1<<20) == 0 {
				r.logf("load: %d/%d keys into tables, %.0f keys/s", n, cfg.Keys(), float64(n)/time.Since(start).Seconds())
			}
		}
	}
	tables, err := ing.IngestSorted(entries)
	if err != nil {
		return errors.Wrap(err, "load: ingest")
	}
	r.logf("load: ingested %d tables", tables)
	return nil
}

package benchmark

import (
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/cockroachdb/errors"
)

// entryPayloadSize is the payload of the storage phases' entries.
const entryPayloadSize = 1024

// storagePhases runs the bookie storage phases: add-entry (threads adding
// 1 KiB entries to their own ledgers for the phase's duration, then a
// checkpoint that makes them durable, all timed) and read-entry (random
// reads of those entries after a reopen, so the read cache starts cold).
func (r *runner) storagePhases(b *BookieEngine) error {
	cfg := r.cfg
	dir := filepath.Join(r.dir, "storage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errors.Wrap(err, "storage phases")
	}
	open := func() (*bookie.Storage, error) {
		engine, err := b.Options(cfg.CacheSizes[0])
		if err != nil {
			return nil, err
		}
		return bookie.Open(&bookie.Options{
			LedgerDirs:    []string{dir},
			FlushInterval: time.Hour, // the phase checkpoints when it wants
			GCWaitTime:    time.Hour,
			Index:         &entrylocation.Options{Engine: engine},
		})
	}
	var disk diskLimits
	if cfg.DiskProbeBytes > 0 {
		r.logf("add-entry: measuring the disk (%s file)", FormatSize(cfg.DiskProbeBytes))
		var err error
		if disk, err = probeDisk(dir, cfg.DiskProbeBytes); err != nil {
			return err
		}
	}
	s, err := open()
	if err != nil {
		return errors.Wrap(err, "add-entry: opening the storage")
	}
	// add-entry
	written := make([]atomic.Int64, cfg.Threads) // entries per thread; thread i writes ledgers i, i+T, ...
	ledgersPerThread := max(cfg.Ledgers/int64(cfg.Threads), 1)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	r.logf("add-entry: writing 1 KiB entries (%s)", cfg.Duration)
	rss := startRSSSampler()
	p0 := sampleProcess()
	start := time.Now()
	for t := 0; t < cfg.Threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			payload := make([]byte, entryPayloadSize)
			for n := int64(0); !stop.Load(); n++ {
				ledger := int64(t) + int64(cfg.Threads)*(n%ledgersPerThread)
				entry := n / ledgersPerThread
				if err := s.AddEntry(ledger, entry, payload); err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				written[t].Add(1)
			}
		}(t)
	}
	time.Sleep(cfg.Duration)
	stop.Store(true)
	wg.Wait()
	if firstErr == nil {
		firstErr = s.Checkpoint()
	}
	elapsed := time.Since(start)
	p1 := sampleProcess()
	peak := rss.finish()
	if firstErr != nil {
		_ = s.Close()
		return errors.Wrap(firstErr, "add-entry")
	}
	var total int64
	for i := range written {
		total += written[i].Load()
	}
	n := float64(max(total, 1))
	r.endProgress()
	r.rep.emit(OpRow{Engine: r.e.Name(), Phase: "add-entry", Layout: cfg.Layout, CacheBytes: cfg.CacheSizes[0],
		ShardBytes: cfg.CacheSizes[0] / 64, Threads: cfg.Threads, Ops: total, OpsPerSec: float64(total) / elapsed.Seconds(),
		FoundFraction: 1, CPUMicrosPerOp: float64((p1.cpu - p0.cpu).Microseconds()) / n, PeakRSSBytes: peak,
		Extra: disk.writeExtra(float64(total) * entryPayloadSize / elapsed.Seconds() / 1e6)})
	if err := s.Close(); err != nil {
		return errors.Wrap(err, "add-entry: closing the storage")
	}

	// read-entry, cold read cache
	if s, err = open(); err != nil {
		return errors.Wrap(err, "read-entry: reopening the storage")
	}
	defer s.Close() // read-only phase: nothing to lose on close
	r.logf("read-entry: random reads (%s)", cfg.Duration)
	var ops, found atomic.Int64
	stop.Store(false)
	rss = startRSSSampler()
	p0 = sampleProcess()
	start = time.Now()
	for t := 0; t < cfg.Threads; t++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for !stop.Load() {
				w := rng.Intn(cfg.Threads)
				cnt := written[w].Load()
				if cnt == 0 {
					continue
				}
				i := rng.Int63n(cnt)
				ledger := int64(w) + int64(cfg.Threads)*(i%ledgersPerThread)
				entry := i / ledgersPerThread
				p, err := s.GetEntry(ledger, entry)
				ops.Add(1)
				if err == nil && len(p) == entryPayloadSize {
					found.Add(1)
				}
			}
		}(int64(t))
	}
	time.Sleep(cfg.Duration)
	stop.Store(true)
	wg.Wait()
	elapsed = time.Since(start)
	p1 = sampleProcess()
	peak = rss.finish()
	r.endProgress()
	n = float64(max(ops.Load(), 1))
	r.rep.emit(OpRow{Engine: r.e.Name(), Phase: "read-entry", Layout: cfg.Layout, CacheBytes: cfg.CacheSizes[0],
		ShardBytes: cfg.CacheSizes[0] / 64, Threads: cfg.Threads, Ops: ops.Load(), OpsPerSec: float64(ops.Load()) / elapsed.Seconds(),
		FoundFraction: float64(found.Load()) / n, CPUMicrosPerOp: float64((p1.cpu - p0.cpu).Microseconds()) / n, PeakRSSBytes: peak,
		Extra: disk.readExtra(float64(found.Load()) * entryPayloadSize / elapsed.Seconds() / 1e6)})
	if found.Load() != ops.Load() {
		return errors.Wrapf(ErrNotAllFound, "read-entry found %d of %d entries", found.Load(), ops.Load())
	}
	return nil
}

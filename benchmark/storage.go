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

// roundRobin is the ledgers of threads writers with perThread ledgers each:
// writer t's n-th entry goes to ledger t + threads*(n mod perThread), as
// entry n / perThread, so writer t writes ledgers t, t+threads, ... in turn.
func roundRobin(threads, perThread int64) func(t, n int64) (ledger, entry int64) {
	return func(t, n int64) (int64, int64) { return t + threads*(n%perThread), n / perThread }
}

// writeEntriesFor has threads writers add 1 KiB entries to s, writer t its
// n-th as ledgerOf(t, n), until d has passed or one fails, then
// checkpoints them. It returns how many entries each writer added and the
// first error.
func writeEntriesFor(s *bookie.Storage, threads int, d time.Duration, ledgerOf func(t, n int64) (ledger, entry int64)) ([]atomic.Int64, error) {
	written := make([]atomic.Int64, threads)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for t := range int64(threads) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := make([]byte, entryPayloadSize)
			for n := int64(0); !stop.Load(); n++ {
				l, e := ledgerOf(t, n)
				if err := s.AddEntry(l, e, payload); err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				written[t].Add(1)
			}
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	if firstErr == nil {
		firstErr = s.Checkpoint()
	}
	return written, firstErr
}

// entryReaders read random entries of those writeEntriesFor wrote, one
// reader per writer, until halted, counting the reads and the entries
// found whole.
type entryReaders struct {
	stop       atomic.Bool
	wg         sync.WaitGroup
	ops, found atomic.Int64
}

// startEntryReaders starts the readers of the entries written (per writer)
// to ledgerOf's ledgers; skip, if not nil, names ledgers not to read (they
// are deleted).
func startEntryReaders(s *bookie.Storage, written []atomic.Int64, ledgerOf func(t, n int64) (ledger, entry int64), skip func(ledger int64) bool) *entryReaders {
	r := &entryReaders{}
	for t := range int64(len(written)) {
		r.wg.Add(1)
		go func(seed int64) {
			defer r.wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for !r.stop.Load() {
				w := rng.Intn(len(written))
				cnt := written[w].Load()
				if cnt == 0 {
					continue
				}
				l, e := ledgerOf(int64(w), rng.Int63n(cnt))
				if skip != nil && skip(l) {
					continue
				}
				p, err := s.GetEntry(l, e)
				r.ops.Add(1)
				if err == nil && len(p) == entryPayloadSize {
					r.found.Add(1)
				}
			}
		}(t)
	}
	return r
}

// halt stops the readers and waits for them.
func (r *entryReaders) halt() {
	r.stop.Store(true)
	r.wg.Wait()
}

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
	ledgersPerThread := max(cfg.Ledgers/int64(cfg.Threads), 1)
	ledgerOf := roundRobin(int64(cfg.Threads), ledgersPerThread)
	r.logf("add-entry: writing 1 KiB entries (%s)", cfg.Duration)
	rss := startRSSSampler()
	p0 := sampleProcess()
	start := time.Now()
	written, firstErr := writeEntriesFor(s, cfg.Threads, cfg.Duration, ledgerOf)
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
	rss = startRSSSampler()
	p0 = sampleProcess()
	start = time.Now()
	readers := startEntryReaders(s, written, ledgerOf, nil)
	time.Sleep(cfg.Duration)
	readers.halt()
	ops, found := &readers.ops, &readers.found
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

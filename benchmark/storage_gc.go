package benchmark

import (
	"os"
	"path/filepath"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// defaultGCLogSize is the entry-log size of the gc phase: small enough
// that a short run writes many logs, each holding entries of every ledger.
const defaultGCLogSize = 16 << 20

// gcPhase is the storage's garbage-collection phase: threads write 1 KiB
// entries round-robin over the ledgers for the phase's duration (so every
// entry log holds entries of many ledgers) and checkpoint; a fraction of
// the ledgers (--delete-fraction, spread over the id space) is deleted;
// then one forced, unthrottled GC cycle runs while the threads read
// random live entries. The row reports the entry logs' bytes before and
// after, the cycle's time and MB/s reclaimed, and the reads per second
// during it; every live entry read must be found.
func (r *runner) gcPhase(b *BookieEngine) error {
	cfg := r.cfg
	dir := filepath.Join(r.dir, "storage-gc")
	if err := os.RemoveAll(dir); err != nil {
		return errors.Wrap(err, "gc")
	}
	engine, err := b.Options(cfg.CacheSizes[0])
	if err != nil {
		return err
	}
	logSize := cfg.GCLogSize
	if logSize <= 0 {
		logSize = defaultGCLogSize
	}
	s, err := bookie.Open(&bookie.Options{
		LedgerDirs: []string{dir}, FlushInterval: time.Hour, GCWaitTime: time.Hour, WriteCacheSize: r.cfg.WriteCacheBytes,
		LogSizeLimit: logSize, Index: &entrylocation.Options{Engine: engine},
		GC: bookie.GCOptions{CompactionRateByEntries: -1},
	})
	if err != nil {
		return errors.Wrap(err, "gc: opening the storage")
	}
	defer s.Close()

	threads := int64(cfg.Threads)
	perThread := max(cfg.Ledgers/threads, 1)
	ledgerOf := roundRobin(threads, perThread)
	// Deleted ledgers are spread over the ids, so that every log keeps
	// some live entries: compaction, not only removal.
	spread := min(int64(100), threads*perThread)
	deleted := func(ledger int64) bool { return float64(ledger%spread) < cfg.DeleteFraction*float64(spread) }
	r.logf("gc: writing 1 KiB entries (%s)", cfg.Duration)
	written, err := writeEntriesFor(s, cfg.Threads, cfg.Duration, ledgerOf, nil)
	if err != nil {
		return errors.Wrap(err, "gc: writing")
	}
	deletedLedgers := 0
	for l := int64(0); l < threads*perThread; l++ {
		if deleted(l) {
			if _, err := s.DeleteLedger(l); err != nil {
				return errors.Wrap(err, "gc: deleting")
			}
			deletedLedgers++
		}
	}
	if err := s.Checkpoint(); err != nil {
		return errors.Wrap(err, "gc: checkpoint after the deletions")
	}
	logDir := s.Dirs()[0].LedgerDir()
	before, err := logsBytes(logDir)
	if err != nil {
		return err
	}

	r.logf("gc: %d of %d ledgers deleted, %.1f MB of entry logs; forced GC with reads", deletedLedgers, threads*perThread, float64(before)/1e6)
	readers := startEntryReaders(s, written, ledgerOf, deleted)
	p0 := sampleProcess()
	start := time.Now()
	res, gcErr := s.RunGC(bookie.GCRequest{Force: true})
	elapsed := time.Since(start)
	p1 := sampleProcess()
	readers.halt()
	reads, found := &readers.ops, &readers.found
	r.endProgress()
	if gcErr != nil {
		return errors.Wrap(gcErr, "gc: the forced cycle")
	}
	after, err := logsBytes(logDir)
	if err != nil {
		return err
	}
	var compacted, removed int
	for _, g := range res {
		compacted += g.CompactedLogs
		removed += g.RemovedLogs
	}
	secs := max(elapsed.Seconds(), 1e-9)
	r.rep.emit(OpRow{Engine: r.e.Name(), Phase: "gc", Layout: cfg.Layout, CacheBytes: cfg.CacheSizes[0],
		ShardBytes: cfg.CacheSizes[0] / 64, Threads: cfg.Threads, Ops: reads.Load(), OpsPerSec: float64(reads.Load()) / secs,
		FoundFraction:  foundFraction(found.Load(), reads.Load()),
		CPUMicrosPerOp: float64((p1.cpu - p0.cpu).Microseconds()) / float64(max(reads.Load(), 1)),
		Extra: map[string]float64{
			"log_bytes_before": float64(before), "log_bytes_after": float64(after),
			"reclaim_seconds": elapsed.Seconds(), "reclaim_mb_per_sec": float64(before-after) / secs / 1e6,
			"compacted_logs": float64(compacted), "removed_logs": float64(removed),
		}})
	if found.Load() != reads.Load() {
		return errors.Wrapf(ErrNotAllFound, "gc: reads during the cycle found %d of %d live entries", found.Load(), reads.Load())
	}
	return nil
}

// logsBytes sums the sizes of the entry logs in dir.
func logsBytes(dir string) (int64, error) {
	ids, err := entrylog.ListLogs(vfs.Default, dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, id := range ids {
		fi, err := os.Stat(filepath.Join(dir, entrylog.LogFileName(id)))
		if err != nil {
			return 0, errors.Wrap(err, "gc: measuring the entry logs")
		}
		n += fi.Size()
	}
	return n, nil
}

// foundFraction is found/reads, 1 when nothing was read.
func foundFraction(found, reads int64) float64 {
	if reads == 0 {
		return 1
	}
	return float64(found) / float64(reads)
}

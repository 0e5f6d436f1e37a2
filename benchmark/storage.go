package benchmark

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/journaled"
	"github.com/bookie-index/bookie-index/entrylocation"
	journalpkg "github.com/bookie-index/bookie-index/journal"
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

// entryAdder is the storage the writers add to: *bookie.Storage (durable
// at the next checkpoint) or *journaled.Storage (durable when AddEntry
// returns).
type entryAdder interface {
	AddEntry(ledgerID, entryID int64, payload []byte) error
	Checkpoint() error
}

// writeEntriesFor has threads writers add 1 KiB entries to s, writer t its
// n-th as ledgerOf(t, n), until d has passed or one fails, then
// checkpoints them. It returns how many entries each writer added and the
// first error; with latencies, each add's latency, per writer.
func writeEntriesFor(s entryAdder, threads int, d time.Duration, ledgerOf func(t, n int64) (ledger, entry int64), latencies [][]time.Duration) ([]atomic.Int64, error) {
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
				start := time.Now()
				if err := s.AddEntry(l, e, payload); err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				if latencies != nil {
					latencies[t] = append(latencies[t], time.Since(start))
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

// journalArms are add-entry's journal arms (Config.Journal) and how they
// are written in a row's extra: 0 no journal, 1 journalSyncData=false,
// 2 journalSyncData=true; 3 and 4 the same two with upstream's group
// timing (journalAdaptiveGroupWrites=false).
var journalArms = map[string]float64{"off": 0, "nosync": 1, "sync": 2, "nosync-upstream": 3, "sync-upstream": 4}

// storagePhases runs the bookie storage phases: add-entry (writers adding
// 1 KiB entries to their own ledgers for the phase's duration, then a
// checkpoint that makes them durable, all timed; one row per journal arm
// and writer count, each on a fresh storage, with each add's latency) and
// read-entry (random reads of the last arm's entries after a reopen, so
// the read cache starts cold).
func (r *runner) storagePhases(b *BookieEngine) error {
	cfg := r.cfg
	var arm int
	var dir, journalDir string
	open := func(journal string) (*storageUnderTest, error) {
		engine, err := b.Options(cfg.CacheSizes[0])
		if err != nil {
			return nil, err
		}
		opts := &bookie.Options{
			LedgerDirs:     []string{dir},
			FlushInterval:  time.Hour, // the phase checkpoints when it wants
			GCWaitTime:     time.Hour,
			WriteCacheSize: cfg.WriteCacheBytes,
			Index:          &entrylocation.Options{Engine: engine},

			FlushEntryLogBytes: cfg.FlushEntryLogBytes,
		}
		if journal == "off" {
			bs, err := bookie.Open(opts)
			if err != nil {
				return nil, err
			}
			return &storageUnderTest{entryAdder: bs, close: bs.Close, storage: bs}, nil
		}
		js, err := journaled.Open(journaled.Options{Storage: opts, Journal: journalpkg.Options{
			JournalDirectories:    []string{journalDir},
			NoSyncData:            strings.HasPrefix(journal, "nosync"),
			NoAdaptiveGroupWrites: strings.HasSuffix(journal, "-upstream"),
			MaxGroupWait:          cfg.JournalGroupWait,
		}})
		if err != nil {
			return nil, err
		}
		return &storageUnderTest{entryAdder: js, close: js.Close, storage: js.Storage, journals: js.Journals()}, nil
	}
	var disk diskLimits
	if cfg.DiskProbeBytes > 0 {
		probeDir := filepath.Join(r.dir, "disk-probe")
		if err := os.MkdirAll(probeDir, 0o755); err != nil {
			return errors.Wrap(err, "storage phases")
		}
		r.logf("add-entry: measuring the disk (%s file)", FormatSize(cfg.DiskProbeBytes))
		var err error
		if disk, err = probeDisk(probeDir, cfg.DiskProbeBytes); err != nil {
			return err
		}
	}
	writers := cfg.Writers
	if len(writers) == 0 {
		writers = []int{cfg.Threads}
	}
	var written []atomic.Int64
	var ledgerOf func(t, n int64) (int64, int64)
	arms := cfg.Journal
	if len(arms) == 0 {
		arms = []string{"off"}
	}
	var lastJournal string
	for _, journal := range arms {
		for _, threads := range writers {
			arm++
			dir = filepath.Join(r.dir, fmt.Sprintf("storage-%d", arm))
			journalDir = filepath.Join(r.dir, fmt.Sprintf("journal-%d", arm))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return errors.Wrap(err, "storage phases")
			}
			s, err := open(journal)
			if err != nil {
				return errors.Wrap(err, "add-entry: opening the storage")
			}
			ledgersPerThread := max(cfg.Ledgers/int64(threads), 1)
			ledgerOf = roundRobin(int64(threads), ledgersPerThread)
			r.logf("add-entry: writing 1 KiB entries (%s, %d writers, journal %s)", cfg.Duration, threads, journal)
			latencies := make([][]time.Duration, threads)
			rss := startRSSSampler()
			p0 := sampleProcess()
			start := time.Now()
			var firstErr error
			written, firstErr = writeEntriesFor(s.entryAdder, threads, cfg.Duration, ledgerOf, latencies)
			elapsed := time.Since(start)
			p1 := sampleProcess()
			peak := rss.finish()
			if firstErr != nil {
				_ = s.close()
				return errors.Wrap(firstErr, "add-entry")
			}
			var total int64
			for i := range written {
				total += written[i].Load()
			}
			n := float64(max(total, 1))
			r.endProgress()
			extra := disk.writeExtra(float64(total) * entryPayloadSize / elapsed.Seconds() / 1e6)
			extra["journal"] = journalArms[journal]
			extra["writers"] = float64(threads)
			if cfg.FlushEntryLogBytes > 0 {
				extra["flush_entrylog_bytes"] = float64(cfg.FlushEntryLogBytes)
			}
			for k, v := range latencyQuantiles(latencies) {
				extra[k] = v
			}
			if journal != "off" {
				wait := cfg.JournalGroupWait
				if wait == 0 {
					wait = journalpkg.DefaultMaxGroupWait
				}
				extra["group_wait_ms"] = float64(max(wait, 0)) / 1e6
				jm := s.journals.Metrics()[0]
				extra["journal_syncs"] = float64(jm.Syncs)
				extra["adds_per_sync"] = float64(jm.Adds) / float64(max(jm.Syncs, 1))
				// The journal's own view (histograms within 25%): an fsync's
				// latency, and an add's from its queueing to its completion.
				extra["journal_fsync_p50_ms"] = float64(jm.Sync.SuccessLatency.Quantile(0.5)) / 1e6
				extra["journal_fsync_p99_ms"] = float64(jm.Sync.SuccessLatency.Quantile(0.99)) / 1e6
				extra["journal_add_p99_ms"] = float64(jm.AddEntry.SuccessLatency.Quantile(0.99)) / 1e6
			}
			r.rep.emit(OpRow{Engine: r.e.Name(), Phase: "add-entry", Layout: cfg.Layout, CacheBytes: cfg.CacheSizes[0],
				ShardBytes: cfg.CacheSizes[0] / 64, Threads: threads, Ops: total, OpsPerSec: float64(total) / elapsed.Seconds(),
				FoundFraction: 1, CPUMicrosPerOp: float64((p1.cpu - p0.cpu).Microseconds()) / n, PeakRSSBytes: peak,
				Extra: extra})
			if err := s.close(); err != nil {
				return errors.Wrap(err, "add-entry: closing the storage")
			}
			lastJournal = journal
		}
	}

	if !cfg.has("read-entry") {
		return nil
	}
	s, err := open(lastJournal)
	if err != nil {
		return errors.Wrap(err, "read-entry: reopening the storage")
	}
	bs := s.storage
	// read-entry, cold read cache
	defer s.close() // read-only phase: nothing to lose on close
	r.logf("read-entry: random reads (%s)", cfg.Duration)
	rss := startRSSSampler()
	p0 := sampleProcess()
	start := time.Now()
	readers := startEntryReaders(bs, written, ledgerOf, nil)
	time.Sleep(cfg.Duration)
	readers.halt()
	ops, found := &readers.ops, &readers.found
	elapsed := time.Since(start)
	p1 := sampleProcess()
	peak := rss.finish()
	r.endProgress()
	n := float64(max(ops.Load(), 1))
	r.rep.emit(OpRow{Engine: r.e.Name(), Phase: "read-entry", Layout: cfg.Layout, CacheBytes: cfg.CacheSizes[0],
		ShardBytes: cfg.CacheSizes[0] / 64, Threads: cfg.Threads, Ops: ops.Load(), OpsPerSec: float64(ops.Load()) / elapsed.Seconds(),
		FoundFraction: float64(found.Load()) / n, CPUMicrosPerOp: float64((p1.cpu - p0.cpu).Microseconds()) / n, PeakRSSBytes: peak,
		Extra: disk.readExtra(float64(found.Load()) * entryPayloadSize / elapsed.Seconds() / 1e6)})
	if found.Load() != ops.Load() {
		return errors.Wrapf(ErrNotAllFound, "read-entry found %d of %d entries", found.Load(), ops.Load())
	}
	return nil
}

// storageUnderTest is the storage an arm opens: a *bookie.Storage, or a
// *journaled.Storage (storage is its embedded one, journals its journals).
type storageUnderTest struct {
	entryAdder
	close    func() error
	storage  *bookie.Storage
	journals *journalpkg.Set
}

// latencyQuantiles returns the p50, p99 and p99.9 of the adds' latencies,
// in milliseconds, and the largest.
func latencyQuantiles(perWriter [][]time.Duration) map[string]float64 {
	var all []time.Duration
	for _, l := range perWriter {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil
	}
	slices.Sort(all)
	at := func(q float64) float64 { return float64(all[min(int(q*float64(len(all))), len(all)-1)]) / 1e6 }
	return map[string]float64{"p50_ms": at(0.5), "p99_ms": at(0.99), "p999_ms": at(0.999), "max_ms": float64(all[len(all)-1]) / 1e6}
}

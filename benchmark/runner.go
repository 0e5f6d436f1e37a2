package benchmark

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/internal/procmem"
	"github.com/cockroachdb/errors"
)

// ErrNotAllFound fails a run whose gets of existing keys did not all find
// their key.
var ErrNotAllFound = errors.New("benchmark: a get of an existing key found nothing")

// Run runs the configured phases on each engine, one after the other, each
// in its own subdirectory of cfg.Dir (a temporary directory if empty).
// Rows go to out; progress lines to progress (nil: none).
func Run(cfg *Config, engines []Engine, out, progress io.Writer) error {
	return RunArms(cfg, enginesAsArms(engines), out, progress)
}

// Arm is one arm of a run: an Engine, which the runner drives op by op,
// or a ProcessArm, which runs the workload in a process of its own.
type Arm interface {
	// Name is the engine's name in the rows.
	Name() string
}

func enginesAsArms(engines []Engine) []Arm {
	arms := make([]Arm, len(engines))
	for i, e := range engines {
		arms[i] = e
	}
	return arms
}

// RunArms is Run over engines and process arms alike, in the order given.
func RunArms(cfg *Config, arms []Arm, out, progress io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := CheckArms(cfg, arms); err != nil {
		return err
	}
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "bookie-index-bench-")
		if err != nil {
			return errors.Wrap(err, "benchmark: temporary directory")
		}
		dir = tmp
	}
	if !cfg.Keep && !cfg.UseExisting {
		defer os.RemoveAll(dir)
	}
	if cfg.DiskBound && cfg.ReaderEngine == "" {
		// Before a load that may take an hour.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return errors.Wrap(err, "benchmark")
		}
		if err := DiskBoundAvailable(dir, cfg.DiskBoundMemory > 0); err != nil {
			return err
		}
	}
	if cfg.ReaderEngine != "" {
		// A disk-bound reader process: the one engine it was started for.
		var one []Arm
		for _, a := range arms {
			if _, ok := a.(Engine); ok && a.Name() == cfg.ReaderEngine {
				one = append(one, a)
			}
		}
		if len(one) != 1 {
			return errors.Newf("--disk-bound-reader %q: no such engine", cfg.ReaderEngine)
		}
		arms = one
	}
	rep := &reporter{w: out, json: cfg.JSON}
	if !cfg.JSON {
		fmt.Fprintf(out, "bookie-index bench: %d ledgers × %d entries = %d keys, loaded via %s (batches of %d entries per ledger), %d threads, warm-up %s, %s measured\n",
			cfg.Ledgers, cfg.Entries, cfg.Keys(), cfg.EffectiveLoadVia(), cfg.FlushEntries, cfg.Threads, cfg.Warmup, cfg.Duration)
		fmt.Fprintf(out, "layout %s, common prefix %v, block size %d, bloom bits %d, compression %s, target file size %s, write buffer %s, dir %s\n",
			cfg.Layout, cfg.CommonPrefix, cfg.BlockSize, cfg.BloomBits, cfg.Compression, FormatSize(cfg.EffectiveTargetFileSize()),
			FormatSize(cfg.EffectiveWriteBuffer()), dir)
		if cfg.DiskBound {
			held := ""
			if cfg.DiskBoundMemory > 0 {
				held = " in a memory cgroup of the cache + " + FormatSize(cfg.DiskBoundMemory)
			}
			fmt.Fprintf(out, "disk-bound: each cache size's read phases in a process of their own%s, the store's files dropped from the page cache before it and every %s while it runs; the disk read at random before and after it (%d-byte O_DIRECT reads, %d threads, %s)\n",
				held, cfg.EffectiveDropEvery(), cfg.BlockSize, cfg.Threads, cfg.DiskProbeTime)
		}
	}
	if cfg.JSON {
		progress = nil
	}
	for _, a := range arms {
		var err error
		switch a := a.(type) {
		case Engine:
			r := &runner{cfg: cfg, e: a, dir: filepath.Join(dir, a.Name()), rep: rep, progress: progress}
			err = r.run()
		case ProcessArm:
			p := &processRunner{cfg: cfg, a: a, dir: filepath.Join(dir, a.DirName()), rep: rep, progress: progress}
			err = p.run()
		default:
			err = errors.Newf("%T is neither an Engine nor a ProcessArm", a)
		}
		if err != nil {
			return errors.Wrapf(err, "benchmark: %s", a.Name())
		}
	}
	return nil
}

// CheckEngines reports settings that an engine cannot run, before any
// engine runs: --load-via ingest on an engine that is no Ingester.
func CheckEngines(cfg *Config, engines []Engine) error {
	return CheckArms(cfg, enginesAsArms(engines))
}

// CheckArms is CheckEngines over engines and process arms (which cannot
// ingest).
func CheckArms(cfg *Config, arms []Arm) error {
	if cfg.EffectiveLoadVia() != LoadViaIngest || !cfg.has("load") || cfg.UseExisting {
		return nil
	}
	for _, a := range arms {
		if _, ok := a.(Ingester); !ok {
			return errors.Newf("--load-via ingest: engine %s cannot ingest tables (bookie-index only; load it with --load-via write)", a.Name())
		}
	}
	return nil
}

type runner struct {
	cfg *Config
	e   Engine
	// proc, set in place of e, is a process arm whose disk-bound read
	// phases this runner runs (diskBoundRows; nothing else).
	proc     ProcessArm
	dir      string
	rep      *reporter
	progress io.Writer
}

// armName is the name of the runner's engine or process arm.
func (r *runner) armName() string {
	if r.proc != nil {
		return r.proc.Name()
	}
	return r.e.Name()
}

func (r *runner) logf(format string, args ...interface{}) {
	if r.progress != nil {
		fmt.Fprintf(r.progress, "\r"+format+"\033[K", args...)
	}
}

func (r *runner) endProgress() {
	if r.progress != nil {
		fmt.Fprint(r.progress, "\r\033[K")
	}
}

func (r *runner) run() error {
	cfg := r.cfg
	if err := r.e.Open(r.dir, cfg.CacheSizes[0]); err != nil {
		return err
	}
	if cfg.has("load") && !cfg.UseExisting {
		if err := r.load(); err != nil {
			_ = r.e.Close()
			return err
		}
	}
	if cfg.DiskBound && cfg.ReaderEngine == "" {
		// The read phases run in reader processes, one per cache size,
		// on the closed store.
		if err := r.e.Close(); err != nil {
			return err
		}
		for _, c := range cfg.CacheSizes {
			if err := r.diskBoundRows(c); err != nil {
				return err
			}
		}
		return nil
	}
	for i, c := range cfg.CacheSizes {
		if i > 0 || cfg.has("load") && !cfg.UseExisting {
			if err := r.e.Close(); err != nil {
				return err
			}
			if err := r.e.Open(r.dir, c); err != nil {
				return err
			}
		}
		for _, phase := range []string{"get", "floor", "miss", "mixed"} {
			if !cfg.has(phase) {
				continue
			}
			row, err := r.measure(phase, c)
			if err != nil {
				_ = r.e.Close()
				return err
			}
			r.rep.emit(row)
			if phase == "get" && row.FoundFraction != 1 {
				_ = r.e.Close()
				return errors.Wrapf(ErrNotAllFound, "found fraction %.6f at cache %s", row.FoundFraction, FormatSize(c))
			}
		}
	}
	if cfg.has("delete") {
		row, err := r.deletePhase(cfg.CacheSizes[len(cfg.CacheSizes)-1])
		if err != nil {
			_ = r.e.Close()
			return err
		}
		r.rep.emit(row)
	}
	if err := r.e.Close(); err != nil {
		return err
	}
	if !cfg.has("add-entry") && !cfg.has("read-entry") && !cfg.has("gc") {
		return nil
	}
	// The storage phases run together (read-entry reads what add-entry
	// wrote) and only over this repository's bookie storage.
	b, ok := r.e.(*BookieEngine)
	if !ok {
		if r.progress != nil {
			fmt.Fprintf(r.progress, "add-entry/read-entry/gc: skipped for %s (bookie-index only)\n", r.e.Name())
		}
		return nil
	}
	if cfg.has("add-entry") || cfg.has("read-entry") {
		if err := r.storagePhases(b); err != nil {
			return err
		}
	}
	if cfg.has("gc") {
		return r.gcPhase(b)
	}
	return nil
}

// location hands out increasing locations as an entry log would: 1 KiB
// entries after a 1 KiB header, a new log every GiB.
type locationSequence struct{ log, offset int64 }

func (s *locationSequence) next() int64 {
	if s.offset+1028 > 1<<30 {
		s.log++
		s.offset = 1024
	}
	loc := s.log<<32 | (s.offset + 4)
	s.offset += 1028
	return loc
}

// opFunc does one operation of a phase; it returns whether it found.
type opFunc func(rd Reader, rng *rand.Rand) (bool, error)

func (r *runner) opFor(phase string, deleted map[int64]bool) opFunc {
	cfg := r.cfg
	switch phase {
	case "get":
		return func(rd Reader, rng *rand.Rand) (bool, error) {
			return rd.Get(rng.Int63n(cfg.Ledgers), rng.Int63n(cfg.Entries))
		}
	case "miss":
		return func(rd Reader, rng *rand.Rand) (bool, error) {
			return rd.Get(rng.Int63n(cfg.Ledgers), cfg.Entries+1000000+rng.Int63n(cfg.Entries))
		}
	default: // floor
		return func(rd Reader, rng *rand.Rand) (bool, error) {
			return rd.Floor(rng.Int63n(cfg.Ledgers))
		}
	}
}

// runThreads runs op on cfg.Threads goroutines for d and returns the ops
// and finds.
func (r *runner) runThreads(readers []Reader, op opFunc, d time.Duration, seed int64) (ops, found int64, err error) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	var errOnce sync.Once
	var opsTotal, foundTotal atomic.Int64
	for i, rd := range readers {
		wg.Add(1)
		go func(rd Reader, seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			var n, f int64
			for !stop.Load() {
				ok, e := op(rd, rng)
				if e != nil {
					errOnce.Do(func() { err = e })
					stop.Store(true)
					break
				}
				n++
				if ok {
					f++
				}
			}
			opsTotal.Add(n)
			foundTotal.Add(f)
		}(rd, seed+int64(i))
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	return opsTotal.Load(), foundTotal.Load(), err
}

// measure runs a warm-up and a measured run of a phase.
func (r *runner) measure(phase string, cacheBytes int64) (OpRow, error) {
	cfg := r.cfg
	readers := make([]Reader, cfg.Threads)
	for i := range readers {
		readers[i] = r.e.NewReader()
	}
	op := r.opFor(phase, nil)
	var stopWriter func() (int64, error)
	if phase == "mixed" {
		op = r.opFor("get", nil)
		stopWriter = r.startWriter()
	}
	// The peak covers the warm-up, where the cache fills.
	rss := startRSSSampler()
	r.logf("%s: warming up (%s)", phase, cfg.Warmup)
	if _, _, err := r.runThreads(readers, op, cfg.Warmup, 1); err != nil {
		rss.finish()
		return OpRow{}, err
	}
	r.logf("%s: measuring (%s)", phase, cfg.Duration)
	before := make([]OpStats, len(readers))
	for i, rd := range readers {
		before[i] = rd.Stats()
	}
	stopProfile, err := r.startCPUProfile(phase, cacheBytes)
	if err != nil {
		rss.finish()
		return OpRow{}, err
	}
	p0 := sampleProcess()
	io0 := diskReadBytes()
	t0 := time.Now()
	ops, found, err := r.runThreads(readers, op, cfg.Duration, 1000)
	elapsed := time.Since(t0)
	io1 := diskReadBytes()
	p1 := sampleProcess()
	if perr := stopProfile(); err == nil {
		err = perr
	}
	peak := rss.finish()
	var extra map[string]float64
	if stopWriter != nil {
		written, werr := stopWriter()
		if err == nil {
			err = werr
		}
		extra = map[string]float64{"write_keys_per_sec": float64(written) / (cfg.Warmup + elapsed).Seconds()}
	}
	r.endProgress()
	if err != nil {
		return OpRow{}, err
	}
	var st OpStats
	for i, rd := range readers {
		s := rd.Stats()
		st.FilterReads += s.FilterReads - before[i].FilterReads
		st.IndexReads += s.IndexReads - before[i].IndexReads
		st.DataReads += s.DataReads - before[i].DataReads
		st.BytesRead += s.BytesRead - before[i].BytesRead
		st.CacheHits += s.CacheHits - before[i].CacheHits
		st.FilterSkips += s.FilterSkips - before[i].FilterSkips
	}
	n := float64(max(ops, 1))
	row := OpRow{
		Engine: r.e.Name(), Phase: phase, Layout: cfg.Layout, CacheBytes: cacheBytes, ShardBytes: cacheBytes / 64,
		Threads: cfg.Threads, Ops: ops, OpsPerSec: float64(ops) / elapsed.Seconds(), FoundFraction: float64(found) / n,
		FilterReadsPerOp: float64(st.FilterReads) / n, FilterSkipsPerOp: float64(st.FilterSkips) / n, IndexReadsPerOp: float64(st.IndexReads) / n,
		DataReadsPerOp: float64(st.DataReads) / n, BytesReadPerOp: float64(st.BytesRead) / n,
		CacheHitsPerOp: float64(st.CacheHits) / n, CPUMicrosPerOp: float64((p1.cpu - p0.cpu).Microseconds()) / n,
		PeakRSSBytes: peak, GoMemoryBytes: procmem.GoRuntimeBytes(), Extra: extra,
	}
	if m, ok := r.e.(MemoryReporter); ok {
		row.CacheMemoryBytes = m.BlockCacheMemory()
	}
	if total := p1.total - p0.total; total > 0 {
		row.GCCPUFraction = (p1.gcCPU - p0.gcCPU) / total
	}
	if cfg.ReaderEngine != "" && io0 >= 0 && io1 >= 0 {
		// A disk-bound reader: what the phase read from the disk itself,
		// beside the engine's count of bytes read from its files.
		if row.Extra == nil {
			row.Extra = map[string]float64{}
		}
		row.Extra["disk_read_bytes_per_op"] = float64(io1-io0) / n
	}
	return row, nil
}

// startWriter keeps adding batches of new entries (beyond the loaded
// ones) until the returned function is called; it returns the keys written.
func (r *runner) startWriter() func() (int64, error) {
	cfg := r.cfg
	var stop atomic.Bool
	var written atomic.Int64
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		seq := &locationSequence{log: 1 << 20, offset: 1024}
		entries := make([]Entry, 0, cfg.Ledgers*cfg.FlushEntries)
		for k := int64(0); !stop.Load(); k++ {
			entries = entries[:0]
			base := cfg.Entries + k*cfg.FlushEntries
			for l := int64(0); l < cfg.Ledgers; l++ {
				for e := base; e < base+cfg.FlushEntries; e++ {
					entries = append(entries, Entry{Ledger: l, EntryID: e, Location: seq.next()})
				}
			}
			if err := r.e.WriteBatch(entries); err != nil {
				werr = err
				return
			}
			written.Add(int64(len(entries)))
		}
	}()
	return func() (int64, error) {
		stop.Store(true)
		<-done
		return written.Load(), werr
	}
}

// deletePhase deletes the oldest fraction of the ledgers, then measures floor lookups on deleted and live ledgers and the
// table bytes given back once compactions settle.
func (r *runner) deletePhase(cacheBytes int64) (OpRow, error) {
	cfg := r.cfg
	// Measure from a settled index: what the phases before left in the
	// memtables would otherwise be flushed after the deletion and counted
	// against it (the reclaimed fraction came out negative under load).
	if err := r.e.Settle(); err != nil {
		return OpRow{}, err
	}
	before, err := r.e.Storage()
	if err != nil {
		return OpRow{}, err
	}
	// The oldest ledgers, as a bookie's GC deletes them: ledger ids grow
	// with time.
	var deleted []int64
	isDeleted := map[int64]bool{}
	for l := int64(0); l < int64(float64(cfg.Ledgers)*cfg.DeleteFraction); l++ {
		deleted = append(deleted, l)
		isDeleted[l] = true
	}
	r.logf("delete: deleting %d ledgers", len(deleted))
	t0 := time.Now()
	if err := r.e.DeleteLedgers(deleted); err != nil {
		return OpRow{}, err
	}
	deleteSecs := time.Since(t0).Seconds()
	readers := make([]Reader, cfg.Threads)
	for i := range readers {
		readers[i] = r.e.NewReader()
	}
	floorOn := func(pick func(rng *rand.Rand) int64) (float64, float64, error) {
		op := func(rd Reader, rng *rand.Rand) (bool, error) { return rd.Floor(pick(rng)) }
		ops, found, err := r.runThreads(readers, op, cfg.Duration/2, 7)
		return float64(ops) / (cfg.Duration / 2).Seconds(), float64(found) / float64(max(ops, 1)), err
	}
	r.logf("delete: floor lookups on deleted ledgers")
	delRate, delFound, err := floorOn(func(rng *rand.Rand) int64 { return deleted[rng.Intn(len(deleted))] })
	if err != nil {
		return OpRow{}, err
	}
	r.logf("delete: floor lookups on live ledgers")
	liveRate, liveFound, err := floorOn(func(rng *rand.Rand) int64 {
		for {
			if l := rng.Int63n(cfg.Ledgers); !isDeleted[l] {
				return l
			}
		}
	})
	if err != nil {
		return OpRow{}, err
	}
	r.logf("delete: waiting for compactions to give the space back")
	t1 := time.Now()
	if err := r.e.Settle(); err != nil {
		return OpRow{}, err
	}
	settle := time.Since(t1).Seconds()
	after, err := r.e.Storage()
	if err != nil {
		return OpRow{}, err
	}
	r.endProgress()
	return OpRow{
		Engine: r.e.Name(), Phase: "delete", Layout: cfg.Layout, CacheBytes: cacheBytes, ShardBytes: cacheBytes / 64,
		Threads: cfg.Threads, OpsPerSec: liveRate, FoundFraction: liveFound,
		Extra: map[string]float64{
			"deleted_ledgers":           float64(len(deleted)),
			"delete_seconds":            deleteSecs,
			"floor_deleted_per_sec":     delRate,
			"floor_deleted_found":       delFound,
			"table_bytes_before":        float64(before.TableBytes),
			"table_bytes_after":         float64(after.TableBytes),
			"reclaimed_fraction":        1 - float64(after.TableBytes)/float64(max(before.TableBytes, 1)),
			"settle_seconds":            settle,
			"expected_deleted_fraction": float64(len(deleted)) / float64(cfg.Ledgers),
		},
	}, nil
}

// profiled runs f under a CPU profile PREFIX-ENGINE-NAME.pprof if
// --cpuprofile asks for one.
func (r *runner) profiled(name string, f func() error) error {
	if r.cfg.CPUProfile == "" {
		return f()
	}
	stop, err := r.startProfile(fmt.Sprintf("%s-%s-%s.pprof", r.cfg.CPUProfile, r.e.Name(), name))
	if err != nil {
		return err
	}
	err = f()
	if serr := stop(); err == nil {
		err = serr
	}
	return err
}

// writeAllocProfile writes the allocations so far to
// PREFIX-ENGINE-NAME-allocs.pprof if --cpuprofile is set.
func (r *runner) writeAllocProfile(name string) error {
	if r.cfg.CPUProfile == "" {
		return nil
	}
	path := fmt.Sprintf("%s-%s-%s-allocs.pprof", r.cfg.CPUProfile, r.e.Name(), name)
	f, err := os.Create(path)
	if err != nil {
		return errors.Wrap(err, "benchmark: --cpuprofile")
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "benchmark: --cpuprofile %s", path)
	}
	return errors.Wrapf(f.Close(), "benchmark: --cpuprofile %s", path)
}

// startCPUProfile starts the CPU profile of one measured phase if
// --cpuprofile asks for it; the returned function stops and writes it.
func (r *runner) startCPUProfile(phase string, cacheBytes int64) (stop func() error, err error) {
	if r.cfg.CPUProfile == "" {
		return func() error { return nil }, nil
	}
	return r.startProfile(fmt.Sprintf("%s-%s-%s-%s.pprof", r.cfg.CPUProfile, r.e.Name(), phase, FormatSize(cacheBytes)))
}

// startProfile starts a CPU profile written to name.
func (r *runner) startProfile(name string) (stop func() error, err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, errors.Wrap(err, "benchmark: --cpuprofile")
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, errors.Wrapf(err, "benchmark: --cpuprofile %s", name)
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Wrapf(f.Close(), "benchmark: --cpuprofile %s", name)
	}, nil
}

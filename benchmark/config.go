package benchmark

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// Config is the workload and run settings (the bench command's flags).
type Config struct {
	Dir         string
	Keep        bool
	UseExisting bool

	Ledgers, Entries, FlushEntries int64
	// LoadVia is how the load phase fills the index: "write" (the synced
	// batches, the default) or "ingest" (the same entries written into
	// tables outside the DB and ingested, as `bookie-index rebuild` builds
	// an index; engines that implement Ingester only).
	LoadVia string

	Layout       string // partitioned or full
	CommonPrefix bool
	BlockSize    int
	BloomBits    int
	Compression  string
	// AlwaysLoadFilters sets lsm.Options.AlwaysLoadFilters (bookie-index).
	AlwaysLoadFilters bool
	TargetFileSize    int64 // 0: 64 MiB scaled to the key count
	WriteBuffer       int64
	// DiskProbeBytes is the size of the file the storage phases write and
	// read to measure the disk's own sequential rates beside theirs (0: no
	// probe).
	DiskProbeBytes int64
	// IdleCompactionDelay sets lsm.Options.IdleCompactionDelay
	// (bookie-index; 0: the engine's default, negative: off).
	IdleCompactionDelay time.Duration
	// MaxSubcompactions sets lsm.Options.MaxSubcompactions for
	// bookie-index (0: the engine's default). No flag: tests set it.
	MaxSubcompactions int

	// DiskBound runs the read phases (get, floor, miss) of each cache size
	// in a reader process of their own, the store's files dropped from the
	// page cache before it starts and every few milliseconds while it
	// runs, with the disk's random-read rate measured beside them
	// (docs/benchmarks.md, "The disk-bound regime").
	DiskBound bool
	// DiskBoundMemory, if positive, also holds each reader in a memory
	// cgroup with a limit of the cache plus this, heap and page cache
	// together, as a container's limit is: a reader that needs more is
	// killed.
	DiskBoundMemory int64
	// DiskBoundDropEvery is how often a disk-bound reader's store is
	// dropped from the page cache (0: every 10 ms).
	DiskBoundDropEvery time.Duration
	// DiskProbeTime is how long the disk-bound mode reads the disk at
	// random before each cache size's reader runs.
	DiskProbeTime time.Duration
	// ReaderEngine, set on the reader process the disk-bound mode starts,
	// names the one engine whose read phases it runs (--disk-bound-reader).
	ReaderEngine string
	// ReaderCommand is the command line that runs this bench again: the
	// executable and the arguments it was given. The disk-bound mode
	// starts its readers with it, the reader flags appended. Set by the
	// commands (bookie-index bench, bench/), not a flag.
	ReaderCommand []string

	CacheSizes []int64
	Threads    int
	Warmup     time.Duration
	Duration   time.Duration
	Phases     []string
	// DeleteFraction of the ledgers the delete phase deletes.
	DeleteFraction float64
	// GCLogSize is the entry-log size of the gc phase (0: 16 MiB).
	GCLogSize int64
	// Writers are the writer counts of add-entry, one row each (default:
	// Threads).
	Writers []int
	// Journal are add-entry's journal arms, one row each per writer count:
	// "off" (the storage alone, durable at the final checkpoint), "nosync"
	// (behind a journal with journalSyncData=false: acknowledged once
	// written), "sync" (journalSyncData=true: acknowledged after the
	// fsync that covers it), and "nosync-upstream" and "sync-upstream"
	// (the same with upstream's group timing,
	// journalAdaptiveGroupWrites=false). Default: off.
	Journal []string
	// JournalGroupWait is journalMaxGroupWaitMSec for the journal arms (0:
	// upstream's 2 ms; negative: no wait).
	JournalGroupWait time.Duration
	// WriteCacheBytes is the storage phases' write cache (0: the storage's
	// default, 512 MiB): the writers wait for a checkpoint when a half of
	// it fills.
	WriteCacheBytes int64
	// FlushEntryLogBytes is flushEntrylogBytes for the storage phases (0:
	// off, upstream's default): entry logs are written out and
	// fdatasynced every this many bytes between checkpoints.
	FlushEntryLogBytes int64
	JSON               bool
	// CPUProfile, if set, is the path prefix of one CPU profile per
	// measured read phase, PREFIX-ENGINE-PHASE-CACHE.pprof, and of the
	// load's: PREFIX-ENGINE-load-write.pprof, -load-settle.pprof,
	// -load-idle.pprof and its allocations, -load-allocs.pprof.
	CPUProfile string
}

// RegisterFlags defines the bench flags on fs, writing into c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Dir, "dir", "", "directory for the databases (default: a temporary directory)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the databases after the run")
	fs.BoolVar(&c.UseExisting, "use-existing", false, "skip the load phase and use the databases in --dir")
	fs.Int64Var(&c.Ledgers, "ledgers", 1000, "ledgers")
	fs.Int64Var(&c.Entries, "entries", 50000, "entries per ledger")
	fs.Int64Var(&c.FlushEntries, "flush-entries", 1000, "entries per ledger in each flush batch")
	fs.StringVar(&c.LoadVia, "load-via", LoadViaWrite, "how the load fills the index: write (synced batches) or ingest (bookie-index: the same entries in tables built outside the DB and ingested, as bookie-index rebuild does)")
	fs.StringVar(&c.Layout, "layout", "partitioned", "table layout: partitioned (index and filter partitions) or full (one filter, one-level index)")
	fs.Func("common-prefix", "store each block's common key prefix once: on or off (default on)", func(s string) error {
		switch s {
		case "on", "true":
			c.CommonPrefix = true
		case "off", "false":
			c.CommonPrefix = false
		default:
			return errors.Newf("must be on or off, not %q", s)
		}
		return nil
	})
	c.CommonPrefix = true
	fs.IntVar(&c.BlockSize, "block-size", lsm.DefaultBlockSize, "data block size")
	fs.IntVar(&c.BloomBits, "bloom-bits", lsm.DefaultBloomBitsPerKey, "Bloom filter bits per key")
	fs.StringVar(&c.Compression, "compression", "lz4", "block compression: none or lz4")
	fs.BoolVar(&c.AlwaysLoadFilters, "always-load-filters", false, "bookie-index: read uncached filter blocks on every lookup, even while lookups find their keys")
	fs.Func("target-file-size", "table size (default 64MiB scaled to the key count, at least 2MiB)", func(s string) error {
		v, err := ParseSize(s)
		c.TargetFileSize = v
		return err
	})
	fs.DurationVar(&c.IdleCompactionDelay, "idle-compaction-delay", 0, "bookie-index: compact L0 into the base level once no write came for this long (0: the engine's default, 30s; negative: never); the load phase waits for it")
	c.DiskProbeBytes = 256 << 20
	fs.Func("disk-probe-size", "add-entry/read-entry: size of the file written and read to measure the disk's sequential write and read rates and its fsyncs/s in the same run (default 256MiB; 0: none)", func(s string) error {
		v, err := ParseSize(s)
		c.DiskProbeBytes = v
		return err
	})
	fs.BoolVar(&c.DiskBound, "disk-bound", false, "run get, floor and miss of each cache size in a reader process of their own with the store's files kept out of the page cache (dropped every 10ms), beside the disk's own random-read rate at --block-size and --threads (O_DIRECT reads of the store's files)")
	fs.Func("disk-bound-memory", "disk-bound: also hold each reader in a memory cgroup of the cache plus this, heap and page cache together, as a container's limit (Linux, as root; a reader that needs more is killed; default: none)", func(s string) error {
		v, err := ParseSize(s)
		c.DiskBoundMemory = v
		return err
	})
	fs.DurationVar(&c.DiskBoundDropEvery, "disk-bound-drop-every", defaultDropEvery, "disk-bound: how often the store's files are dropped from the page cache while a reader runs")
	fs.DurationVar(&c.DiskProbeTime, "disk-probe-time", 5*time.Second, "disk-bound: how long to measure the disk's random reads before each cache size's reader")
	fs.StringVar(&c.ReaderEngine, "disk-bound-reader", "", "internal: run as the disk-bound reader process of this engine")
	fs.Func("write-buffer", "memtable size (default 64MiB)", func(s string) error {
		v, err := ParseSize(s)
		c.WriteBuffer = v
		return err
	})
	c.CacheSizes = []int64{64 << 20, 256 << 20, 1 << 30}
	fs.Func("cache", "block cache sizes, comma separated (default 64MiB,256MiB,1GiB)", func(s string) error {
		c.CacheSizes = nil
		for _, part := range strings.Split(s, ",") {
			v, err := ParseSize(part)
			if err != nil {
				return err
			}
			c.CacheSizes = append(c.CacheSizes, v)
		}
		return nil
	})
	fs.IntVar(&c.Threads, "threads", 4, "reader goroutines")
	fs.DurationVar(&c.Warmup, "warmup", 5*time.Second, "warm-up before each measured phase")
	fs.DurationVar(&c.Duration, "duration", 20*time.Second, "measured time of each phase")
	c.Phases = []string{"load", "get", "floor"}
	fs.Func("phases", "phases to run: load,get,floor,miss,delete,mixed, and for bookie-index add-entry,read-entry,gc (the bookie storage with 1 KiB entries; gc: delete --delete-fraction of the ledgers and time a forced GC) (default load,get,floor)", func(s string) error {
		c.Phases = strings.Split(s, ",")
		return nil
	})
	fs.Float64Var(&c.DeleteFraction, "delete-fraction", 0.2, "fraction of the ledgers the delete phase deletes")
	fs.Func("writers", "add-entry: writer counts, comma separated, one row each (default: --threads)", func(s string) error {
		c.Writers = nil
		for _, part := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n <= 0 {
				return errors.Newf("%q is not a positive writer count", part)
			}
			c.Writers = append(c.Writers, n)
		}
		return nil
	})
	c.Journal = []string{"off"}
	fs.Func("journal", "add-entry: journal arms, comma separated, one row each per writer count: off (the storage alone), nosync (behind a journal, journalSyncData=false), sync (journalSyncData=true: each add waits for its fsync), nosync-upstream and sync-upstream (the same with journalAdaptiveGroupWrites=false: upstream's group timing) (default off)", func(s string) error {
		c.Journal = strings.Split(s, ",")
		return nil
	})
	fs.Func("write-cache", "add-entry/read-entry/gc: the storage's write cache (default 512MiB; a checkpoint writes a half of it out once it fills)", func(s string) error {
		v, err := ParseSize(s)
		c.WriteCacheBytes = v
		return err
	})
	fs.Func("flush-entrylog-bytes", "add-entry/read-entry: the storage's flushEntrylogBytes: write out and fdatasync an entry log every this many bytes between checkpoints (default 0: off)", func(s string) error {
		v, err := ParseSize(s)
		c.FlushEntryLogBytes = v
		return err
	})
	fs.DurationVar(&c.JournalGroupWait, "journal-group-wait", 0, "add-entry: journalMaxGroupWaitMSec of the journal arms (0: upstream's 2ms; negative: no wait)")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON object per row")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of each measured read phase to PREFIX-ENGINE-PHASE-CACHE.pprof, and of the load to PREFIX-ENGINE-load-{write,settle,idle,allocs}.pprof")
}

// Validate checks the settings.
func (c *Config) Validate() error {
	known := map[string]bool{"load": true, "get": true, "floor": true, "miss": true, "delete": true, "mixed": true, "add-entry": true, "read-entry": true, "gc": true}
	for _, p := range c.Phases {
		if !known[p] {
			return errors.Newf("unknown phase %q (accepted: load, get, floor, miss, delete, mixed, add-entry, read-entry, gc)", p)
		}
	}
	for _, j := range c.Journal {
		if _, ok := journalArms[j]; !ok {
			return errors.Newf("--journal: unknown arm %q (accepted: off, nosync, sync, nosync-upstream, sync-upstream)", j)
		}
	}
	switch {
	case c.Ledgers <= 0 || c.Entries <= 0 || c.FlushEntries <= 0:
		return errors.New("--ledgers, --entries and --flush-entries must be positive")
	case c.LoadVia != "" && c.LoadVia != LoadViaWrite && c.LoadVia != LoadViaIngest:
		return errors.Newf("--load-via %q: accepted %s, %s", c.LoadVia, LoadViaWrite, LoadViaIngest)
	case c.Threads <= 0:
		return errors.New("--threads must be positive")
	case c.Layout != "partitioned" && c.Layout != "full":
		return errors.Newf("--layout %q: accepted partitioned, full", c.Layout)
	case c.Compression != "none" && c.Compression != "lz4":
		return errors.Newf("--compression %q: accepted none, lz4", c.Compression)
	case len(c.CacheSizes) == 0:
		return errors.New("--cache needs at least one size")
	case c.UseExisting && c.Dir == "":
		return errors.New("--use-existing needs --dir")
	case c.DeleteFraction <= 0 || c.DeleteFraction >= 1:
		return errors.New("--delete-fraction must be in (0, 1)")
	}
	if c.DiskBound {
		reads := 0
		for _, p := range c.Phases {
			switch p {
			case "get", "floor", "miss":
				reads++
			case "load":
			default:
				return errors.Newf("--disk-bound runs load, get, floor and miss, not %s", p)
			}
		}
		switch {
		case reads == 0:
			return errors.New("--disk-bound needs a read phase (get, floor or miss)")
		case c.DiskBoundMemory < 0:
			return errors.New("--disk-bound-memory must not be negative")
		case c.DiskBoundDropEvery < 0:
			return errors.New("--disk-bound-drop-every must not be negative")
		case c.DiskProbeTime <= 0:
			return errors.New("--disk-probe-time must be positive")
		case c.BlockSize <= 0:
			return errors.New("--disk-bound needs a positive --block-size (the disk is read at that size)")
		}
	}
	return nil
}

// EffectiveDropEvery is DiskBoundDropEvery, 10 ms if unset.
func (c *Config) EffectiveDropEvery() time.Duration {
	if c.DiskBoundDropEvery > 0 {
		return c.DiskBoundDropEvery
	}
	return defaultDropEvery
}

// readPhases are the phases among get, floor and miss that the run asks
// for, in the order they run.
func (c *Config) readPhases() []string {
	var out []string
	for _, p := range []string{"get", "floor", "miss"} {
		if c.has(p) {
			out = append(out, p)
		}
	}
	return out
}

// The ways the load phase fills the index (Config.LoadVia).
const (
	LoadViaWrite  = "write"
	LoadViaIngest = "ingest"
)

// EffectiveLoadVia is LoadVia, "write" if unset.
func (c *Config) EffectiveLoadVia() string {
	if c.LoadVia == "" {
		return LoadViaWrite
	}
	return c.LoadVia
}

// Keys returns the number of keys the load writes.
func (c *Config) Keys() int64 { return c.Ledgers * c.Entries }

// EffectiveTargetFileSize is the table size: as set, or 64 MiB for 50M
// keys scaled to the key count (at least 2 MiB), so that a scaled run has
// as many tables per level as the full one.
func (c *Config) EffectiveTargetFileSize() int64 {
	if c.TargetFileSize > 0 {
		return c.TargetFileSize
	}
	return max(2<<20, int64(float64(64<<20)*float64(c.Keys())/50e6))
}

// EffectiveWriteBuffer is the memtable size: as set, or 64 MiB.
func (c *Config) EffectiveWriteBuffer() int64 {
	if c.WriteBuffer > 0 {
		return c.WriteBuffer
	}
	return 64 << 20
}

func (c *Config) has(phase string) bool {
	for _, p := range c.Phases {
		if p == phase {
			return true
		}
	}
	return false
}

// ParseSize parses sizes like 64MiB, 1GiB, 512KiB, 4096.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, errors.Newf("%q is not a size (e.g. 64MiB)", s)
	}
	return int64(v * float64(mult)), nil
}

// FormatSize prints a size as the flags spell it.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

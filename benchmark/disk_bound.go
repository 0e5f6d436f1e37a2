package benchmark

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
)

// The disk-bound mode (--disk-bound) measures the regime of a large
// bookie: an index many times larger than the memory it may use, where a
// get costs disk reads. For each cache size, the runner
//
//  1. drops the store's files from the page cache (fdatasync, then
//     posix_fadvise(DONTNEED) on every file of its directory);
//  2. measures the disk's random reads at the data block size and the
//     phases' thread count, with O_DIRECT on the store's own files
//     (probeRandomReads);
//  3. starts the reader process and, while it runs, drops the store's
//     files from the page cache again every 10 ms (pageCacheKeeper): a
//     block the reader reads stays in the page cache at most that long,
//     so every lookup that misses the engine's own cache reads the disk
//     (--disk-bound-memory also holds the reader in a memory cgroup of
//     the cache plus that much, as a container's limit);
//  4. samples, while the reader runs, how much of the store's files is in
//     the page cache (mincore) — the check that they stayed out;
//  5. reports the reader's rows with the disk's figures beside them: ops/s
//     as a fraction of the disk's random reads/s, and bytes read from the
//     disk per op (the reader's /proc/self/io) and over its life
//     (ru_inblock).
//
// The drops act on the files, not on a process: they keep the store out
// of the page cache whoever reads it, in any runtime, without privileges.
// The reader process is the bench command run again
// (Config.ReaderCommand) with --disk-bound-reader ENGINE, --use-existing
// and the one cache size, so any engine the command knows runs the same
// way and starts with a fresh heap; an engine whose lookups live in
// another runtime implements DiskBoundReader and names its own process,
// which then runs under the same drops and checks. A ProcessArm that is a
// DiskBoundReader (the BookKeeper arm) runs its load in its process and
// its disk-bound read phases in the readers it names, the same way.

// DiskBoundReader is an Engine or a ProcessArm whose disk-bound read phases run in a
// process it names instead of a re-run of the bench command: a reference
// arm whose index lives in another runtime (BookKeeper's EntryLocationIndex
// in a JVM). The process must open the store in dir with a block cache of
// cacheBytes, run the phases in order with the Config's threads, warm-up and
// duration, and print one OpRow per phase as a JSON line on stdout (engine,
// phase, ops, ops_per_sec, found_fraction at least; extra may carry
// disk_read_bytes_per_op from its own /proc/self/io). The runner keeps
// the store out of the page cache while it runs (and with
// --disk-bound-memory starts it in the memory cgroup, through `sh`, which
// joins the cgroup and execs it), samples the store's page cache
// residency, and adds the disk's figures to its rows.
type DiskBoundReader interface {
	ReaderCommand(dir string, cacheBytes int64, phases []string) (*exec.Cmd, error)
}

// DiskBoundAvailable says why the disk-bound mode cannot run with its
// stores under dir on this machine, or nil if it can: it needs a file
// system that takes O_DIRECT reads for the disk probe (tmpfs does not)
// and, with withCgroup (--disk-bound-memory), a memory cgroup it may
// create (Linux, as root). Run checks it before the load.
func DiskBoundAvailable(dir string, withCgroup bool) error {
	if withCgroup {
		cg, err := newMemoryCgroup()
		if err != nil {
			return err
		}
		if err := cg.remove(); err != nil {
			return err
		}
	}
	return directIOAvailable(dir)
}

// directIOAvailable says whether dir's file system takes O_DIRECT reads.
func directIOAvailable(dir string) error {
	f, err := os.CreateTemp(dir, "odirect-")
	if err != nil {
		return errors.Wrap(err, "disk-bound mode")
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, directAlign))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Wrap(err, "disk-bound mode")
	}
	d, err := os.OpenFile(f.Name(), os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return errors.Wrapf(err, "disk-bound mode: the file system of %s refuses O_DIRECT reads (tmpfs?), so the disk probe cannot run", dir)
	}
	return d.Close()
}

// How often the disk-bound mode drops the store's files from the page
// cache and samples how much of them is in it.
const (
	defaultDropEvery = 10 * time.Millisecond
	residencyEvery   = 250 * time.Millisecond
)

// diskBoundRows runs the read phases of one cache size in a reader
// process with the store kept out of the page cache and emits their rows.
func (r *runner) diskBoundRows(cacheBytes int64) error {
	cfg := r.cfg
	phases := cfg.readPhases()
	files, err := storeFiles(r.dir)
	if err != nil {
		return err
	}
	storeBytes := totalSize(files)
	if err := dropFromPageCache(files); err != nil {
		return err
	}
	probe := func(when string) (randomReads, error) {
		r.logf("disk-bound: random reads of the disk %s the reader (%d-byte reads, %d threads, %s)", when, cfg.BlockSize, cfg.Threads, cfg.DiskProbeTime)
		// The files as they are now: a reader may have replaced some
		// (RocksDB writes a new OPTIONS file and removes the old at open).
		files, err := storeFiles(r.dir)
		if err != nil {
			return randomReads{}, err
		}
		return probeRandomReads(files, cfg.BlockSize, cfg.Threads, cfg.DiskProbeTime)
	}
	diskBefore, err := probe("before")
	if err != nil {
		return err
	}
	cmd, err := r.readerCommand(cacheBytes, phases)
	if err != nil {
		return err
	}
	if cmd.Err != nil {
		return errors.Wrap(cmd.Err, "disk-bound reader")
	}
	var cg *memoryCgroup
	held := "the page cache dropped every " + cfg.EffectiveDropEvery().String()
	if cfg.DiskBoundMemory > 0 {
		if cg, err = newMemoryCgroup(); err != nil {
			return err
		}
		defer func() { _ = cg.remove() }()
		if err := cg.setLimit(cacheBytes + cfg.DiskBoundMemory); err != nil {
			return err
		}
		held += ", in " + FormatSize(cacheBytes+cfg.DiskBoundMemory) + " of memory"
		inCgroup(cmd, cg)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r.logf("disk-bound: reader of %s with a %s cache, held to %s: %s", r.armName(), FormatSize(cacheBytes), held, strings.Join(phases, ", "))
	keeper := startPageCacheKeeper(r.dir, cfg.EffectiveDropEvery())
	residency := startResidencySampler(r.dir, residencyEvery)
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	maxResident, meanResident, resErr := residency.finish()
	drops, keepErr := keeper.finish()
	r.endProgress()
	if runErr != nil {
		msg := "disk-bound reader"
		if cg != nil && cg.oomKills() > 0 {
			msg += " killed for want of memory in a cgroup of " + FormatSize(cacheBytes+cfg.DiskBoundMemory) + " (raise --disk-bound-memory)"
		}
		return errors.Wrapf(runErr, "%s: %s", msg, tail(stderr.String(), 2000))
	}
	if resErr != nil {
		return resErr
	}
	if keepErr != nil {
		return keepErr
	}
	// The disk again: a machine's disk is shared, and its rate drifts. The
	// rows' fraction is of the mean of the two.
	diskAfter, err := probe("after")
	if err != nil {
		return err
	}
	disk := randomReads{ReadSize: diskBefore.ReadSize, Threads: diskBefore.Threads,
		ReadsPerSec:      (diskBefore.ReadsPerSec + diskAfter.ReadsPerSec) / 2,
		MBPerSec:         (diskBefore.MBPerSec + diskAfter.MBPerSec) / 2,
		CPUMicrosPerRead: (diskBefore.CPUMicrosPerRead + diskAfter.CPUMicrosPerRead) / 2}
	extra := map[string]float64{
		"store_bytes":               float64(storeBytes),
		"page_cache_max_bytes":      float64(maxResident),
		"page_cache_mean_bytes":     float64(meanResident),
		"disk_reads_per_sec":        disk.ReadsPerSec,
		"disk_reads_per_sec_before": diskBefore.ReadsPerSec,
		"disk_reads_per_sec_after":  diskAfter.ReadsPerSec,
		"disk_read_mb_per_sec":      disk.MBPerSec,
		"disk_read_size":            float64(disk.ReadSize),
		"disk_read_cpu_us_per_read": disk.CPUMicrosPerRead,
	}
	extra["page_cache_drops_per_sec"] = float64(drops) / elapsed.Seconds()
	if cg != nil {
		extra["memory_limit_bytes"] = float64(cacheBytes + cfg.DiskBoundMemory)
		extra["cgroup_peak_bytes"] = float64(cg.peakBytes())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// The reader's whole life (open, warm-ups, phases): ru_inblock
		// counts 512-byte blocks read from the file systems' devices.
		extra["reader_disk_read_bytes"] = float64(ru.Inblock) * 512
	}
	rows, err := parseReaderRows(stdout.Bytes())
	if err != nil {
		return errors.Wrapf(err, "disk-bound reader of %s", r.armName())
	}
	if len(rows) != len(phases) {
		return errors.Newf("disk-bound reader of %s printed %d rows for %d phases: %s", r.armName(), len(rows), len(phases), tail(stdout.String(), 2000))
	}
	for _, row := range rows {
		row.DiskBound = true
		if row.Extra == nil {
			row.Extra = map[string]float64{}
		}
		for k, v := range extra {
			row.Extra[k] = v
		}
		if disk.ReadsPerSec > 0 {
			row.Extra["fraction_of_disk_reads"] = row.OpsPerSec / disk.ReadsPerSec
		}
		r.rep.emit(row)
		if row.Phase == "get" && row.FoundFraction != 1 {
			return errors.Wrapf(ErrNotAllFound, "found fraction %.6f at cache %s (disk-bound)", row.FoundFraction, FormatSize(cacheBytes))
		}
	}
	return nil
}

// readerCommand is the command of the disk-bound reader of r's engine:
// the engine's own (DiskBoundReader), or the bench command run again as
// the reader of this engine, on this store, at one cache size.
func (r *runner) readerCommand(cacheBytes int64, phases []string) (*exec.Cmd, error) {
	if r.proc != nil {
		dr, ok := r.proc.(DiskBoundReader)
		if !ok {
			return nil, errors.Newf("disk-bound mode: the process arm %s names no reader process (DiskBoundReader)", r.proc.DirName())
		}
		return dr.ReaderCommand(r.dir, cacheBytes, phases)
	}
	if dr, ok := r.e.(DiskBoundReader); ok {
		return dr.ReaderCommand(r.dir, cacheBytes, phases)
	}
	argv := r.cfg.ReaderCommand
	if len(argv) == 0 {
		return nil, errors.New("disk-bound mode: the command did not say how to run itself again (Config.ReaderCommand)")
	}
	args := append(append([]string{}, argv[1:]...),
		"--disk-bound-reader", r.armName(), "--dir", filepath.Dir(r.dir), "--use-existing",
		"--cache", FormatSize(cacheBytes), "--phases", strings.Join(phases, ","), "--json")
	return exec.Command(argv[0], args...), nil
}

// inCgroup makes cmd join cg before it runs: sh writes its own pid to the
// cgroup's procs file and execs the command, which keeps the pid, so
// everything the command allocates or reads is charged to cg from its
// first instruction.
func inCgroup(cmd *exec.Cmd, cg *memoryCgroup) {
	argv := append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, cg.procsFile(), cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args, cmd.Err = "/bin/sh", argv, nil
}

// parseReaderRows reads the OpRows a reader printed, one JSON object per
// line.
func parseReaderRows(out []byte) ([]OpRow, error) {
	var rows []OpRow
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row OpRow
		if err := json.Unmarshal(line, &row); err != nil {
			return nil, errors.Wrapf(err, "a row that is not JSON: %q", tail(string(line), 200))
		}
		rows = append(rows, row)
	}
	return rows, errors.Wrap(sc.Err(), "reading the rows")
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

package benchmark

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
)

// ProcessArm is an engine in another runtime that cannot be driven op by
// op from Go — BookKeeper's own EntryLocationIndex in a JVM
// (interop/bookkeeper, the BookKeeper arm of docs/benchmarks.md). A
// process of its own runs the workload of the contract with the run's
// Config (the same keys, batches, locations, threads, warm-up and
// duration) and prints the rows; the runner passes them on, as JSON or as
// the tables, and fails the run as it fails an Engine's. In the disk-bound
// mode (--disk-bound) the process runs the load only, and an arm that is
// also a DiskBoundReader names the reader process of each cache size.
type ProcessArm interface {
	// Name is the engine's name in the rows ("bookkeeper").
	Name() string
	// DirName is the arm's directory under the run's directory: arms of
	// one engine with other options or versions differ in it.
	DirName() string
	// Command returns the process that runs phases, a subset of load,
	// get, floor and miss in that order, on the store in dir: the load
	// into an empty dir; the read phases once per cache size of
	// cacheSizes, in that order, the store reopened with that block cache.
	// It prints one row per line on stdout, a LoadRow or an OpRow as JSON
	// (the fields of `bookie-index bench --json`), and its progress and
	// logs on stderr. The runner sets its Stdout and Stderr.
	Command(dir string, phases []string, cacheSizes []int64) (*exec.Cmd, error)
}

// processPhases are the phases a ProcessArm runs.
var processPhases = []string{"load", "get", "floor", "miss"}

// processRunner runs one ProcessArm.
type processRunner struct {
	cfg      *Config
	a        ProcessArm
	dir      string
	rep      *reporter
	progress io.Writer
}

func (p *processRunner) run() error {
	cfg := p.cfg
	var phases, skipped []string
	for _, ph := range processPhases { // in the order the process runs them
		if cfg.has(ph) && !(ph == "load" && cfg.UseExisting) {
			phases = append(phases, ph)
		}
	}
	for _, ph := range cfg.Phases {
		if !slices.Contains(processPhases, ph) {
			skipped = append(skipped, ph)
		}
	}
	if len(skipped) > 0 && p.progress != nil {
		fmt.Fprintf(p.progress, "%s: %s skipped (the process arm runs %s)\n", p.a.DirName(), strings.Join(skipped, ", "), strings.Join(processPhases, ", "))
	}
	if !cfg.DiskBound {
		return p.runProcess(phases, cfg.CacheSizes)
	}
	// Disk-bound: the load in the arm's process, the read phases of each
	// cache size in a reader it names, as the runner does for an engine.
	if len(phases) > 0 && phases[0] == "load" {
		if err := p.runProcess([]string{"load"}, cfg.CacheSizes[:1]); err != nil {
			return err
		}
	}
	r := &runner{cfg: cfg, proc: p.a, dir: p.dir, rep: p.rep, progress: p.progress}
	for _, c := range cfg.CacheSizes {
		if err := r.diskBoundRows(c); err != nil {
			return err
		}
	}
	return nil
}

// runProcess runs the arm's process for phases and cacheSizes and passes
// its rows on.
func (p *processRunner) runProcess(phases []string, cacheSizes []int64) error {
	if len(phases) == 0 {
		return nil
	}
	cmd, err := p.a.Command(p.dir, phases, cacheSizes)
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return errors.Wrap(err, "process arm")
	}
	logs := &lineTail{max: 40, progress: p.progress, prefix: p.a.DirName() + ": "}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return errors.Wrapf(err, "process arm: starting %s", cmd.Path)
	}
	rowErr := p.readRows(stdout)
	if rowErr != nil {
		// Stop the process: its rows are no longer read.
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	logs.flush()
	if p.progress != nil {
		fmt.Fprint(p.progress, "\r\033[K")
	}
	switch {
	case rowErr != nil:
		return &processError{errors.Wrapf(rowErr, "process arm %s", p.a.DirName()), logs.String()}
	case waitErr != nil:
		return &processError{errors.Wrapf(waitErr, "process arm %s: %s", p.a.DirName(), cmd.Path), logs.String()}
	}
	return nil
}

// processError is a process arm's failure with the end of its stderr.
type processError struct {
	err    error
	stderr string
}

func (e *processError) Error() string {
	return e.err.Error() + "; its stderr ends:\n" + e.stderr
}

func (e *processError) Unwrap() error { return e.err }

// readRows reads the process's rows and emits them, checking each as the
// runner checks its own: the arm's engine, a get that found every key.
func (p *processRunner) readRows(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var head struct {
			Engine, Phase string
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return errors.Wrapf(err, "a row that is not JSON: %q", line)
		}
		if head.Engine != p.a.Name() {
			return errors.Newf("a row of engine %q from the arm of %q: %s", head.Engine, p.a.Name(), line)
		}
		switch head.Phase {
		case "load":
			var row LoadRow
			if err := json.Unmarshal(line, &row); err != nil {
				return errors.Wrapf(err, "load row %s", line)
			}
			p.rep.emit(row)
		case "get", "floor", "miss":
			var row OpRow
			if err := json.Unmarshal(line, &row); err != nil {
				return errors.Wrapf(err, "%s row %s", head.Phase, line)
			}
			p.rep.emit(row)
			if row.Phase == "get" && row.FoundFraction != 1 {
				return errors.Wrapf(ErrNotAllFound, "found fraction %.6f at cache %s", row.FoundFraction, FormatSize(row.CacheBytes))
			}
		default:
			return errors.Newf("a row of phase %q: %s", head.Phase, line)
		}
	}
	return errors.Wrap(sc.Err(), "reading the rows")
}

// lineTail keeps the last lines a process wrote to stderr (for the error
// of a failed run) and shows each as a progress line.
type lineTail struct {
	mu       sync.Mutex
	max      int
	lines    []string
	partial  []byte
	progress io.Writer
	prefix   string
}

func (l *lineTail) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.add(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(b), nil
}

func (l *lineTail) add(line string) {
	line = strings.TrimRight(line, "\r")
	if l.progress != nil {
		fmt.Fprintf(l.progress, "\r%s%s\033[K", l.prefix, line)
	}
	l.lines = append(l.lines, line)
	if len(l.lines) > l.max {
		l.lines = l.lines[len(l.lines)-l.max:]
	}
}

func (l *lineTail) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.add(string(l.partial))
		l.partial = nil
	}
}

func (l *lineTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

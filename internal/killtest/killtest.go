package killtest

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
)

// DefaultNoProgress is how long a round waits for an acknowledgement it
// needs before it fails.
const DefaultNoProgress = 30 * time.Second

// Seed returns the seed of a kill test's random choices: flagSeed if it is
// not 0 (a replay), the clock otherwise. It logs it with the flag that
// replays it.
func Seed(t testing.TB, flagSeed int64, flagName string) int64 {
	t.Helper()
	seed := flagSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (replay with -%s %d)", seed, flagName, seed)
	return seed
}

// FlagSet reports whether the named flag was given on the command line.
func FlagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Round is one life of a child process.
type Round struct {
	// Test is the child test's name: the binary runs -test.run=^Test$.
	Test string
	// Command, if set, is the child instead: a program and its
	// arguments (a built binary, whose acknowledgements the parent makes
	// itself, say: see Start). Dir is its working directory (default:
	// the parent's).
	Command []string
	Dir     string
	// Stderr passes the child's standard error lines to KillOn too (a
	// program that logs there), besides standard output's.
	Stderr bool
	// Start, if set, starts Life when it is closed (by the parent, once
	// it saw the child work: its first write acknowledged), as
	// LifeFromFirstAck starts it at the child's first acknowledgement.
	// The round waits for it as it waits for an acknowledgement it
	// needs (NoProgress).
	Start <-chan struct{}
	// Env is added to the parent's environment.
	Env []string
	// Life is how long the child runs before it is killed. 0: until KillOn
	// matches.
	Life time.Duration
	// LifeFromFirstAck counts Life from the child's first acknowledgement
	// instead of from its start, so that the kill lands at a chosen
	// distance after the child made its first write durable (Life 0: at
	// that acknowledgement). The round waits for it as with
	// AtLeastOneAck.
	LifeFromFirstAck bool
	// AtLeastOneAck keeps the child running past Life until its first
	// acknowledgement.
	AtLeastOneAck bool
	// KillOn, if set, is called with each line of the child's stdout that is
	// not an acknowledgement; true kills the child at once.
	KillOn func(line string) bool
	// NoProgress bounds the time the round waits for what it needs (the
	// first acknowledgement with AtLeastOneAck or LifeFromFirstAck, a
	// KillOn match with Life 0)
	// before the test fails; 0: DefaultNoProgress.
	NoProgress time.Duration
}

// Result is what a round saw.
type Result struct {
	// Acks are the acknowledged ids, in the order the child printed them.
	Acks []int
	// Matched reports whether KillOn matched (the child was killed then).
	Matched bool
}

// Run starts the child, kills it with SIGKILL as r says, and returns what
// it acknowledged. It fails the test if the child ended by itself, or
// gave nothing of what the round needs within r.NoProgress.
func (r Round) Run(t testing.TB) Result {
	t.Helper()
	argv := r.Command
	if len(argv) == 0 {
		argv = []string{os.Args[0], "-test.run=^" + r.Test + "$"}
	}
	name := r.Test
	if len(r.Command) > 0 {
		name = strings.Join(r.Command, " ")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), r.Env...)
	var stderr bytes.Buffer
	outputs := make([]io.Reader, 0, 2)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, stdout)
	if r.Stderr {
		errPipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, errPipe)
	} else {
		cmd.Stderr = &stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	var scanners sync.WaitGroup
	for _, out := range outputs {
		scanners.Go(func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
		})
	}
	go func() {
		scanners.Wait()
		close(lines)
	}()
	var res Result
	var other strings.Builder // stdout lines that are not acknowledgements
	var deadline <-chan time.Time
	if r.Life > 0 && !r.LifeFromFirstAck && r.Start == nil {
		deadline = time.After(r.Life)
	}
	start := r.Start
	see := func(line string) {
		if id, ok := strings.CutPrefix(line, "ACK "); ok {
			if n, err := strconv.Atoi(id); err == nil {
				res.Acks = append(res.Acks, n)
				if r.LifeFromFirstAck && len(res.Acks) == 1 {
					deadline = time.After(r.Life)
				}
				return
			}
		}
		other.WriteString(line + "\n")
		if r.KillOn != nil && !res.Matched && r.KillOn(line) {
			res.Matched = true
		}
	}
	kill := func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines {
			see(line)
		}
	}
	noProgress := r.NoProgress
	if noProgress == 0 {
		noProgress = DefaultNoProgress
	}
	giveUp := time.After(noProgress)
	expired, exited := false, false
	done := func() bool {
		if res.Matched {
			return true
		}
		if r.Life == 0 && !r.LifeFromFirstAck && r.Start == nil {
			return false
		}
		return expired && (len(res.Acks) > 0 || !r.AtLeastOneAck || r.Start != nil)
	}
	for !exited && !done() {
		select {
		case line, ok := <-lines:
			if !ok {
				exited = true
				break
			}
			see(line)
		case <-start:
			start, giveUp = nil, nil // what the round needed came
			deadline = time.After(r.Life)
		case <-deadline:
			expired = true
		case <-giveUp:
			kill()
			_ = cmd.Wait()
			t.Fatalf("no progress: the child (%s) gave nothing the round needs in %v (%d acknowledgements):\n%s%s",
				name, noProgress, len(res.Acks), other.String(), stderr.String())
		}
	}
	kill()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child (%s) ended by itself (%v), not by SIGKILL:\n%s%s", name, err, other.String(), stderr.String())
	}
	return res
}

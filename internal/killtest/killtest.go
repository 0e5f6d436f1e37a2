package killtest

import (
	"bufio"
	"bytes"
	"flag"
	"github.com/cockroachdb/errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
	cmd := exec.Command(os.Args[0], "-test.run=^"+r.Test+"$")
	cmd.Env = append(os.Environ(), r.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var res Result
	var other strings.Builder // stdout lines that are not acknowledgements
	var deadline <-chan time.Time
	if r.Life > 0 && !r.LifeFromFirstAck {
		deadline = time.After(r.Life)
	}
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
		if r.Life == 0 && !r.LifeFromFirstAck {
			return false
		}
		return expired && (len(res.Acks) > 0 || !r.AtLeastOneAck)
	}
	for !exited && !done() {
		select {
		case line, ok := <-lines:
			if !ok {
				exited = true
				break
			}
			see(line)
		case <-deadline:
			expired = true
		case <-giveUp:
			kill()
			_ = cmd.Wait()
			t.Fatalf("no progress: the child (%s) gave nothing the round needs in %v (%d acknowledgements):\n%s%s",
				r.Test, noProgress, len(res.Acks), other.String(), stderr.String())
		}
	}
	kill()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child (%s) ended by itself (%v), not by SIGKILL:\n%s%s", r.Test, err, other.String(), stderr.String())
	}
	return res
}

package bookkeeper

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Build returns the module's programs (Compile). It skips t when java or
// mvn is not on PATH, unless BOOKKEEPER_INTEROP=required (CI's setting:
// there the tests must run, and a missing tool fails them);
// BOOKKEEPER_INTEROP=off and -short skip them. It fails t when the build
// fails.
func Build(t testing.TB) *Programs {
	t.Helper()
	mode := os.Getenv("BOOKKEEPER_INTEROP")
	switch {
	case mode == "off":
		t.Skip("BOOKKEEPER_INTEROP=off")
	case testing.Short() && mode != "required":
		t.Skip("-short: skips the runs of BookKeeper's own classes")
	}
	p, err := Compile()
	var unavailable *UnavailableError
	if errors.As(err, &unavailable) {
		if mode == "required" {
			t.Fatalf("BOOKKEEPER_INTEROP=required, but %s", unavailable.Reason)
		}
		t.Skip(unavailable.Reason + ": the tests that run Apache BookKeeper's own classes skip (install Java 17 and Maven to run them; the committed directories and traces are checked all the same)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Run runs the program class (a name under interop.bookkeeper) with args
// and fails t if it does not exit 0, with the end of its output. It
// returns the program's standard error (BookKeeper's warnings and the
// program's summary).
func (p *Programs) Run(t testing.TB, class string, args ...string) string {
	t.Helper()
	cmd := p.Command(class, []string{"-Xmx512m", "-XX:MaxDirectMemorySize=256m"}, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("java %s %s: %s", class, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("java %s %s: %v\nstdout:\n%s\nstderr (end):\n%s", class, strings.Join(args, " "), err,
			tail(stdout.String(), 2000), tail(stderr.String(), 6000))
	}
	return stderr.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// Process is a program started by Start.
type Process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr bytes.Buffer
}

// Start starts the program class with args, its standard input a pipe
// that Stop closes, and waits for want on its standard output (a program
// says so when it is ready). It fails t if the program ends first.
func (p *Programs) Start(t testing.TB, want, class string, args ...string) *Process {
	t.Helper()
	pr := &Process{cmd: p.Command(class, []string{"-Xmx512m", "-XX:MaxDirectMemorySize=256m"}, args...)}
	pr.cmd.Stderr = &pr.stderr
	var err error
	if pr.stdin, err = pr.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := pr.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr.stdout = bufio.NewReader(out)
	if err := pr.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pr.cmd.ProcessState == nil {
			_ = pr.cmd.Process.Kill()
			_ = pr.cmd.Wait()
		}
	})
	for {
		line, err := pr.stdout.ReadString('\n')
		if strings.TrimSpace(line) == want {
			return pr
		}
		if err != nil {
			_ = pr.cmd.Wait()
			t.Fatalf("java %s %s ended before it printed %q: %v\nstderr (end):\n%s", class, strings.Join(args, " "), want, err,
				tail(pr.stderr.String(), 6000))
		}
	}
}

// Stop closes the program's standard input and waits for its exit, which
// must be 0.
func (pr *Process) Stop(t testing.TB) {
	t.Helper()
	_ = pr.stdin.Close()
	if err := pr.cmd.Wait(); err != nil {
		t.Fatalf("java %v: %v\nstderr (end):\n%s", pr.cmd.Args[len(pr.cmd.Args)-2:], err, tail(pr.stderr.String(), 6000))
	}
}

package bookkeeper

import (
	"bytes"
	"errors"
	"os"
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

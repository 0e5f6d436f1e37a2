package bookkeeper

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Programs runs the Java programs of the module, once it is built.
type Programs struct {
	java      string
	classpath string // the compiled classes, then every dependency jar
}

var (
	buildOnce sync.Once
	built     *Programs
	buildErr  error
	skipWhy   string
)

// Build returns the module's programs, compiling the module the first
// time a test process asks (into the user's cache directory, under a hash
// of pom.xml and src/, so that later runs reuse it). It skips t when java
// or mvn is not on PATH, unless BOOKKEEPER_INTEROP=required (CI's setting:
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
	buildOnce.Do(func() { built, skipWhy, buildErr = build() })
	if skipWhy != "" {
		if mode == "required" {
			t.Fatalf("BOOKKEEPER_INTEROP=required, but %s", skipWhy)
		}
		t.Skip(skipWhy + ": the tests that run Apache BookKeeper's own classes skip (install Java 17 and Maven to run them; the committed directories and traces are checked all the same)")
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// moduleDir is the directory of this file: pom.xml and src/ are beside it.
func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func build() (*Programs, string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, "java is not on PATH", nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, "mvn is not on PATH", nil
	}
	dir := moduleDir()
	sum, err := sourceHash(dir)
	if err != nil {
		return nil, "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "bookie-index", "interop-bookkeeper")
	out := filepath.Join(root, sum)
	if _, err := os.Stat(filepath.Join(out, "classpath.txt")); err != nil {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, "", err
		}
		tmp, err := os.MkdirTemp(root, sum+".tmp-")
		if err != nil {
			return nil, "", err
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command(mvn, "-q", "-B", "-Dinterop.buildDir="+tmp, "package")
		cmd.Dir = dir
		var outBuf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, "", fmt.Errorf("building %s with Maven (%s): %v\n%s", dir, time.Since(start).Round(time.Millisecond), err, outBuf.String())
		}
		// Another process may have built the same sources meanwhile:
		// either copy will do.
		if err := os.Rename(tmp, out); err != nil {
			if _, statErr := os.Stat(filepath.Join(out, "classpath.txt")); statErr != nil {
				return nil, "", err
			}
		}
	}
	cp, err := os.ReadFile(filepath.Join(out, "classpath.txt"))
	if err != nil {
		return nil, "", err
	}
	return &Programs{
		java:      java,
		classpath: filepath.Join(out, "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(cp)),
	}, "", nil
}

// sourceHash hashes pom.xml and every file under src/, names and contents.
func sourceHash(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(filepath.Join(dir, "src"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range append([]string{filepath.Join(dir, "pom.xml")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Run runs the program class (a name under interop.bookkeeper) with args
// and fails t if it does not exit 0, with the end of its output. It
// returns the program's standard error (BookKeeper's warnings and the
// program's summary).
func (p *Programs) Run(t testing.TB, class string, args ...string) string {
	t.Helper()
	argv := []string{
		// BookKeeper reads file descriptors through reflection for its
		// page-cache hints; without these it logs a warning and goes on.
		"--add-opens", "java.base/java.io=ALL-UNNAMED",
		"--add-opens", "java.base/java.nio=ALL-UNNAMED",
		"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
		"-Xmx512m", "-XX:MaxDirectMemorySize=256m",
		"-cp", p.classpath, "interop.bookkeeper." + class,
	}
	cmd := exec.Command(p.java, append(argv, args...)...)
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

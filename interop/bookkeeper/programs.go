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
	"time"

	"github.com/cockroachdb/errors"
)

// Programs runs the Java programs of the module, once it is built.
type Programs struct {
	java      string
	classpath string // the compiled classes, then every dependency jar
	base      string // classpath with BookKeeper's own rocksdbjni
	out       string // the build directory (classes, classpath.txt, rocksdbjni/)
	rocksdb   string // the rocksdbjni version on classpath
}

// BookKeeperRocksDB is the rocksdbjni version bookkeeper-server 4.18.2
// depends on, the one on the module's classpath.
const BookKeeperRocksDB = "9.9.3"

// OtherRocksDB is the other rocksdbjni version the build fetches (pom.xml,
// rocksdb.other.version), for WithRocksDB.
const OtherRocksDB = "10.10.1"

// UnavailableError says why the programs cannot run on this machine: java
// or mvn is not on PATH.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return e.Reason }

var (
	compileOnce sync.Once
	compiled    *Programs
	compileErr  error
)

// Compile returns the module's programs, compiling the module the first
// time a process asks (with Maven, into the user's cache directory under
// a hash of pom.xml and src/, so that later runs reuse it). The error is
// an *UnavailableError when java or mvn is not on PATH. The module's
// sources are found beside this file, so the caller must be built from a
// checkout of the repository (go run, go test).
func Compile() (*Programs, error) {
	compileOnce.Do(func() { compiled, compileErr = compile() })
	return compiled, compileErr
}

// moduleDir is the directory of this file: pom.xml and src/ are beside it.
func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// RepoDir is the root of the repository this package was built from.
func RepoDir() string { return filepath.Dir(filepath.Dir(moduleDir())) }

func compile() (*Programs, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, &UnavailableError{"java is not on PATH"}
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, &UnavailableError{"mvn is not on PATH"}
	}
	dir := moduleDir()
	if _, err := os.Stat(filepath.Join(dir, "pom.xml")); err != nil {
		return nil, errors.Wrapf(err, "the BookKeeper interop module is not at %s (run from a checkout of the repository)", dir)
	}
	sum, err := sourceHash(dir)
	if err != nil {
		return nil, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "bookie-index", "interop-bookkeeper")
	out := filepath.Join(root, sum)
	if _, err := os.Stat(filepath.Join(out, "classpath.txt")); err != nil {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(root, sum+".tmp-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command(mvn, "-q", "-B", "-Dinterop.buildDir="+tmp, "package")
		cmd.Dir = dir
		var outBuf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, errors.Newf("building %s with Maven (%s): %v\n%s", dir, time.Since(start).Round(time.Millisecond), err, outBuf.String())
		}
		// Another process may have built the same sources meanwhile:
		// either copy will do.
		if err := os.Rename(tmp, out); err != nil {
			if _, statErr := os.Stat(filepath.Join(out, "classpath.txt")); statErr != nil {
				return nil, err
			}
		}
	}
	cp, err := os.ReadFile(filepath.Join(out, "classpath.txt"))
	if err != nil {
		return nil, err
	}
	classpath := filepath.Join(out, "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(cp))
	return &Programs{java: java, classpath: classpath, base: classpath, out: out, rocksdb: BookKeeperRocksDB}, nil
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

// RocksDB is the rocksdbjni version on the programs' classpath.
func (p *Programs) RocksDB() string { return p.rocksdb }

// WithRocksDB returns the programs with rocksdbjni of version on the
// classpath: BookKeeperRocksDB (BookKeeper's own, in classpath.txt) or
// OtherRocksDB (the build copies its jar to rocksdbjni/ beside the
// classes, and it takes the place of BookKeeper's).
func (p *Programs) WithRocksDB(version string) (*Programs, error) {
	q := *p
	q.classpath, q.rocksdb = p.base, version
	if version == BookKeeperRocksDB {
		return &q, nil
	}
	jar := filepath.Join(p.out, "rocksdbjni", "rocksdbjni-"+version+".jar")
	if _, err := os.Stat(jar); err != nil {
		return nil, errors.Newf("rocksdbjni %s: the build has %s and %s only (%v)", version, BookKeeperRocksDB, OtherRocksDB, err)
	}
	parts := strings.Split(p.base, string(os.PathListSeparator))
	found := false
	for i, e := range parts {
		if b := filepath.Base(e); strings.HasPrefix(b, "rocksdbjni-") && strings.HasSuffix(b, ".jar") {
			parts[i], found = jar, true
		}
	}
	if !found {
		return nil, errors.New("no rocksdbjni jar on the module's classpath")
	}
	q.classpath = strings.Join(parts, string(os.PathListSeparator))
	return &q, nil
}

// BaseJVMFlags are the flags every program runs with: BookKeeper reads
// file descriptors through reflection for its page-cache hints; without
// these it logs a warning and goes on.
var BaseJVMFlags = []string{
	"--add-opens", "java.base/java.io=ALL-UNNAMED",
	"--add-opens", "java.base/java.nio=ALL-UNNAMED",
	"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
}

// Command is the java command that runs the program class (a name under
// interop.bookkeeper) with the JVM flags (BaseJVMFlags come first) and
// args.
func (p *Programs) Command(class string, jvmFlags []string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, BaseJVMFlags...), jvmFlags...), "-cp", p.classpath, "interop.bookkeeper."+class)
	return exec.Command(p.java, append(argv, args...)...)
}

package bookkeeper

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var regenerate = flag.Bool("regenerate", false, "rewrite testdata/dirs (and the committed traces) with BookKeeper's programs and the seeds of testdata/README.md")

// committedDirs are the scenarios of testdata/dirs and their seeds.
var committedDirs = []struct {
	scenario string
	seed     int64
}{
	{"clean", 1},
	{"separate-index", 2},
	{"crash", 3},
	{"journal", 4},
}

// TestRegenerateDirs rewrites testdata/dirs with -regenerate (it needs
// java and mvn): each scenario is written with its committed seed, read
// back by BookKeeper, and copied without RocksDB's info logs (LOG,
// LOG.old.*), which nothing reads. The content is the same for the same
// seed; file numbers, RocksDB's identities and the journal's file name
// differ from run to run.
func TestRegenerateDirs(t *testing.T) {
	if !*regenerate {
		t.Skip("rewrites testdata/dirs only with -regenerate")
	}
	p := Build(t)
	for _, c := range committedDirs {
		dir := filepath.Join(t.TempDir(), c.scenario)
		seed := strconv.FormatInt(c.seed, 10)
		if c.scenario == "journal" {
			p.Run(t, "JournalBookie", "--seed", seed, "--out", dir)
			p.Run(t, "JournalBookie", "--verify", copyDir(t, dir))
		} else {
			p.Run(t, "WriteBookie", "--scenario", c.scenario, "--seed", seed, "--out", dir)
			if c.scenario == "crash" {
				p.Run(t, "WriteBookie", "--verify", copyDir(t, dir))
			}
		}
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "LOG") {
				return os.Remove(p)
			}
			return err
		}))
		checkDirs(t, dir)
		dst := filepath.Join("testdata", "dirs", c.scenario)
		require.NoError(t, os.RemoveAll(dst))
		require.NoError(t, os.CopyFS(dst, os.DirFS(dir)))
		t.Logf("wrote %s", dst)
	}
}

// committedTraces are the traces of testdata/traces: the program, the
// file and its seed.
var committedTraces = []struct {
	program, file string
	seed          int64
}{
	{"IndexTrace", "entrylocation-seed1.jsonl", 1},
	{"StorageTrace", "dbledgerstorage-seed1.jsonl", 1},
}

// TestRegenerateTraces rewrites testdata/traces with -regenerate (it needs
// java and mvn). A trace is the same for the same seed.
func TestRegenerateTraces(t *testing.T) {
	if !*regenerate {
		t.Skip("rewrites testdata/traces only with -regenerate")
	}
	p := Build(t)
	for _, c := range committedTraces {
		out := filepath.Join("testdata", "traces", c.file)
		p.Run(t, c.program, "--seed", strconv.FormatInt(c.seed, 10), "--dir", filepath.Join(scratchDir(t), "db"), "--out", out)
		t.Logf("wrote %s", out)
	}
}

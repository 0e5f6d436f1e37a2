package bookkeeper

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var seedFlag = flag.Int64("seed", 0, "seed of the fresh runs of BookKeeper's programs (directories, traces); 0: from the clock")

// testSeed returns -seed, or a seed from the clock, and logs it so that a
// failing run can be replayed with -seed.
func testSeed(t *testing.T) int64 {
	seed := *seedFlag
	if seed == 0 {
		seed = time.Now().UnixNano() % 1_000_000
	}
	t.Logf("seed %d (replay with: go test ./interop/bookkeeper -run '%s' -seed %d)", seed, t.Name(), seed)
	return seed
}

// copyDir copies a directory: opening the directories with BookKeeper
// writes to them (RocksDB replays its logs, a journal is replayed).
func copyDir(t *testing.T, src string) string {
	dst := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// TestWriterFresh runs the writers with a new seed: BookKeeper writes the
// directories of every scenario and reads them back (after a crash, a copy
// of them; after the journal scenario, a copy in which its bookie replays
// the journal), the repository's read-only tools read them as the
// description says, and a copy of each is migrated, served, rolled back
// and read by BookKeeper again (migrateAndCheck).
func TestWriterFresh(t *testing.T) {
	p := Build(t)
	bin := buildBookieIndex(t)
	seed := testSeed(t)
	for i, scenario := range []string{"clean", "separate-index", "crash"} {
		t.Run(scenario, func(t *testing.T) {
			dir := t.TempDir()
			p.Run(t, "WriteBookie", "--scenario", scenario, "--seed", strconv.FormatInt(seed+int64(i), 10), "--out", dir)
			if scenario == "crash" {
				p.Run(t, "WriteBookie", "--verify", copyDir(t, dir))
			}
			checkDirs(t, dir)
			migrateAndCheck(t, bin, dir, p)
		})
	}
	t.Run("journal", func(t *testing.T) {
		dir := t.TempDir()
		p.Run(t, "JournalBookie", "--seed", strconv.FormatInt(seed+3, 10), "--out", dir)
		p.Run(t, "JournalBookie", "--verify", copyDir(t, dir))
		checkDirs(t, dir)
		migrateAndCheck(t, bin, dir, p)
	})
}

package check

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var (
	flipSeed    = flag.Int64("flip-seed", 0, "seed of TestCheckFlipsEveryFileKind (0: the time)")
	flipSamples = flag.Int("flip-samples", 0, "sampled offsets per large file kind (and per table block kind) of TestCheckFlipsEveryFileKind; 0: 64, 16 with -short; entry logs get 4 times as many")
	flipOnly    = flag.String("flip-kind", "", "only the file kinds of TestCheckFlipsEveryFileKind whose name contains this")
)

// The flip fixture: one ledger directory with its indexes in another
// directory (two LAYOUT copies), on a MemFS.
const (
	flipLedgerDir = "/data/ledgers"
	flipIndexDir  = "/data/index"
)

// flipEngine is a small engine: 1 KiB blocks and 256-byte index and filter
// partitions, so that a table has every kind of block, several of most.
// No compaction merges the tables flushed (Level0FileNumCompactionTrigger).
// AlwaysLoadFilters makes every lookup of an absent key read the filters,
// so that the reads below reach every filter partition.
func flipEngine() *lsm.Options {
	return &lsm.Options{WriteBufferSize: 64 << 10, TargetFileSizeBase: 64 << 10, BlockSize: 1 << 10, MetadataBlockSize: 256,
		BlockCacheSize: 1 << 20, AlwaysLoadFilters: true, Level0FileNumCompactionTrigger: 10}
}

func flipOptions(fs vfs.FS) *bookie.Options {
	return &bookie.Options{
		LedgerDirs: []string{flipLedgerDir}, IndexDirs: []string{flipIndexDir}, FS: fs,
		FlushInterval: -1, GCWaitTime: -1, LogSizeLimit: 64 << 10,
		WriteCacheSize: 4 << 20, ReadCacheSize: 1 << 20,
		GC:            bookie.GCOptions{CompactionRateByEntries: -1, CompactionRateByBytes: -1},
		Index:         &entrylocation.Options{Engine: flipEngine()},
		LedgersEngine: flipEngine(),
	}
}

// flipModel is what the fixture's storage must answer.
type flipModel struct {
	entries map[int64]map[int64][]byte // existing ledgers' entries
	deleted []int64                    // deleted ledgers
}

// newFlipFixture writes a storage on a MemFS: 16 ledgers over five
// checkpoints (several rotated logs, several tables in both indexes, the
// ledgers index churned by master keys and explicit LACs), rewritten
// entries (stale copies in the logs), two ledgers deleted and purged (range
// deletions in the location index), one deleted and written again, a
// compaction a crash interrupted (its marker). It returns the closed
// storage's files, every byte synced, and the model.
func newFlipFixture(t *testing.T) (*vfs.MemFS, *flipModel) {
	fs := vfs.NewMem()
	s, err := bookie.Open(flipOptions(fs))
	require.NoError(t, err)
	m := &flipModel{entries: map[int64]map[int64][]byte{}}
	add := func(l, e int64, v int) {
		p := storagetest.Payload(l, e, v)
		require.NoError(t, s.AddEntry(l, e, p))
		if m.entries[l] == nil {
			m.entries[l] = map[int64][]byte{}
		}
		m.entries[l][e] = p
	}
	const ledgers, perRound, rounds = 16, 40, 5
	for r := 0; r < rounds; r++ {
		for l := int64(1); l <= ledgers; l++ {
			for e := int64(r * perRound); e < int64((r+1)*perRound); e++ {
				add(l, e, 0)
			}
			require.NoError(t, s.SetMasterKey(l, bytes.Repeat([]byte{byte(l)}, 20)))
			require.NoError(t, s.SetExplicitLAC(l, bytes.Repeat([]byte{byte(r)}, 1500)))
		}
		require.NoError(t, s.Checkpoint())
	}
	for e := int64(0); e < 10; e++ {
		add(2, e, 1)
	}
	require.NoError(t, s.Checkpoint())
	for _, l := range []int64{5, 6, 7} {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
		delete(m.entries, l)
	}
	m.deleted = []int64{5, 6}
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	for e := int64(0); e < 20; e++ {
		add(7, e, 2)
	}
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	require.NoError(t, s.Close())
	require.NoError(t, writeMemFile(fs, filepath.Join(flipLedgerDir, "current", ondisk.CompactionMarkerName), ondisk.EncodeCompactionMarker(1)))
	return syncedCopy(t, fs), m
}

// syncedCopy returns a MemFS holding fs's files as they are, every byte
// synced (a storage does not sync every file it leaves, a WAL's
// synced-length marks for one, and a crash clone would drop them).
func syncedCopy(t *testing.T, fs *vfs.MemFS) *vfs.MemFS {
	out := vfs.NewMem()
	var walk func(dir string)
	walk = func(dir string) {
		names, err := fs.List(dir)
		require.NoError(t, err)
		require.NoError(t, out.MkdirAll(dir, 0o755))
		for _, n := range names {
			p := filepath.Join(dir, n)
			st, err := fs.Stat(p)
			require.NoError(t, err)
			if st.IsDir() {
				walk(p)
				continue
			}
			require.NoError(t, writeMemFile(out, p, readMemFile(t, fs, p)))
		}
		d, err := out.OpenDir(dir)
		require.NoError(t, err)
		require.NoError(t, d.Sync())
		require.NoError(t, d.Close())
	}
	walk("/data")
	return out
}

func readMemFile(t testing.TB, fs vfs.FS, path string) []byte {
	b, err := readFS(fs, path)
	require.NoError(t, err)
	return b
}

func readFS(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if n, err := f.ReadAt(b, 0); int64(n) != size {
		return nil, errors.Wrapf(err, "reading %s", path)
	}
	return b, nil
}

func writeMemFile(fs vfs.FS, path string, data []byte) error {
	f, err := fs.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.CombineErrors(err, f.Close())
}

// flipTarget is one byte to flip.
type flipTarget struct {
	kind, path string
	offset     int64
	// noMaps: in the directory without its ledgers maps.
	noMaps bool
}

// flipKinds classifies the fixture's files, and flipTargets picks the
// bytes to flip: every byte of a file of at most smallFile bytes; of
// larger ones, samples offsets per kind (entry logs, WALs), and per block
// kind of the tables (data, index partitions, top-level index, filter
// partitions, top-level filter index, range deletions, properties, each
// with its 5-byte trailer; the 88-byte footer whole).
const smallFile = 128

func flipKind(path string) string {
	base := filepath.Base(path)
	index := ""
	switch {
	case strings.HasPrefix(path, filepath.Join(flipIndexDir, "current", "locations")+"/"):
		index = "locations "
	case strings.HasPrefix(path, filepath.Join(flipIndexDir, "current", "ledgers")+"/"):
		index = "ledgers index "
	}
	switch {
	case base == ondisk.LayoutFileName && strings.HasPrefix(path, flipIndexDir):
		return "LAYOUT (index directory)"
	case base == ondisk.LayoutFileName:
		return "LAYOUT (ledger directory)"
	case base == entrylog.LastIDFileName:
		return "lastId"
	case base == ondisk.CompactionMarkerName:
		return "compaction marker"
	case index == "" && strings.HasSuffix(base, ".log"):
		return "entry log"
	case index == "" && strings.HasSuffix(base, ".ledgers"):
		return "ledgers map"
	case strings.HasSuffix(base, ".sst"):
		return index + "table"
	case strings.HasSuffix(base, ".log"):
		return index + "WAL"
	case strings.HasSuffix(base, ".synced"):
		return index + "synced length"
	case strings.HasPrefix(base, "MANIFEST-"):
		return index + "MANIFEST"
	}
	return index + base // CURRENT, LOCK, MERGE-OPERATOR
}

func flipTargets(t *testing.T, fs *vfs.MemFS, rng *rand.Rand, samples int) []flipTarget {
	var files []string
	var walk func(dir string)
	walk = func(dir string) {
		names, err := fs.List(dir)
		require.NoError(t, err)
		slices.Sort(names)
		for _, n := range names {
			p := filepath.Join(dir, n)
			st, err := fs.Stat(p)
			require.NoError(t, err)
			if st.IsDir() {
				walk(p)
			} else {
				files = append(files, p)
			}
		}
	}
	walk("/data")
	var out []flipTarget
	large := map[string][]flipTarget{} // candidates by kind: every byte of every large file
	for _, p := range files {
		kind := flipKind(p)
		st, err := fs.Stat(p)
		require.NoError(t, err)
		size := st.Size()
		switch {
		case size <= smallFile:
			for off := int64(0); off < size; off++ {
				out = append(out, flipTarget{kind: kind, path: p, offset: off})
			}
		case strings.HasSuffix(kind, "table"):
			tb, err := lsm.OpenTable(fs, p)
			require.NoError(t, err)
			blocks, err := tb.Blocks()
			require.NoError(t, err)
			require.NoError(t, tb.Close())
			for _, b := range blocks {
				bk := kind + ": " + b.Kind
				for off := int64(b.Offset); off < int64(b.Offset+b.Length)+5; off++ {
					large[bk] = append(large[bk], flipTarget{kind: bk, path: p, offset: off})
				}
			}
			for off := size - 88; off < size; off++ {
				out = append(out, flipTarget{kind: kind + ": footer", path: p, offset: off})
			}
		default:
			for off := int64(0); off < size; off++ {
				large[kind] = append(large[kind], flipTarget{kind: kind, path: p, offset: off})
			}
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(large)) {
		c := large[kind]
		n := samples
		if kind == "entry log" {
			n *= 4 // the file the issue is about
		}
		if len(c) <= n {
			out = append(out, c...)
			continue
		}
		for _, i := range rng.Perm(len(c))[:n] {
			out = append(out, c[i])
		}
	}
	return out
}

// flipOutcome is what one flip did.
type flipOutcome struct {
	target flipTarget
	xor    byte
	// checkErr is the check's error, or its problems; "" if it passed.
	check string
	// serve is how the storage failed (refused to open, a read failed, the
	// close failed); wrong a read that succeeded with a wrong answer.
	serve, wrong string
}

// serveReads opens the storage on fs as `serve` would and reads through
// it (flipReads), runs a forced garbage-collection cycle (which reads the
// ledgers maps, removes dead logs and compacts the rest) and reads again.
func serveReads(fs vfs.FS, m *flipModel) (failure, wrong string) {
	s, err := bookie.Open(flipOptions(fs))
	if err != nil {
		return "open: " + err.Error(), ""
	}
	defer func() {
		if err := s.Close(); err != nil && failure == "" && wrong == "" {
			failure = "close: " + err.Error()
		}
	}()
	if failure, wrong = flipReads(s, m); failure != "" || wrong != "" {
		return failure, wrong
	}
	if _, err := s.RunGC(bookie.GCRequest{Force: true}); err != nil {
		return "garbage collection: " + err.Error(), ""
	}
	return flipReads(s, m)
}

// flipReads reads a get of an absent entry of every existing ledger (with
// AlwaysLoadFilters, through the filters), every live entry, the last
// entry of every ledger, a get of every deleted ledger.
func flipReads(s *bookie.Storage, m *flipModel) (failure, wrong string) {
	ledgers := slices.Sorted(maps.Keys(m.entries))
	for _, l := range ledgers {
		last := slices.Max(slices.Collect(maps.Keys(m.entries[l])))
		for _, e := range []int64{last + 1, last + 1000} {
			_, err := s.GetEntry(l, e)
			switch {
			case err == nil:
				return "", fmt.Sprintf("entry %d of ledger %d: found, but it was never written", e, l)
			case !errors.Is(err, bookie.ErrNoEntry):
				return fmt.Sprintf("absent entry %d of ledger %d: %v", e, l, err), ""
			}
		}
	}
	for _, l := range ledgers {
		for _, e := range slices.Sorted(maps.Keys(m.entries[l])) {
			got, err := s.GetEntry(l, e)
			if err != nil {
				return fmt.Sprintf("entry %d of ledger %d: %v", e, l, err), ""
			}
			if !bytes.Equal(got, m.entries[l][e]) {
				return "", fmt.Sprintf("entry %d of ledger %d: %q, want %q", e, l, got, m.entries[l][e])
			}
		}
		want := slices.Max(slices.Collect(maps.Keys(m.entries[l])))
		e, got, err := s.GetLastEntry(l)
		if err != nil {
			return fmt.Sprintf("last entry of ledger %d: %v", l, err), ""
		}
		if e != want || !bytes.Equal(got, m.entries[l][want]) {
			return "", fmt.Sprintf("last entry of ledger %d: entry %d %q, want %d", l, e, got, want)
		}
	}
	for _, l := range m.deleted {
		if _, err := s.GetEntry(l, 0); err == nil {
			return "", fmt.Sprintf("deleted ledger %d: entry 0 found", l)
		} else if !errors.Is(err, bookie.ErrNoLedger) {
			return fmt.Sprintf("deleted ledger %d: %v", l, err), ""
		}
	}
	return "", ""
}

// checkFlip runs the check as `bookie-index check` does and returns "" if
// it passes, else what it found.
func checkFlip(fs vfs.FS) string {
	res, err := Directory(Options{LedgerDir: flipLedgerDir, IndexDir: flipIndexDir, FS: fs, Engine: flipEngine()})
	if err != nil {
		return "error: " + err.Error()
	}
	if res.Problems() == 0 {
		return ""
	}
	var lines []string
	for _, f := range res.Findings {
		if f.Kind.Problem() {
			lines = append(lines, f.String())
		}
	}
	return strings.Join(lines, "; ")
}

// flipHarmless says which flips may pass the check: bytes no reader reads,
// or whose damage the storage tolerates without a wrong answer. Each is
// documented in docs/format.md.
func flipHarmless(o flipOutcome) bool {
	switch k := o.target.kind; {
	case strings.HasPrefix(k, "entry log"):
		// The header's zero padding (bytes 20 to 1023): no checksum
		// covers it and no reader reads it.
		return o.target.offset >= 20 && o.target.offset < entrylog.HeaderSize
	case strings.HasSuffix(k, "LOCK"):
		// The process id of the last holder, for messages only.
		return true
	case strings.HasSuffix(k, "synced length"):
		// A mark that fails its checksum means "synced length unknown";
		// with every log replaying to its end, nothing depends on it.
		return true
	}
	return false
}

// TestCheckFlipsEveryFileKind flips one byte at a time, on a copy of a
// populated storage directory, across every kind of file it holds (see
// newFlipFixture and flipTargets), and runs both the check and the storage
// (open as `serve` does, then every read of serveReads). The check must
// fail wherever the storage refuses to open or a read fails; a read that
// succeeds with a wrong answer is a bug of the storage. The check must
// also fail for every flip but those flipHarmless allows. The flipped
// byte is XORed with a random non-zero byte; the seed is logged.
func TestCheckFlipsEveryFileKind(t *testing.T) {
	seed := *flipSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (-flip-seed to repeat)", seed)
	rng := rand.New(rand.NewSource(seed))
	samples := *flipSamples
	if samples == 0 {
		samples = 64
		if testing.Short() {
			samples = 16
		}
	}
	base, model := newFlipFixture(t)
	require.Empty(t, checkFlip(base), "the fixture checks clean")
	failure, wrong := serveReads(base.CrashClone(vfs.CrashOptions{}), model)
	require.Empty(t, failure+wrong, "the fixture reads back")

	targets := flipTargets(t, base, rng, samples)
	// And the entry logs of the same directory after a crash lost the
	// ledgers maps (they are written lazily): the check must tell damage
	// from a torn tail without them, and the collector rebuilds them by
	// scanning the logs.
	noMaps := base.CrashClone(vfs.CrashOptions{})
	ids, err := entrylog.ListLogs(noMaps, filepath.Join(flipLedgerDir, "current"))
	require.NoError(t, err)
	for _, id := range ids {
		require.NoError(t, noMaps.Remove(filepath.Join(flipLedgerDir, "current", entrylog.MetadataFileName(id))))
	}
	require.Empty(t, checkFlip(noMaps), "without the maps, the fixture checks clean")
	for _, x := range flipTargets(t, noMaps, rng, samples) {
		if x.kind == "entry log" {
			x.kind, x.noMaps = "entry log (maps lost)", true
			targets = append(targets, x)
		}
	}
	if *flipOnly != "" {
		targets = slices.DeleteFunc(targets, func(x flipTarget) bool { return !strings.Contains(x.kind, *flipOnly) })
	}
	if testing.Short() {
		// Every byte of the small files is many rounds (the ledgers maps,
		// the manifests): a sample of them too.
		rng.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
		targets = targets[:min(len(targets), 200)]
	}
	xors := make([]byte, len(targets))
	for i := range xors {
		xors[i] = byte(1 + rng.Intn(255))
	}

	outcomes := make([]flipOutcome, len(targets))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				from := base
				if targets[i].noMaps {
					from = noMaps
				}
				outcomes[i] = runFlip(from, model, targets[i], xors[i])
			}
		}()
	}
	for i := range targets {
		next <- i
	}
	close(next)
	wg.Wait()

	type tally struct{ rounds, checkFails, serveFails, harmless int }
	byKind := map[string]*tally{}
	for _, o := range outcomes {
		k := byKind[o.target.kind]
		if k == nil {
			k = &tally{}
			byKind[o.target.kind] = k
		}
		k.rounds++
		what := fmt.Sprintf("%s byte %d ^ %#02x (%s)", o.target.path, o.target.offset, o.xor, o.target.kind)
		if o.check != "" {
			k.checkFails++
		}
		if o.serve != "" {
			k.serveFails++
		}
		switch {
		case o.wrong != "":
			t.Errorf("%s: the storage answers wrong: %s (check: %q)", what, o.wrong, o.check)
		case o.serve != "" && o.check == "":
			t.Errorf("%s: the storage fails (%s) but the check passes", what, o.serve)
		case o.check == "" && !flipHarmless(o):
			t.Errorf("%s: the check passes (the storage: %q)", what, o.serve)
		case o.check == "":
			k.harmless++
		}
	}
	kinds := slices.Sorted(maps.Keys(byKind))
	t.Logf("%-55s %7s %11s %11s %9s", "file kind", "flips", "check fails", "serve fails", "harmless")
	for _, kind := range kinds {
		k := byKind[kind]
		t.Logf("%-55s %7d %11d %11d %9d", kind, k.rounds, k.checkFails, k.serveFails, k.harmless)
	}
}

func runFlip(base *vfs.MemFS, m *flipModel, x flipTarget, xor byte) (o flipOutcome) {
	o = flipOutcome{target: x, xor: xor}
	fs := base.CrashClone(vfs.CrashOptions{})
	data, err := readFS(fs, x.path)
	if err == nil {
		data[x.offset] ^= xor
		err = writeMemFile(fs, x.path, data)
	}
	if err != nil {
		o.serve = "flip: " + err.Error()
		return o
	}
	o.check = checkFlip(fs)
	o.serve, o.wrong = serveReads(fs, m)
	return o
}

package manifest

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

const testDir = "db"

func newTestFS(t *testing.T) *vfs.MemFS {
	fs := vfs.NewMem()
	require.NoError(t, fs.MkdirAll(testDir, 0o755))
	return fs
}

func mustCreate(t *testing.T, fs vfs.FS, opts *Options) *VersionSet {
	t.Helper()
	vs, err := Create(fs, testDir, opts)
	require.NoError(t, err)
	return vs
}

func mustRecover(t *testing.T, fs vfs.FS, opts *Options) *VersionSet {
	t.Helper()
	vs, err := Recover(fs, testDir, opts)
	require.NoError(t, err)
	return vs
}

func listDir(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	names, err := fs.List(testDir)
	require.NoError(t, err)
	return names
}

// workload drives a VersionSet through flush-, compaction- and move-like
// edits that are always valid. Every table gets its own key range (from its
// file number), so L1+ levels stay disjoint whatever moves where.
type workload struct {
	rng *rand.Rand
	seq base.SeqNum
}

func (w *workload) newTable(vs *VersionSet) *TableMeta {
	fileNum := vs.NextFileNum()
	w.seq += base.SeqNum(1 + w.rng.Intn(100))
	lo, hi := fmt.Sprintf("k%08d.a", fileNum), fmt.Sprintf("k%08d.z", fileNum)
	if w.rng.Intn(4) == 0 {
		return tableExcl(fileNum, lo, hi, w.seq)
	}
	return table(fileNum, lo, hi, w.seq)
}

// nextEdit returns a random edit valid against the current version.
func (w *workload) nextEdit(vs *VersionSet) *VersionEdit {
	v := vs.Current()
	defer v.Unref()
	e := &VersionEdit{}
	level := w.rng.Intn(NumLevels - 1)
	switch op := w.rng.Intn(10); {
	case op < 4 || v.NumTables(level) == 0: // flush, with a new WAL
		e.LogNumber = vs.NextFileNum()
		for range 1 + w.rng.Intn(2) {
			e.NewTables = append(e.NewTables, NewTable{Level: 0, Meta: w.newTable(vs)})
		}
		w.seq += 10
		vs.SetLastSeqNum(w.seq)
	case op < 7: // compact some of level into level+1
		for _, t := range v.Tables(level) {
			if w.rng.Intn(2) == 0 {
				e.DeletedTables = append(e.DeletedTables, DeletedTable{Level: level, FileNum: t.FileNum})
			}
		}
		for range w.rng.Intn(3) {
			e.NewTables = append(e.NewTables, NewTable{Level: level + 1, Meta: w.newTable(vs)})
		}
		last := v.Tables(level)[v.NumTables(level)-1]
		e.CompactPointers = []CompactPointer{{Level: level, Key: last.Largest.Clone()}}
	case op < 9: // move a table down
		t := v.Tables(level)[w.rng.Intn(v.NumTables(level))]
		e.DeletedTables = []DeletedTable{{Level: level, FileNum: t.FileNum}}
		e.NewTables = []NewTable{{Level: level + 1, Meta: t}}
	default: // drop a table
		t := v.Tables(level)[w.rng.Intn(v.NumTables(level))]
		e.DeletedTables = []DeletedTable{{Level: level, FileNum: t.FileNum}}
	}
	return e
}

// checkRecovered checks what a recovered VersionSet must satisfy beyond
// matching the expected state: no file number in use can be handed out.
func checkRecovered(t *testing.T, vs *VersionSet, fs vfs.FS, want string) {
	t.Helper()
	require.Equal(t, want, stateString(vs))
	v := vs.Current()
	defer v.Unref()
	maxUsed := max(vs.LogNumber(), vs.ManifestFileNum())
	for level := range NumLevels {
		for _, tm := range v.Tables(level) {
			maxUsed = max(maxUsed, tm.FileNum)
		}
	}
	next := vs.NextFileNum()
	require.Greater(t, next, maxUsed)
	vs.MarkFileNumUsed(next) // give it back for the caller's workload
	// Exactly one manifest is left, the one CURRENT names.
	var manifests []string
	for _, name := range listDir(t, fs) {
		if kind, _, _ := ParseFileName(name); kind == FileKindManifest || kind == FileKindTemp {
			manifests = append(manifests, name)
		}
	}
	require.Equal(t, []string{FileName(FileKindManifest, vs.ManifestFileNum())}, manifests)
}

func TestCreateRecoverRoundTrip(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, nil)
	require.Equal(t, uint64(1), vs.ManifestFileNum())
	require.Equal(t, []string{"000001.synced", "CURRENT", "MANIFEST-000001"}, listDir(t, fs))
	require.Equal(t, uint64(2), vs.NextFileNum())

	w := &workload{rng: rand.New(rand.NewSource(5))}
	for range 50 {
		require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
	}
	vs.SetLastSeqNum(w.seq + 1000) // not recorded: no edit since
	want := stateString(vs)
	require.NoError(t, vs.Close())

	vs2 := mustRecover(t, fs, nil)
	require.NotEqual(t, want, stateString(vs2), "LastSeqNum set after the last edit is not durable")
	vs2.SetLastSeqNum(w.seq + 1000)
	require.Equal(t, want, stateString(vs2))
	require.Greater(t, vs2.ManifestFileNum(), uint64(1))
	// Recover rotated: the old manifest is gone.
	checkRecovered(t, vs2, fs, want)
	require.NoError(t, vs2.Close())
}

func TestCreateExisting(t *testing.T) {
	fs := newTestFS(t)
	require.NoError(t, mustCreate(t, fs, nil).Close())
	_, err := Create(fs, testDir, nil)
	require.ErrorContains(t, err, "already holds a database")
	_, err = Create(fs, testDir, &Options{ReadOnly: true})
	require.Error(t, err)
}

func TestLogAndApplyRejectsWithoutBreaking(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, nil)
	require.NoError(t, vs.LogAndApply(&VersionEdit{LogNumber: 9, NewTables: []NewTable{{1, table(3, "a", "c", 1)}}}))
	require.ErrorContains(t, vs.LogAndApply(&VersionEdit{DeletedTables: []DeletedTable{{2, 3}}}), "not in L2")
	require.ErrorContains(t, vs.LogAndApply(&VersionEdit{NewTables: []NewTable{{1, table(4, "b", "d", 1)}}}), "overlaps")
	require.ErrorContains(t, vs.LogAndApply(&VersionEdit{LogNumber: 8}), "older than the current log number 9")
	require.NoError(t, vs.LogAndApply(&VersionEdit{LogNumber: 10, NewTables: []NewTable{{1, table(5, "d", "e", 2)}}}))
	want := stateString(vs)
	require.NoError(t, vs.Close())
	require.True(t, errors.Is(vs.LogAndApply(&VersionEdit{}), base.ErrClosed))
	require.True(t, errors.Is(vs.Close(), base.ErrClosed))
	vs = mustRecover(t, fs, nil)
	require.Equal(t, want, stateString(vs))
	require.Equal(t, uint64(10), vs.LogNumber())
	require.NoError(t, vs.Close())
}

// TestLogAndApplyCounters checks that the manifest records counters that
// cover everything an edit mentions.
func TestLogAndApplyCounters(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, nil)
	vs.MarkFileNumUsed(100) // a WAL found at open
	vs.MarkFileNumUsed(50)  // no effect: already covered
	require.Equal(t, uint64(101), vs.NextFileNum())
	// The edit's table postdates the published seqnum and its number was
	// never allocated: both counters rise to cover it.
	vs.SetLastSeqNum(5)
	require.NoError(t, vs.LogAndApply(&VersionEdit{NewTables: []NewTable{{0, table(500, "a", "b", 70)}}}))
	require.Equal(t, base.SeqNum(70), vs.LastSeqNum())
	// An edit's own LastSeqNum raises the counter too, never lowers it.
	require.NoError(t, vs.LogAndApply(&VersionEdit{LastSeqNum: 90}))
	require.Equal(t, base.SeqNum(90), vs.LastSeqNum())
	require.NoError(t, vs.LogAndApply(&VersionEdit{LastSeqNum: 80}))
	require.Equal(t, base.SeqNum(90), vs.LastSeqNum())
	require.NoError(t, vs.Close())
	vs = mustRecover(t, fs, nil)
	require.Equal(t, base.SeqNum(90), vs.LastSeqNum())
	require.Greater(t, vs.NextFileNum(), uint64(501))
	require.NoError(t, vs.Close())
}

func TestRefsAndObsoleteTables(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, nil)
	t1, t2, t3 := table(3, "a", "b", 1), table(4, "c", "d", 2), table(5, "e", "f", 3)
	require.NoError(t, vs.LogAndApply(&VersionEdit{NewTables: []NewTable{{0, t1}, {0, t2}}}))
	v1 := vs.Current()
	require.Equal(t, map[uint64]bool{3: true, 4: true}, vs.LiveTables())

	// Compact t1 into t3; move t2 down. v1 still holds t1.
	require.NoError(t, vs.LogAndApply(&VersionEdit{
		DeletedTables: []DeletedTable{{0, 3}, {0, 4}},
		NewTables:     []NewTable{{1, t3}, {1, t2}},
	}))
	require.Equal(t, map[uint64]bool{3: true, 4: true, 5: true}, vs.LiveTables())
	require.Empty(t, vs.TakeObsoleteTables())
	v2 := vs.Current()
	v2.Ref()
	v2.Unref()

	// Another edit while v1 and v2 are held: v2 holds t3, v1 holds t1.
	require.NoError(t, vs.LogAndApply(&VersionEdit{DeletedTables: []DeletedTable{{1, 5}}}))
	require.Empty(t, vs.TakeObsoleteTables())

	v1.Unref()
	require.Equal(t, []*TableMeta{t1}, vs.TakeObsoleteTables())
	require.Empty(t, vs.TakeObsoleteTables(), "handed out once")
	require.Equal(t, map[uint64]bool{4: true, 5: true}, vs.LiveTables())

	v2.Unref()
	require.Equal(t, []*TableMeta{t3}, vs.TakeObsoleteTables())
	require.Equal(t, map[uint64]bool{4: true}, vs.LiveTables())
	// A version that was never installed tells nobody anything.
	cur := vs.Current()
	loose, err := cur.Apply(&VersionEdit{DeletedTables: []DeletedTable{{1, 4}}})
	require.NoError(t, err)
	cur.Unref()
	loose.Unref()
	require.Empty(t, vs.TakeObsoleteTables())
	require.NoError(t, vs.Close())
}

// TestConcurrentReaders runs readers that take and drop versions while
// edits are applied (with frequent rotations), then checks the obsolete
// accounting: every table ever added ends up live or obsolete, once.
func TestConcurrentReaders(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, &Options{MaxManifestSize: 2048})
	w := &workload{rng: rand.New(rand.NewSource(6))}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var obsolete []uint64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := vs.Current()
				live := vs.LiveTables()
				for level := range NumLevels {
					for _, tm := range v.Overlaps(level, nil, nil, false) {
						if !live[tm.FileNum] {
							panic(fmt.Sprintf("table %d of a referenced version is not live", tm.FileNum))
						}
					}
					_ = v.LevelBytes(level)
				}
				v.Unref()
				taken := vs.TakeObsoleteTables()
				mu.Lock()
				obsolete = append(obsolete, fileNums(taken)...)
				mu.Unlock()
			}
		}()
	}
	added := map[uint64]bool{}
	for range iterations(300) {
		e := w.nextEdit(vs)
		for _, n := range e.NewTables {
			added[n.Meta.FileNum] = true
		}
		require.NoError(t, vs.LogAndApply(e))
	}
	close(stop)
	wg.Wait()
	obsolete = append(obsolete, fileNums(vs.TakeObsoleteTables())...)
	v := vs.Current()
	defer v.Unref()
	current := map[uint64]bool{}
	for level := range NumLevels {
		for _, tm := range v.Tables(level) {
			current[tm.FileNum] = true
		}
	}
	require.Equal(t, current, vs.LiveTables())
	for _, fileNum := range obsolete {
		require.True(t, added[fileNum])
		require.False(t, current[fileNum], "table %d is live and obsolete", fileNum)
		delete(added, fileNum) // also catches a table handed out twice
	}
	require.Equal(t, current, added)
	require.NoError(t, vs.Close())
}

// TestCrashRandom runs random edits with frequent manifest rotations and,
// at random points, simulates a power loss: the recovered state must be
// exactly that of the last successful LogAndApply. Work then continues on
// the recovered copy.
func TestCrashRandom(t *testing.T) {
	for seed := range int64(iterations(4)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			opts := &Options{MaxManifestSize: int64(512 + rng.Intn(4096))}
			fs := newTestFS(t)
			vs := mustCreate(t, fs, opts)
			w := &workload{rng: rng}
			crashes := 0
			for range 150 {
				require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
				if rng.Intn(10) != 0 {
					continue
				}
				crashes++
				want := stateString(vs)
				crashed := fs.CrashClone(vfs.CrashOptions{Rand: rng, KeepUnsyncedTail: true})
				recovered := mustRecover(t, crashed, opts)
				checkRecovered(t, recovered, crashed, want)
				if rng.Intn(2) == 0 {
					require.NoError(t, vs.Close())
					fs, vs = crashed, recovered
				} else {
					require.NoError(t, recovered.Close())
				}
			}
			require.Greater(t, crashes, 5)
			require.NoError(t, vs.Close())
		})
	}
}

// injectionRun prepares a database, then runs op with the injector failing
// operation number failAt (counting from the start of op). It returns the
// state before op, the state after op if it succeeded, op's error, the
// underlying MemFS and whether op reached operation failAt.
type injectionRun struct {
	before, after string
	err           error
	mem           *vfs.MemFS
	injected      bool
}

func runWithInjection(t *testing.T, failAt int64, opts *Options, op injectedOp) injectionRun {
	t.Helper()
	mem := newTestFS(t)
	inj := vfs.OnIndex(failAt)
	toggle := vfs.NewToggle(inj)
	fs := vfs.NewErrorFS(mem, toggle)
	vs := mustCreate(t, fs, opts)
	w := &workload{rng: rand.New(rand.NewSource(7))}
	for range 10 {
		require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
	}
	run := injectionRun{before: stateString(vs), mem: mem}
	if op.setup != nil {
		op.setup(vs)
	}
	toggle.On()
	next, err := op.run(fs, vs)
	toggle.Off()
	run.err, run.injected = err, inj.Ops() > failAt
	if err == nil {
		run.after = stateString(next)
	}
	return run
}

// injectedOp is an operation under test: setup runs without injection,
// run with it.
type injectedOp struct {
	setup func(vs *VersionSet)
	run   func(fs vfs.FS, vs *VersionSet) (*VersionSet, error)
}

// checkInjection fails every I/O operation of op in turn. Whenever op
// succeeds, a crash must recover the state after it. Whenever it fails, the
// state before it, or the state after it if the failure came once the edit
// was durable (writing the synced-length mark after the manifest's Sync).
func checkInjection(t *testing.T, opts *Options, op injectedOp) {
	success := runWithInjection(t, math.MaxInt64, opts, op)
	require.NoError(t, success.err)
	failures := 0
	for failAt := int64(0); ; failAt++ {
		run := runWithInjection(t, failAt, opts, op)
		if !run.injected {
			require.NoError(t, run.err)
			require.Greater(t, failures, 0, "op never failed")
			return
		}
		want := run.before
		if run.err == nil {
			want = run.after
		} else {
			failures++
			require.True(t, errors.Is(run.err, vfs.ErrInjected), "%v", run.err)
		}
		crashed := run.mem.CrashClone(vfs.CrashOptions{})
		recovered, err := Recover(crashed, testDir, opts)
		require.NoError(t, err, "failing op %d\n%s", failAt, run.mem)
		if run.err != nil && stateString(recovered) == success.after {
			want = success.after
		}
		checkRecovered(t, recovered, crashed, want)
		require.NoError(t, recovered.Close())
	}
}

func TestInjectLogAndApply(t *testing.T) {
	edit := &VersionEdit{LogNumber: 1000, NewTables: []NewTable{{0, table(1000, "x", "y", 99999)}}}
	logAndApply := injectedOp{run: func(fs vfs.FS, vs *VersionSet) (*VersionSet, error) {
		err := vs.LogAndApply(edit)
		if err != nil {
			// Sticky: nothing more is written.
			require.Equal(t, err, vs.LogAndApply(&VersionEdit{}))
		}
		return vs, err
	}}
	t.Run("append", func(t *testing.T) { checkInjection(t, nil, logAndApply) })
	t.Run("rotate", func(t *testing.T) { checkInjection(t, &Options{MaxManifestSize: 1}, logAndApply) })
}

func TestInjectRecover(t *testing.T) {
	checkInjection(t, nil, injectedOp{
		setup: func(vs *VersionSet) { require.NoError(t, vs.Close()) },
		run: func(fs vfs.FS, _ *VersionSet) (*VersionSet, error) {
			return Recover(fs, testDir, nil)
		},
	})
}

func TestInjectCreate(t *testing.T) {
	failures := 0
	for failAt := int64(0); ; failAt++ {
		mem := newTestFS(t)
		inj := vfs.OnIndex(failAt)
		vs, err := Create(vfs.NewErrorFS(mem, inj), testDir, nil)
		if inj.Ops() <= failAt {
			require.NoError(t, err)
			require.Greater(t, failures, 5)
			return
		}
		crashed := mem.CrashClone(vfs.CrashOptions{})
		if err == nil {
			// The failure came after the commit point (closing the
			// directory handle): the database must exist.
			require.NoError(t, vs.Close())
			require.NoError(t, mustRecover(t, crashed, nil).Close())
			continue
		}
		failures++
		require.True(t, errors.Is(err, vfs.ErrInjected), "%v", err)
		require.Nil(t, vs)
		// The database never existed.
		_, err = Recover(crashed, testDir, nil)
		require.True(t, errors.Is(err, os.ErrNotExist), "failing op %d: %v", failAt, err)
	}
}

// TestTornUnsyncedTail fails the sync of an appended edit and crashes with
// a random part of the unsynced bytes surviving: recovery gives the state
// before the edit, or after it if the whole record survived.
func TestTornUnsyncedTail(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	outcomes := map[string]int{}
	for i := range 40 {
		mem := newTestFS(t)
		w := &workload{rng: rng}
		vs := mustCreate(t, mem, nil)
		require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
		before := stateString(vs)
		edit := w.nextEdit(vs)
		cur := vs.Current()
		after, err := cur.Apply(edit)
		require.NoError(t, err)
		cur.Unref()
		require.NoError(t, vs.Close())

		inj := vfs.NewToggle(vfs.OnOp(vfs.OpSync, "MANIFEST"))
		vs = mustRecover(t, vfs.NewErrorFS(mem, inj), nil)
		inj.On()
		require.True(t, errors.Is(vs.LogAndApply(edit), vfs.ErrInjected))

		// Even trials keep the whole unsynced record, odd ones a random
		// prefix of it (rarely all).
		crashOpts := vfs.CrashOptions{KeepUnsyncedTail: true}
		if i%2 == 1 {
			crashOpts.Rand = rng
		}
		crashed := mem.CrashClone(crashOpts)
		recovered := mustRecover(t, crashed, nil)
		v := recovered.Current()
		if v.String() == after.String() {
			outcomes["after"]++
		} else {
			require.Equal(t, before, stateString(recovered))
			outcomes["before"]++
		}
		v.Unref()
		require.NoError(t, recovered.Close())
	}
	require.Greater(t, outcomes["before"], 10)
	require.Greater(t, outcomes["after"], 10)
}

// rewriteFile replaces a MemFS file's bytes (durably) with f(old bytes).
func rewriteFile(t *testing.T, fs vfs.FS, name string, f func([]byte) []byte) {
	t.Helper()
	writeFile(t, fs, name, f(readFile(t, fs, name)))
}

func readFile(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	data := make([]byte, size)
	_, err = f.ReadAt(data, 0)
	if err == io.EOF {
		err = nil
	}
	require.NoError(t, err)
	return data
}

// manifestWithEdits creates a database and applies n edits without
// rotating; it returns the state after each edit and the manifest length
// before the last one.
func manifestWithEdits(t *testing.T, n int) (fs *vfs.MemFS, states []string, lastStart int64) {
	fs = newTestFS(t)
	vs := mustCreate(t, fs, nil)
	w := &workload{rng: rand.New(rand.NewSource(9))}
	for range n {
		lastStart = readFileSize(t, fs, "db/MANIFEST-000001")
		require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
		states = append(states, stateString(vs))
	}
	require.NoError(t, vs.Close())
	return fs, states, lastStart
}

func readFileSize(t *testing.T, fs vfs.FS, name string) int64 {
	info, err := fs.Stat(name)
	require.NoError(t, err)
	return info.Size()
}

// TestTornTailDropped cuts the last record short or appends garbage, with
// the synced-length mark of the edit before the last: the last edit's
// LogAndApply never returned (its mark was never written), so the damage is
// a torn tail and the state before the edit comes back.
func TestTornTailDropped(t *testing.T) {
	fs, states, lastStart := manifestWithEdits(t, 10)
	size := readFileSize(t, fs, "db/MANIFEST-000001")
	dropLastMark := func(b []byte) []byte { return b[:len(b)-record.SyncedMarkSize] }
	for cut := lastStart; cut < size; cut += max(1, (size-lastStart)/7) {
		clone := fs.CrashClone(vfs.CrashOptions{})
		rewriteFile(t, clone, "db/MANIFEST-000001", func(b []byte) []byte { return b[:cut] })
		rewriteFile(t, clone, "db/000001.synced", dropLastMark)
		vs := mustRecover(t, clone, nil)
		require.Equal(t, states[len(states)-2], stateString(vs), "cut at %d of %d", cut, size)
		info := vs.RecoveryInfo()
		require.True(t, info.Complete)
		require.Equal(t, lastStart, info.SyncedLength)
		require.Equal(t, lastStart, info.ValidLength)
		require.NoError(t, vs.Close())
	}
	// Garbage after the last record is a torn tail too.
	rewriteFile(t, fs, "db/MANIFEST-000001", func(b []byte) []byte { return append(b, 0xde, 0xad, 0xbe, 0xef) })
	vs := mustRecover(t, fs, nil)
	require.Equal(t, states[len(states)-1], stateString(vs))
	require.Equal(t, int64(4), vs.RecoveryInfo().TailBytes)
	require.NoError(t, vs.Close())
}

// TestSyncedLastRecordDamaged flips a byte at the start, middle and end of
// the last record, and cuts it short, with its mark in place: the edit was
// synced, so Recover must fail naming the manifest and the offset, and
// write nothing. The test fails on a reader that takes any bad tail for a
// torn write.
func TestSyncedLastRecordDamaged(t *testing.T) {
	fs, _, lastStart := manifestWithEdits(t, 10)
	size := readFileSize(t, fs, "db/MANIFEST-000001")
	damages := map[string]func([]byte) []byte{
		"flip start":  func(b []byte) []byte { b[lastStart] ^= 0x01; return b },
		"flip middle": func(b []byte) []byte { b[(lastStart+size)/2] ^= 0x01; return b },
		"flip end":    func(b []byte) []byte { b[size-1] ^= 0x01; return b },
		"cut":         func(b []byte) []byte { return b[:size-3] },
	}
	for name, damage := range damages {
		clone := fs.CrashClone(vfs.CrashOptions{})
		rewriteFile(t, clone, "db/MANIFEST-000001", damage)
		before := listDir(t, clone)
		_, err := Recover(clone, testDir, nil)
		require.Error(t, err, name)
		require.True(t, errors.Is(err, base.ErrCorruption), "%s: %v", name, err)
		require.ErrorContains(t, err, "db/MANIFEST-000001")
		require.ErrorContains(t, err, fmt.Sprintf("corruption at offset %d, within the %d bytes", lastStart, size))
		require.Equal(t, before, listDir(t, clone), name)
	}
}

// TestNoMarkDropsTailWithoutProof removes the synced-length file: a damaged
// last record is dropped as before marks existed, but the manifest does not
// claim to be complete, and orphan tables go to lost/ instead of staying
// for deletion.
func TestNoMarkDropsTailWithoutProof(t *testing.T) {
	fs, states, lastStart := manifestWithEdits(t, 10)
	rewriteFile(t, fs, "db/MANIFEST-000001", func(b []byte) []byte { b[lastStart+3] ^= 0x01; return b })
	require.NoError(t, fs.Remove("db/000001.synced"))
	writeFile(t, fs, "db/999999.sst", []byte("orphan"))
	vs := mustRecover(t, fs, nil)
	require.Equal(t, states[len(states)-2], stateString(vs))
	info := vs.RecoveryInfo()
	require.False(t, info.Complete)
	require.False(t, info.SyncedLengthKnown)
	require.Equal(t, lastStart, info.ValidLength)
	require.Greater(t, info.TailBytes, int64(0))
	require.Contains(t, info.TailProblem, "checksum mismatch")
	require.Equal(t, []uint64{999999}, info.LostTables)
	require.Empty(t, info.OrphanTables)
	require.NotContains(t, listDir(t, fs), "999999.sst")
	names, err := ListLost(fs, testDir)
	require.NoError(t, err)
	require.Equal(t, []string{"999999.sst"}, names)
	require.NoError(t, vs.Close())
}

// TestOrphansOfCompleteManifestStay checks that with a complete manifest an
// orphan table is reported and left where it is (the engine deletes it).
func TestOrphansOfCompleteManifestStay(t *testing.T) {
	fs, _, _ := manifestWithEdits(t, 3)
	writeFile(t, fs, "db/999999.sst", []byte("orphan"))
	vs := mustRecover(t, fs, nil)
	info := vs.RecoveryInfo()
	require.True(t, info.Complete)
	require.Equal(t, []uint64{999999}, info.OrphanTables)
	require.Contains(t, listDir(t, fs), "999999.sst")
	require.NoError(t, vs.Close())
}

// TestCorruptionNamesManifest flips each byte before the last record: the
// damage is followed by a valid record, so it is corruption, not a tail.
func TestCorruptionNamesManifest(t *testing.T) {
	fs, _, lastStart := manifestWithEdits(t, 6)
	for off := int64(0); off < lastStart; off++ {
		clone := fs.CrashClone(vfs.CrashOptions{})
		rewriteFile(t, clone, "db/MANIFEST-000001", func(b []byte) []byte { b[off] ^= 0x40; return b })
		_, err := Recover(clone, testDir, nil)
		require.Error(t, err, "flipped byte %d", off)
		require.True(t, errors.Is(err, base.ErrCorruption), "flipped byte %d: %v", off, err)
		require.Contains(t, err.Error(), "db/MANIFEST-000001")
		// Nothing was written: CURRENT still names the damaged manifest.
		require.Equal(t, []string{"000001.synced", "CURRENT", "MANIFEST-000001"}, listDir(t, clone))
	}
}

func TestRecoverErrors(t *testing.T) {
	t.Run("no CURRENT", func(t *testing.T) {
		_, err := Recover(newTestFS(t), testDir, nil)
		require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
		require.False(t, errors.Is(err, base.ErrCorruption))
		require.ErrorContains(t, err, "no database in db")
	})
	t.Run("no manifest", func(t *testing.T) {
		fs := newTestFS(t)
		require.NoError(t, mustCreate(t, fs, nil).Close())
		require.NoError(t, fs.Remove("db/MANIFEST-000001"))
		_, err := Recover(fs, testDir, nil)
		require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
		require.False(t, errors.Is(err, os.ErrNotExist), "%v", err)
		require.ErrorContains(t, err, "CURRENT names db/MANIFEST-000001, which is missing")
	})
	for _, content := range []string{"", "MANIFEST-000001", "MANIFEST-1\n", "000001.sst\n", "MANIFEST-000001\nx"} {
		t.Run(fmt.Sprintf("CURRENT %q", content), func(t *testing.T) {
			fs := newTestFS(t)
			require.NoError(t, mustCreate(t, fs, nil).Close())
			rewriteFile(t, fs, "db/CURRENT", func([]byte) []byte { return []byte(content) })
			_, err := Recover(fs, testDir, nil)
			require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
			require.ErrorContains(t, err, "db/CURRENT holds")
		})
	}
	t.Run("empty manifest", func(t *testing.T) {
		fs := newTestFS(t)
		require.NoError(t, mustCreate(t, fs, nil).Close())
		rewriteFile(t, fs, "db/MANIFEST-000001", func([]byte) []byte { return nil })
		_, err := Recover(fs, testDir, nil)
		require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
		// The mark says the snapshot was synced: its loss is corruption.
		require.ErrorContains(t, err, "corruption at offset 0, within the")
	})
	t.Run("edit that does not apply", func(t *testing.T) {
		fs := newTestFS(t)
		require.NoError(t, mustCreate(t, fs, nil).Close())
		// Append a well-formed record deleting a table that is not there.
		rewriteFile(t, fs, "db/MANIFEST-000001", func(b []byte) []byte {
			buf := bytes.NewBuffer(b)
			w := record.NewWriterAt(buf, int64(len(b)))
			_, err := w.WriteRecord((&VersionEdit{DeletedTables: []DeletedTable{{3, 77}}}).Encode(nil))
			require.NoError(t, err)
			require.NoError(t, w.Flush())
			return buf.Bytes()
		})
		_, err := Recover(fs, testDir, nil)
		require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
		require.ErrorContains(t, err, "db/MANIFEST-000001: edit 1 (at or after offset ")
		require.ErrorContains(t, err, "manifest: deleted table 000077 is not in L3")
	})
}

func TestReadOnly(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, nil)
	require.NoError(t, vs.LogAndApply(&VersionEdit{NewTables: []NewTable{{0, table(2, "a", "b", 1)}}}))
	want := stateString(vs)
	require.NoError(t, vs.Close())
	// Leftovers a read-only open must not touch.
	rewriteFile(t, fs, "db/MANIFEST-000001", func(b []byte) []byte { return b })
	f, err := fs.Create("db/000009.tmp")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	names := listDir(t, fs)

	ro := mustRecover(t, fs, &Options{ReadOnly: true})
	require.Equal(t, want, stateString(ro))
	require.Equal(t, uint64(1), ro.ManifestFileNum())
	require.ErrorContains(t, ro.LogAndApply(&VersionEdit{}), "read-only")
	require.NoError(t, ro.Close())
	require.Equal(t, names, listDir(t, fs))

	// A writable open removes the leftovers.
	rw := mustRecover(t, fs, nil)
	checkRecovered(t, rw, fs, want)
	require.NoError(t, rw.Close())
}

func TestRotationBySize(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, &Options{MaxManifestSize: 4096})
	w := &workload{rng: rand.New(rand.NewSource(10))}
	manifests := map[uint64]bool{vs.ManifestFileNum(): true}
	for range 200 {
		require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
		manifests[vs.ManifestFileNum()] = true
		// The manifest stays near its bound: a snapshot plus edits.
		require.Less(t, readFileSize(t, fs, FilePath(testDir, FileKindManifest, vs.ManifestFileNum())), int64(8192))
	}
	require.Greater(t, len(manifests), 5)
	want := stateString(vs)
	checkRecovered(t, vs, fs, want)
	require.NoError(t, vs.Close())
	vs = mustRecover(t, fs, nil)
	require.Equal(t, want, stateString(vs))
	require.NoError(t, vs.Close())
}

// TestRotationProtocol pins the order of the I/O of a rotation, which the
// crash guarantees rest on. MemFS cannot show every ordering mistake: its
// directory sync makes all entries durable at once, while a real file
// system may persist CURRENT's rename before the new manifest's name unless
// the directory is synced in between.
func TestRotationProtocol(t *testing.T) {
	mem := newTestFS(t)
	var ops []string
	record := vfs.NewToggle(vfs.InjectorFunc(func(op vfs.Op) error {
		ops = append(ops, op.String())
		return nil
	}))
	vs := mustCreate(t, vfs.NewErrorFS(mem, record), &Options{MaxManifestSize: 1})
	record.On()
	require.NoError(t, vs.LogAndApply(&VersionEdit{NewTables: []NewTable{{0, table(2, "a", "b", 1)}}}))
	require.Equal(t, []string{
		`create "db/000003.synced"`,
		`create "db/MANIFEST-000003"`,
		`write "db/MANIFEST-000003"`,
		`sync "db/MANIFEST-000003"`,
		`write "db/000003.synced"`, // the synced-length mark
		`sync "db/000003.synced"`,
		`open-dir "db"`, `sync "db"`, `close "db"`,
		`create "db/000003.tmp"`,
		`write "db/000003.tmp"`,
		`sync "db/000003.tmp"`,
		`close "db/000003.tmp"`,
		`rename "db/000003.tmp" -> "db/CURRENT"`,
		`open-dir "db"`, `sync "db"`, `close "db"`, // the commit point
		`close "db/MANIFEST-000001"`,
		`close "db/000001.synced"`,
		`remove "db/MANIFEST-000001"`,
		`remove "db/000001.synced"`,
	}, ops)
	require.NoError(t, vs.Close())
}

// TestRecoverCountersFromTables replays hand-written manifests whose edits
// never record NextFileNum: recovery must still not reuse the numbers of
// their tables, WAL or manifest, whichever is largest.
func TestRecoverCountersFromTables(t *testing.T) {
	for _, c := range []struct{ manifestNum, logNumber, wantAbove uint64 }{
		{3, 7, 60},    // a table has the largest number
		{300, 7, 300}, // the manifest
		{3, 700, 700}, // the WAL
	} {
		fs := newTestFS(t)
		var buf bytes.Buffer
		w := record.NewWriter(&buf)
		for _, e := range []*VersionEdit{
			{LogNumber: c.logNumber, NewTables: []NewTable{{0, table(50, "a", "b", 3)}}},
			{LastSeqNum: 9, NewTables: []NewTable{{2, table(60, "c", "d", 4)}}},
		} {
			_, err := w.WriteRecord(e.Encode(nil))
			require.NoError(t, err)
		}
		require.NoError(t, w.Flush())
		name := FileName(FileKindManifest, c.manifestNum)
		writeFile(t, fs, "db/"+name, buf.Bytes())
		writeFile(t, fs, "db/CURRENT", []byte(name+"\n"))

		vs := mustRecover(t, fs, nil)
		require.Equal(t, c.logNumber, vs.LogNumber())
		require.Equal(t, base.SeqNum(9), vs.LastSeqNum())
		require.Greater(t, vs.NextFileNum(), c.wantAbove)
		require.NoError(t, vs.Close())
	}
}

// TestAllocatedNumbersSurvive checks that numbers handed out but not yet
// used by any table (a WAL, a table being written) are recorded.
func TestAllocatedNumbersSurvive(t *testing.T) {
	fs := newTestFS(t)
	vs := mustCreate(t, fs, nil)
	vs.MarkFileNumUsed(1000)
	require.NoError(t, vs.LogAndApply(&VersionEdit{}))
	crashed := fs.CrashClone(vfs.CrashOptions{})
	require.NoError(t, vs.Close())
	vs = mustRecover(t, crashed, nil)
	require.Greater(t, vs.NextFileNum(), uint64(1000))
	require.NoError(t, vs.Close())
}

func writeFile(t *testing.T, fs vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fs.Create(name)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

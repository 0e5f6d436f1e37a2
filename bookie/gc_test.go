package bookie

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie/check"
	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// newGCEnv is a test env whose logs hold many ledgers each (small logs,
// entries of all ledgers interleaved) and whose compactions run
// unthrottled.
func newGCEnv(dirs ...string) *testEnv {
	env := newTestEnv(dirs...)
	env.tweak = func(o *Options) {
		o.LogSizeLimit = 16 << 10
		o.GC.CompactionRateByEntries = -1
		o.ReadCacheSize = -1 // reads go to the logs
	}
	return env
}

// logBytes returns the entry logs' total size in every directory of env,
// and how many there are.
func logBytes(t testing.TB, fs vfs.FS, dirs []string) (int64, int) {
	t.Helper()
	var n int64
	var count int
	for _, d := range dirs {
		dir := filepath.Join(d, "current")
		ids, err := entrylog.ListLogs(fs, dir)
		require.NoError(t, err)
		for _, id := range ids {
			st, err := fs.Stat(filepath.Join(dir, entrylog.LogFileName(id)))
			require.NoError(t, err)
			n += st.Size()
			count++
		}
	}
	return n, count
}

// writeInterleaved writes entries [0, entries) of ledgers [1, ledgers] in
// rounds, so that every log holds entries of many ledgers, and
// checkpoints.
func writeInterleaved(t testing.TB, s *Storage, ledgers, entries int64, version int) {
	t.Helper()
	for e := int64(0); e < entries; e++ {
		for l := int64(1); l <= ledgers; l++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, version)))
		}
		if e%5 == 4 {
			require.NoError(t, s.Checkpoint())
		}
	}
	require.NoError(t, s.Checkpoint())
}

func runGC(t testing.TB, s *Storage, req GCRequest) GCResult {
	t.Helper()
	var total GCResult
	for _, d := range s.Dirs() {
		res, err := d.RunGC(req)
		require.NoError(t, err)
		total.RemovedLogs += res.RemovedLogs
		total.CompactedLogs += res.CompactedLogs
		total.ReclaimedDeletionBytes += res.ReclaimedDeletionBytes
		total.ReclaimedCompactionBytes += res.ReclaimedCompactionBytes
	}
	return total
}

// TestGCRemovesDeadLogs: the operator test. 30 ledgers written
// one after the other, 20 deleted: the logs that held only deleted
// ledgers go at the next cycle (no compaction needed), the log being
// written stays, live entries read back, deleted ledgers are gone.
func TestGCRemovesDeadLogs(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	for l := int64(1); l <= 30; l++ {
		for e := int64(0); e < 20; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
		require.NoError(t, s.Checkpoint())
	}
	before, logs := logBytes(t, env.mem, env.dirs)
	require.Greater(t, logs, 5)
	for l := int64(1); l <= 20; l++ {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
	}
	require.NoError(t, s.Checkpoint())
	// No compaction: only whole dead logs go.
	res := runGC(t, s, GCRequest{SkipMajor: true, SkipMinor: true})
	after, _ := logBytes(t, env.mem, env.dirs)
	t.Logf("entry logs: %d bytes in %d logs before, %d after; %+v", before, logs, after, res)
	require.Positive(t, res.RemovedLogs)
	require.Equal(t, before-after, res.ReclaimedDeletionBytes)
	require.Less(t, after, before*2/3)
	require.GreaterOrEqual(t, s.Dirs()[0].entryLog.CurrentLogID(), int64(0))
	_, err := env.mem.Stat(s.Dirs()[0].entryLog.LogPath(s.Dirs()[0].entryLog.CurrentLogID()))
	require.NoError(t, err, "the log being written stays")
	check := func(s *Storage) {
		for l := int64(1); l <= 30; l++ {
			if l <= 20 {
				requireNoLedger(t, s, l)
				continue
			}
			for e := int64(0); e < 20; e++ {
				requireEntry(t, s, l, e, payload(l, e, 0))
			}
		}
	}
	check(s)
	require.NoError(t, s.Close())
	s = env.open(t)
	check(s)
	require.NoError(t, s.Close())
}

// TestGCCompactsPartlyDeadLogs: every log holds entries of every ledger;
// with 3 ledgers in 4 deleted, no log is dead, and a forced major
// compaction rewrites them all: the logs' bytes drop to at most half and
// every live entry reads back, before and after a reopen. A minor
// compaction (threshold 0.2) leaves logs at 25% alone.
func TestGCCompactsPartlyDeadLogs(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	writeInterleaved(t, s, 40, 30, 0)
	before, logs := logBytes(t, env.mem, env.dirs)
	for l := int64(1); l <= 40; l++ {
		if l%4 != 0 {
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
		}
	}
	require.NoError(t, s.Checkpoint())
	res := runGC(t, s, GCRequest{Force: true, SkipMajor: true})
	require.Zero(t, res.CompactedLogs, "usage 25%% is above the minor threshold")
	res = runGC(t, s, GCRequest{Force: true})
	after, left := logBytes(t, env.mem, env.dirs)
	t.Logf("entry logs: %d bytes in %d logs before, %d in %d after; %+v", before, logs, after, left, res)
	require.Positive(t, res.CompactedLogs)
	require.LessOrEqual(t, after, before/2)
	st := s.Dirs()[0].GCStatus()
	require.Equal(t, int64(1), st.MajorCompactionCounter)
	require.Equal(t, int64(1), st.MinorCompactionCounter)
	check := func(s *Storage) {
		for l := int64(1); l <= 40; l++ {
			if l%4 != 0 {
				requireNoLedger(t, s, l)
				continue
			}
			for e := int64(0); e < 30; e++ {
				requireEntry(t, s, l, e, payload(l, e, 0))
			}
			requireEntry(t, s, l, LastEntry, payload(l, 29, 0))
		}
	}
	check(s)
	require.NoError(t, s.Close())
	s = env.open(t)
	check(s)
	// A second cycle finds nothing more to do but the logs compaction
	// wrote.
	runGC(t, s, GCRequest{Force: true})
	check(s)
	require.NoError(t, s.Close())
}

// TestGCOptions checks defaults and upstream's validation.
func TestGCOptions(t *testing.T) {
	s, err := resolveGC(GCOptions{}, 10*time.Minute)
	require.NoError(t, err)
	require.True(t, s.minor.enabled && s.major.enabled)
	require.Equal(t, 0.2, s.minor.threshold)
	require.Equal(t, 0.8, s.major.threshold)
	require.Equal(t, time.Hour, s.minor.interval)
	require.Equal(t, 24*time.Hour, s.major.interval)
	require.Equal(t, 1000.0, s.rate)
	s, err = resolveGC(GCOptions{ThrottleByBytes: true}, time.Minute)
	require.NoError(t, err)
	require.Equal(t, 1e6, s.rate)
	s, err = resolveGC(GCOptions{MinorCompactionThreshold: -1, MajorCompactionInterval: -1}, time.Minute)
	require.NoError(t, err)
	require.False(t, s.minor.enabled || s.major.enabled)
	for _, c := range []struct {
		o    GCOptions
		want string
	}{
		{GCOptions{MinorCompactionThreshold: 1.5}, "Invalid minor compaction threshold"},
		{GCOptions{MajorCompactionThreshold: 2}, "Invalid major compaction threshold"},
		{GCOptions{MinorCompactionInterval: time.Second}, "Too short minor compaction interval"},
		{GCOptions{MajorCompactionInterval: time.Second}, "Too short major compaction interval"},
		{GCOptions{MinorCompactionThreshold: 0.9}, "Invalid minor/major compaction settings"},
		{GCOptions{MinorCompactionInterval: 48 * time.Hour}, "Invalid minor/major compaction settings"},
	} {
		_, err := resolveGC(c.o, time.Minute)
		require.ErrorIs(t, err, ErrInvalidArgument)
		require.Contains(t, err.Error(), c.want)
	}
}

// TestCrashAtEveryStepOfAGC takes a power-loss image of the whole storage
// (entry logs and both indexes on one MemFS) before every file system
// operation of a forced GC cycle (purge, dead-log removal, compaction of
// every partly dead log), some with torn tails, and reopens each: every
// entry a checkpoint acknowledged reads back byte for byte, deleted
// ledgers stay deleted, no location names missing bytes (a read never
// fails), and a GC on the reopened storage reclaims the space.
func TestCrashAtEveryStepOfAGC(t *testing.T) {
	const seed = 1
	t.Logf("seed %d", seed)
	rng := newRand(seed)
	env := newGCEnv()
	env.tweak = func(o *Options) {
		o.LogSizeLimit = 8 << 10
		o.GC.CompactionRateByEntries = -1
		o.ReadCacheSize = -1
	}
	s := env.open(t)
	const ledgers, entries = 12, 10
	writeInterleaved(t, s, ledgers, entries, 0)
	for l := int64(1); l <= ledgers; l++ {
		if l%3 != 0 {
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
		}
	}
	var images []*vfs.MemFS
	env.setFault(func(vfs.Op) error {
		opts := vfs.CrashOptions{}
		if rng.Intn(2) == 0 {
			opts = vfs.CrashOptions{Rand: rng, KeepUnsyncedTail: true}
		}
		images = append(images, env.mem.CrashClone(opts))
		return nil
	})
	res := runGC(t, s, GCRequest{Force: true})
	env.setFault(nil)
	require.Positive(t, res.CompactedLogs)
	final := env.crashClone(seed)
	require.NoError(t, s.Close())
	require.Greater(t, len(images), 50, "the cycle does file operations")

	check := func(i int, s *Storage) {
		for l := int64(1); l <= ledgers; l++ {
			if l%3 != 0 {
				requireNoLedger(t, s, l)
				continue
			}
			for e := int64(0); e < entries; e++ {
				got, err := s.GetEntry(l, e)
				require.NoError(t, err, "image %d: entry %d of ledger %d", i, e, l)
				require.Equal(t, string(payload(l, e, 0)), string(got), "image %d", i)
			}
		}
	}
	markers := 0
	for i, img := range append(images, final) {
		crashed := &testEnv{mem: img, dirs: env.dirs, tweak: env.tweak}
		if _, err := img.Stat(filepath.Join(env.dirs[0], "current", compactionMarkerName)); err == nil {
			markers++
		}
		s, err := Open(crashed.options())
		require.NoError(t, err, "image %d of %d", i, len(images))
		check(i, s)
		_, err = img.Stat(filepath.Join(env.dirs[0], "current", compactionMarkerName))
		require.Error(t, err, "image %d: the open finished the compaction", i)
		runGC(t, s, GCRequest{Force: true})
		check(i, s)
		after, _ := logBytes(t, img, env.dirs)
		require.NoError(t, s.Close())
		s, err = Open(crashed.options())
		require.NoError(t, err)
		check(i, s)
		require.NoError(t, s.Close())
		if i == len(images) {
			t.Logf("after the last image: %d bytes of logs", after)
		}
	}
	t.Logf("%d images, %d with a compaction in progress", len(images)+1, markers)
	require.Positive(t, markers)
}

// TestCompactionStepFaults fails a compaction at each of its steps: the
// cycle fails, every entry still reads, and the next cycle finishes.
func TestCompactionStepFaults(t *testing.T) {
	for _, step := range []string{gcStepMarked, gcStepCopied, gcStepSynced, gcStepIndexed, gcStepPurged, gcStepRemoved} {
		t.Run(step, func(t *testing.T) {
			env := newGCEnv()
			s := env.open(t)
			writeInterleaved(t, s, 8, 100, 0)
			for l := int64(1); l <= 8; l += 2 {
				_, err := s.DeleteLedger(l)
				require.NoError(t, err)
			}
			fired := false
			s.Dirs()[0].hooks.Store(&testHooks{gcStep: func(got string) error {
				if got == step && !fired {
					fired = true
					return errors.New("injected")
				}
				return nil
			}})
			res, err := s.Dirs()[0].RunGC(GCRequest{Force: true})
			_, n := logBytes(t, env.mem, env.dirs)
			require.Error(t, err, "%+v, %d logs", res, n)
			require.True(t, fired)
			check := func() {
				for l := int64(2); l <= 8; l += 2 {
					for e := int64(0); e < 100; e++ {
						requireEntry(t, s, l, e, payload(l, e, 0))
					}
				}
			}
			check()
			before, _ := logBytes(t, env.mem, env.dirs)
			runGC(t, s, GCRequest{Force: true})
			after, _ := logBytes(t, env.mem, env.dirs)
			require.Less(t, after, before)
			check()
			require.NoError(t, s.Close())
		})
	}
}

// TestGCModel: random adds, rewrites, deletions, checkpoints, GC cycles
// (forced major or minor, or plain), reopens and crashes, checked against
// a map of what a checkpoint acknowledged.
func TestGCModel(t *testing.T) {
	for _, budget := range []int64{0, -1} {
		t.Run(fmt.Sprintf("metadata-budget=%d", budget), func(t *testing.T) { testGCModel(t, budget) })
	}
}

// testGCModel is TestGCModel with a metadata memory budget (0: the
// default; -1: no live ledgers kept, the maps are read back).
func testGCModel(t *testing.T, budget int64) {
	steps := 1000
	if testing.Short() {
		steps = 300
	}
	const seed = 7
	t.Logf("seed %d, %d steps", seed, steps)
	rng := newRand(seed)
	env := newGCEnv("/d0", "/d1")
	tweak := env.tweak
	env.tweak = func(o *Options) {
		tweak(o)
		o.GC.MetadataCacheBytes = budget
	}
	s := env.open(t)
	type key struct{ l, e int64 }
	durable := map[key][]byte{} // acknowledged by a checkpoint
	pending := map[key][]byte{} // in the caches
	deleted := map[int64]bool{}
	version := 0
	for step := 0; step < steps; step++ {
		switch op := rng.Intn(100); {
		case op < 60:
			l, e := int64(rng.Intn(20)+1), int64(rng.Intn(30))
			version++
			p := payload(l, e, version)
			require.NoError(t, s.AddEntry(l, e, p))
			if deleted[l] {
				// A new life: the old entries are gone for good.
				delete(deleted, l)
			}
			pending[key{l, e}] = p
		case op < 66:
			l := int64(rng.Intn(20) + 1)
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
			deleted[l] = true
			for k := range durable {
				if k.l == l {
					delete(durable, k)
				}
			}
			for k := range pending {
				if k.l == l {
					delete(pending, k)
				}
			}
		case op < 80:
			require.NoError(t, s.Checkpoint())
			for k, v := range pending {
				durable[k] = v
			}
			clear(pending)
		case op < 92:
			req := GCRequest{Force: rng.Intn(2) == 0, SkipMajor: rng.Intn(3) == 0, SkipMinor: rng.Intn(3) == 0}
			runGC(t, s, req)
		case op < 96:
			require.NoError(t, s.Close())
			s = env.open(t)
			for k, v := range pending {
				durable[k] = v
			}
			clear(pending)
		default:
			s = env.crash(t, s, int64(step))
			// What was not checkpointed may be lost, or not: forget it
			// either way, and read it no more.
			for k := range pending {
				got, err := s.GetEntry(k.l, k.e)
				if err == nil {
					durable[k] = got
				}
			}
			clear(pending)
		}
		if step%50 == 0 || step == steps-1 {
			for k, v := range durable {
				if p, ok := pending[k]; ok {
					v = p
				}
				requireEntry(t, s, k.l, k.e, v)
			}
			for l := range deleted {
				requireNoLedger(t, s, l)
			}
		}
	}
	require.NoError(t, s.Close())
}

// TestGCConcurrent runs writers, readers, deletions, checkpoints and GC
// cycles together (run it with -race): no read of an acknowledged entry
// fails, whatever the GC moves meanwhile.
func TestGCConcurrent(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	// Ledgers 1..6 are never deleted; 7..12, interleaved with them in
	// the logs, are: the stable entries are moved by every compaction of
	// their logs, and again when the churn around their new copies dies.
	const stable = 6
	writeInterleaved(t, s, 2*stable, 40, 0)
	for l := int64(stable + 1); l <= 2*stable; l++ {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
	}
	var moved atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	wg.Add(4)
	go func() { // churn: ledgers written and deleted, so logs die
		defer wg.Done()
		for i := int64(0); !stop.Load(); i++ {
			l := 100 + i%10
			for e := int64(0); e < 20; e++ {
				if err := s.AddEntry(l, e, payload(l, e, int(i))); err != nil {
					report(err)
					return
				}
			}
			if i%3 == 2 {
				if _, err := s.DeleteLedger(100 + (i+5)%10); err != nil {
					report(err)
					return
				}
			}
		}
	}()
	go func() { // readers of the stable ledgers
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			l, e := int64(i%stable+1), int64(i%40)
			got, err := s.GetEntry(l, e)
			if err != nil {
				report(errors.Wrapf(err, "entry %d of ledger %d", e, l))
				return
			}
			if string(got) != string(payload(l, e, 0)) {
				report(errors.Newf("entry %d of ledger %d: wrong payload", e, l))
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := s.Checkpoint(); err != nil {
				report(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			res, err := s.Dirs()[0].RunGC(GCRequest{Force: true})
			if err != nil {
				report(err)
				return
			}
			moved.Add(int64(res.CompactedLogs))
		}
	}()
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d logs compacted under the readers", moved.Load())
	require.Positive(t, moved.Load())
	require.NoError(t, s.Close())
}

// TestForceGCBackground: ForceGC runs a cycle on the background worker;
// the status says forced until it has run.
func TestForceGCBackground(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	writeInterleaved(t, s, 10, 20, 0)
	for l := int64(1); l <= 9; l++ {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
	}
	require.NoError(t, s.Checkpoint())
	before, _ := logBytes(t, env.mem, env.dirs)
	d := s.Dirs()[0]
	d.ForceGC(true, true)
	waitFor(t, "the forced GC", func() bool { return !d.GCStatus().ForceCompacting })
	after, _ := logBytes(t, env.mem, env.dirs)
	require.Less(t, after, before/2)
	require.Equal(t, int64(1), d.GCStatus().MajorCompactionCounter)
	require.NoError(t, s.Close())
}

// TestCheckCleanAfterGC: after dead logs are removed and partly dead ones
// compacted, the offline check finds every location's record and no
// problem (no location names a removed log).
func TestCheckCleanAfterGC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ledgers")
	opts := func() *Options {
		o := osOptions(filepath.Dir(dir), 1)
		o.LedgerDirs, o.IndexDirs = []string{dir}, nil
		o.LogSizeLimit = 16 << 10
		o.GC.CompactionRateByEntries = -1
		return o
	}
	s, err := Open(opts())
	require.NoError(t, err)
	writeInterleaved(t, s, 12, 30, 0)
	for l := int64(1); l <= 12; l++ {
		if l%3 != 0 {
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
		}
	}
	res := runGC(t, s, GCRequest{Force: true})
	require.Positive(t, res.CompactedLogs)
	require.NoError(t, s.Close())
	cr, err := check.Directory(check.Options{LedgerDir: dir, Engine: smallEngine()})
	require.NoError(t, err)
	for _, f := range cr.Findings {
		t.Log(f.String())
	}
	require.Zero(t, cr.Problems(), cr.Summary())
	require.EqualValues(t, 4*30, cr.Locations)
}

// TestGCDiskPressure checks upstream's disk-pressure rules on periodic
// cycles, on an in-memory disk filled to each usage: above the warn
// threshold no major compaction, above the threshold no minor either; with
// ForceGCAllowWhenNoSpace the cycle is forced instead; the thresholds are
// the storage's (the read-only mode's).
func TestGCDiskPressure(t *testing.T) {
	env := newGCEnv()
	env.mem.SetCapacity(testDiskCapacity)
	env.fillDisk(t, 0.5)
	forceAllow := false
	env.tweak = func(o *Options) {
		o.LogSizeLimit = 16 << 10
		o.GC.CompactionRateByEntries = -1
		o.GC.ForceGCAllowWhenNoSpace = forceAllow
	}
	s := env.open(t)
	d := s.Dirs()[0]
	for _, c := range []struct {
		used                 float64
		skipMajor, skipMinor bool
	}{{0.5, false, false}, {0.92, true, false}, {0.97, true, true}} {
		env.fillDisk(t, c.used)
		req := d.nextGCRequest()
		require.Equal(t, c.skipMajor, req.SkipMajor, "usage %v", c.used)
		require.Equal(t, c.skipMinor, req.SkipMinor, "usage %v", c.used)
		require.False(t, req.Force)
	}
	// Almost full with both compactions due: the minor one runs.
	writeInterleaved(t, s, 10, 20, 0)
	for l := int64(1); l <= 10; l++ {
		if l != 5 {
			_, err := s.DeleteLedger(l)
			require.NoError(t, err)
		}
	}
	d.gc.major.last.Store(0)
	d.gc.minor.last.Store(0)
	env.fillDisk(t, 0.92)
	res, err := d.gcCycle(d.nextGCRequest())
	require.NoError(t, err)
	require.True(t, res.Minor)
	require.False(t, res.Major)
	// The operator's suspension adds to the disk's.
	env.fillDisk(t, 0.5)
	d.SuspendMinorGC()
	require.True(t, d.nextGCRequest().SkipMinor)
	require.NoError(t, s.Close())

	forceAllow = true
	s = env.open(t)
	env.fillDisk(t, 0.92)
	req := s.Dirs()[0].nextGCRequest()
	require.True(t, req.Force)
	require.False(t, req.SkipMajor || req.SkipMinor)
	require.NoError(t, s.Close())

	// The storage's thresholds, lower: 0.75 is past the warn threshold.
	forceAllow = false
	env.addTweak(func(o *Options) { o.DiskUsageThreshold, o.DiskUsageWarnThreshold = 0.8, 0.7 })
	s = env.open(t)
	env.fillDisk(t, 0.75)
	req = s.Dirs()[0].nextGCRequest()
	require.True(t, req.SkipMajor)
	require.False(t, req.SkipMinor)
	require.NoError(t, s.Close())

	// A disk that cannot be measured counts as writable.
	env.setFault(func(op vfs.Op) error {
		if op.Kind == vfs.OpDiskUsage {
			return syscall.EIO
		}
		return nil
	})
	s = env.open(t)
	env.fillDisk(t, 0.97)
	req = s.Dirs()[0].nextGCRequest()
	require.False(t, req.SkipMajor || req.SkipMinor || req.Force)
	require.NoError(t, s.Close())
}

// TestGCMetadataBudget: with no memory for the logs' live ledgers the
// collector keeps only each log's size and live bytes and reads the
// ledgers maps back after purges; it reclaims the same space as with
// them in memory.
func TestGCMetadataBudget(t *testing.T) {
	run := func(budget int64) (int64, GCResult) {
		env := newGCEnv()
		env.tweak = func(o *Options) {
			o.LogSizeLimit = 16 << 10
			o.GC.CompactionRateByEntries = -1
			o.GC.MetadataCacheBytes = budget
		}
		s := env.open(t)
		writeInterleaved(t, s, 20, 30, 0)
		runGC(t, s, GCRequest{SkipMajor: true, SkipMinor: true}) // usages known, before the deletions
		kept := s.Dirs()[0].gc.keptPairs
		for l := int64(1); l <= 20; l++ {
			if l%4 != 0 {
				_, err := s.DeleteLedger(l)
				require.NoError(t, err)
			}
		}
		require.NoError(t, s.Checkpoint())
		res := runGC(t, s, GCRequest{Force: true})
		for l := int64(4); l <= 20; l += 4 {
			for e := int64(0); e < 30; e++ {
				requireEntry(t, s, l, e, payload(l, e, 0))
			}
		}
		after, _ := logBytes(t, env.mem, env.dirs)
		require.NoError(t, s.Close())
		if budget < 0 {
			require.Zero(t, kept)
		} else {
			require.Positive(t, kept)
		}
		return after, res
	}
	withMem, resMem := run(0)
	without, resNone := run(-1)
	t.Logf("with the ledgers in memory: %d bytes left, %+v; without: %d, %+v", withMem, resMem, without, resNone)
	require.Equal(t, resMem.CompactedLogs, resNone.CompactedLogs)
	require.Equal(t, resMem.ReclaimedCompactionBytes, resNone.ReclaimedCompactionBytes)
	require.Equal(t, withMem, without)
}

// TestCompactionMarkerAtOpen: a marker naming a log that is gone is
// removed; a damaged marker does not stop the storage from opening.
func TestCompactionMarkerAtOpen(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	writeInterleaved(t, s, 4, 10, 0)
	require.NoError(t, s.Close())
	marker := filepath.Join(env.dirs[0], "current", compactionMarkerName)
	write := func(content string) {
		f, err := env.mem.Create(marker)
		require.NoError(t, err)
		_, err = f.Write([]byte(content))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	write("7fff\n") // no such log
	s = env.open(t)
	_, err := env.mem.Stat(marker)
	require.Error(t, err, "the marker of a log that is gone is removed")
	require.NoError(t, s.Close())
	write("not an id")
	s = env.open(t)
	requireEntry(t, s, 1, 0, payload(1, 0, 0))
	require.NoError(t, s.Close())
}

// TestGCKeepsLogsOfAFailedCheckpoint: a checkpoint that failed after its
// entry-log sync is resumed later with the locations it wrote; until
// then its records are in the logs but not in the index. A GC cycle
// meanwhile must not remove those logs (compaction sees the records as
// not current): after the resumed checkpoint every entry reads back.
func TestGCKeepsLogsOfAFailedCheckpoint(t *testing.T) {
	env := newGCEnv()
	env.tweak = func(o *Options) {
		o.LogSizeLimit = 4 << 10 // the checkpoint's records span rotated logs
		o.GC.CompactionRateByEntries = -1
		o.ReadCacheSize = -1
	}
	s := env.open(t)
	d := s.Dirs()[0]
	// Ledger 1's entries of the failed checkpoint share their logs with
	// ledgers 5..8, deleted before the cycle: those logs are mostly dead.
	for e := int64(0); e < 40; e++ {
		require.NoError(t, s.AddEntry(1, e, payload(1, e, 0)))
		for l := int64(5); l <= 8; l++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
	}
	fail := true
	d.hooks.Store(&testHooks{afterEntryLogFlush: func() error {
		if fail {
			fail = false
			return errors.New("injected index failure")
		}
		return nil
	}})
	require.Error(t, s.Checkpoint())
	for l := int64(5); l <= 8; l++ {
		_, err := s.DeleteLedger(l)
		require.NoError(t, err)
	}
	res, err := d.RunGC(GCRequest{Force: true})
	require.NoError(t, err)
	t.Logf("cycle during the failed checkpoint: %+v", res)
	require.NoError(t, s.Checkpoint()) // resumed: only the index steps
	check := func() {
		for e := int64(0); e < 40; e++ {
			requireEntry(t, s, 1, e, payload(1, e, 0))
		}
	}
	check()
	runGC(t, s, GCRequest{Force: true})
	check()
	require.NoError(t, s.Close())
	s = env.open(t)
	check()
	require.NoError(t, s.Close())
}

// TestGCKeepsALogDamagedBeforeLiveRecords: a log whose ledgers map a crash
// lost is accounted by a scan, which stops at damage; the ledgers after
// the damage are not in the rebuilt map. When every ledger before the
// damage is deleted, the log must not be taken for dead: the live
// records after the damage are still read through the index.
func TestGCKeepsALogDamagedBeforeLiveRecords(t *testing.T) {
	env := newGCEnv()
	s := env.open(t)
	for _, l := range []int64{1, 2} {
		for e := int64(0); e < 10; e++ {
			require.NoError(t, s.AddEntry(l, e, payload(l, e, 0)))
		}
		require.NoError(t, s.Checkpoint())
	}
	d := s.Dirs()[0]
	first := d.entryLog.CurrentLogID()
	for e := int64(0); e < 200; e++ { // rotates the log
		require.NoError(t, s.AddEntry(3, e, payload(3, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	require.NotEqual(t, first, d.entryLog.CurrentLogID())
	loc, err := d.locations.GetLocation(1, 9)
	require.NoError(t, err)
	require.Equal(t, first, entrylog.LocationLogID(loc))
	loc2, err := d.locations.GetLocation(2, 0)
	require.NoError(t, err)
	require.Equal(t, first, entrylog.LocationLogID(loc2), "ledger 2 after ledger 1 in the same log")
	require.NoError(t, s.Close())

	// A crash lost the map; a byte of ledger 1's last record is damaged.
	dir := filepath.Join(env.dirs[0], "current")
	require.NoError(t, env.mem.Remove(filepath.Join(dir, entrylog.MetadataFileName(first))))
	logPath := filepath.Join(dir, entrylog.LogFileName(first))
	f, err := env.mem.Open(logPath)
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	data := make([]byte, size)
	_, err = f.ReadAt(data, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	data[entrylog.LocationOffset(loc)+20+3] ^= 0x01
	w, err := env.mem.Create(logPath)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	require.NoError(t, w.Close())

	s = env.open(t)
	defer s.Close()
	_, err = s.DeleteLedger(1)
	require.NoError(t, err)
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Purge())
	runGC(t, s, GCRequest{Force: true})
	_, err = env.mem.Stat(logPath)
	require.NoError(t, err, "the damaged log stays")
	for e := int64(0); e < 10; e++ {
		requireEntry(t, s, 2, e, payload(2, e, 0))
	}
}

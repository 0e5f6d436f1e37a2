package bookie

import (
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var (
	diskModelSteps = flag.Int("disk-model-steps", 600, "steps of each seed of TestDiskModel (raise for a longer run)")
	diskModelSeed  = flag.Int64("disk-model-seed", 0, "replay this seed of TestDiskModel (0: seeds 1 to 3)")
)

// The disk model's thresholds (Options.DiskUsage*), and the disk levels it
// fills the disk to: each at least 2% of the disk away from a threshold,
// more than the storage's own writes move the usage between a fill and
// the check that follows it (a test storage holds well under 2 MiB of the
// 16), so that the model and the storage measure the same side of every
// threshold. 1 fills the disk: the storage's next writes fail with ENOSPC.
const (
	diskModelThreshold = 0.9
	diskModelWarn      = 0.85
	diskModelLwm       = 0.8
)

var diskModelLevels = []float64{0.3, 0.6, 0.83, 0.87, 0.95, 1}

// TestDiskModel runs random adds, checkpoints, ledger deletions, purges,
// disk fills (a ballast file on an in-memory disk of testDiskCapacity
// bytes, up to a full disk on which the storage's writes fail with
// ENOSPC), disk checks, garbage-collection requests and cycles, clean
// restarts and crashes against a model of docs/operations.md's "Read-only
// mode" and "Disk full": over diskUsageThreshold the storage is read-only
// until a check finds it below diskUsageLwmThreshold; a write that failed
// for lack of space keeps it read-only until space returns, a checkpoint
// succeeds and a check finds it below the mark; a periodic cycle skips
// major compactions over the warn threshold and minor ones over the
// threshold, or is forced with ForceGCAllowWhenNoSpace; reads go on
// throughout; and after a crash the storage holds what the last completed
// checkpoint held, minus the ledgers deleted since.
func TestDiskModel(t *testing.T) {
	seeds := []int64{1, 2, 3}
	if *diskModelSeed != 0 {
		seeds = []int64{*diskModelSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Logf("replay: go test ./bookie -run 'TestDiskModel$' -disk-model-seed %d -disk-model-steps %d", seed, *diskModelSteps)
			testDiskModel(t, seed, *diskModelSteps)
		})
	}
}

// diskModel is the model's state beside the storage.
type diskModel struct {
	t   *testing.T
	rng *rand.Rand
	env *testEnv
	s   *Storage

	// live is what the storage holds now, durable what the last completed
	// checkpoint (or clean close) made durable, and since the payloads
	// added after it, by entry: a crash keeps durable and may keep any of
	// those (a checkpoint that failed may have made some durable).
	// uncertain are ledgers whose deletion failed part-way (the model
	// checks nothing of them).
	live, durable model
	since         map[[2]int64][][]byte
	uncertain     map[int64]bool
	// full: the last disk check found the disk over the threshold, and no
	// check since found it below the low-water mark. noSpace: a write
	// failed for lack of space, and the storage has not said it recovered.
	full, noSpace bool
	forceGC       bool
	versions      int
}

func testDiskModel(t *testing.T, seed int64, steps int) {
	m := &diskModel{t: t, rng: newRand(seed), env: newTestEnv("/d0", "/d1"), live: model{}, durable: model{},
		since: map[[2]int64][][]byte{}, uncertain: map[int64]bool{}}
	m.forceGC = m.rng.Intn(2) == 0
	engine := *storagetest.IndexEngine()
	engine.NoSpaceRetryInterval, engine.NoSpaceRetryMaxInterval = time.Millisecond, 10*time.Millisecond
	ledgers := engine
	ledgers.MaxBackgroundJobs = 1
	m.env.mem.SetCapacity(testDiskCapacity)
	m.env.fillDisk(t, 0.3)
	m.env.tweak = func(o *Options) {
		o.LogSizeLimit = 64 << 10
		o.WriteCacheSize = 2 * 2 * (64 << 10)
		o.MaxThrottleTime = -1
		o.CheckpointRetryInterval, o.CheckpointRetryMaxInterval = time.Millisecond, 10*time.Millisecond
		o.Index = &entrylocation.Options{Engine: &engine}
		o.LedgersEngine = &ledgers
		o.DiskCheckInterval = -1 // the model checks the disks
		o.DiskUsageThreshold, o.DiskUsageWarnThreshold, o.DiskUsageLwmThreshold = diskModelThreshold, diskModelWarn, diskModelLwm
		o.GC.ForceGCAllowWhenNoSpace = m.forceGC
		o.GC.CompactionRateByEntries = -1
	}
	m.s = m.open()
	counts := map[string]int{}
	for step := range steps {
		var what string
		switch r := m.rng.Intn(1000); {
		case r < 400:
			what = m.add(step)
		case r < 550:
			what = m.checkpoint(step)
		case r < 590:
			what = m.deleteLedger(step)
		case r < 610:
			what = "purge"
			if err := m.s.Purge(); err != nil {
				require.True(t, vfs.IsNoSpace(err), "step %d: purge: %v", step, err)
				what = "purge: no space"
			}
		case r < 710:
			level := diskModelLevels[m.rng.Intn(len(diskModelLevels))]
			m.env.fillDisk(t, level)
			what = fmt.Sprintf("fill %v", level)
		case r < 790:
			what = m.checkDisks(step)
		case r < 830:
			what = m.gcRequest(step)
		case r < 860:
			what = m.gcCycle(step)
		case r < 920:
			what = "read"
			m.verify(step, 3)
		case r < 950:
			what = m.recover(step)
		case r < 965:
			what = m.restart(step)
		default:
			what = m.crash(step)
		}
		counts[what]++
	}
	m.verify(steps, -1)
	require.NoError(t, m.s.Close())
	t.Logf("ForceGCAllowWhenNoSpace %v; steps: %v", m.forceGC, counts)
	// The workload reaches what it is for.
	for _, what := range []string{"add: read-only", "checkpoint: no space", "checks: over the threshold", "checks: below the mark", "gc request: over the threshold", "crash"} {
		require.Positive(t, counts[what], "no %q in %v: the workload needs tuning", what, counts)
	}
}

// open opens the storage, freeing space first (an operator moving other
// files away) if the disk is too full to open it: opening writes
// (docs/operations.md, "Do not restart while full").
func (m *diskModel) open() *Storage {
	s, err := Open(m.env.options())
	if err != nil {
		require.True(m.t, vfs.IsNoSpace(err), "open: %v", err)
		m.env.fillDisk(m.t, 0.3)
		s, err = Open(m.env.options())
		require.NoError(m.t, err)
	}
	m.full, m.noSpace = false, false // a new process starts writable
	return s
}

// readOnly is the storage's verdict, checked against the model: read-only
// while full, writable unless full or short of space, and either while a
// lack of space may have cleared (a refused write rechecks it).
func (m *diskModel) readOnly(step int, what string) bool {
	ro, reason := m.s.ReadOnly()
	switch {
	case m.full:
		require.True(m.t, ro, "step %d (%s): over the threshold, yet writable", step, what)
		require.Contains(m.t, reason, "over diskUsageThreshold", "step %d (%s)", step, what)
	case !m.noSpace && ro:
		// An index engine that ran out of space in the background is a
		// failed write the model did not see.
		require.Contains(m.t, reason, "a write to", "step %d (%s): read-only: %s", step, what, reason)
		m.noSpace = true
	case m.noSpace && !ro:
		m.noSpace = false
	}
	return ro
}

func (m *diskModel) add(step int) string {
	l, e := int64(m.rng.Intn(8)), int64(m.rng.Intn(60))
	if m.uncertain[l] {
		return "add: skipped"
	}
	m.versions++
	p := fmt.Appendf(nil, "%d/%d v%d %s", l, e, m.versions, make([]byte, m.rng.Intn(900)))
	ro := m.readOnly(step, "add")
	err := m.s.AddEntry(l, e, p)
	if errors.Is(err, ErrRejected) {
		// A full cache and no wait: make room and retry.
		if m.checkpoint(step) != "checkpoint" {
			return "add: cache full"
		}
		err = m.s.AddEntry(l, e, p)
	}
	switch {
	case errors.Is(err, ErrReadOnly):
		require.True(m.t, ro || m.noSpace || m.full, "step %d: add refused while the model says writable: %v", step, err)
		return "add: read-only"
	case m.full:
		require.Fail(m.t, "add taken over the threshold", "step %d: %v", step, err)
	}
	require.NoError(m.t, err, "step %d", step)
	if m.live[l] == nil {
		m.live[l] = map[int64][]byte{}
	}
	m.live[l][e] = p
	m.since[[2]int64{l, e}] = append(m.since[[2]int64{l, e}], p)
	if m.noSpace {
		m.noSpace = false // the refused write's recheck found space back
	}
	return "add"
}

func (m *diskModel) checkpoint(step int) string {
	if err := m.s.Checkpoint(); err != nil {
		require.True(m.t, vfs.IsNoSpace(err), "step %d: checkpoint: %v", step, err)
		m.noSpace = true
		return "checkpoint: no space"
	}
	m.durable = m.live.clone()
	clear(m.since)
	return "checkpoint"
}

func (m *diskModel) deleteLedger(step int) string {
	l := int64(m.rng.Intn(8))
	if _, err := m.s.DeleteLedger(l); err != nil {
		require.True(m.t, vfs.IsNoSpace(err), "step %d: delete %d: %v", step, l, err)
		m.noSpace = true
		m.uncertain[l] = true
		return "delete: no space"
	}
	delete(m.live, l)
	delete(m.durable, l)
	delete(m.uncertain, l)
	for k := range m.since {
		if k[0] == l {
			delete(m.since, k)
		}
	}
	return "delete"
}

// usedFraction is the disk's usage as the storage measures it.
func (m *diskModel) usedFraction() float64 {
	u, err := m.env.mem.DiskUsage("/")
	require.NoError(m.t, err)
	return u.UsedFraction()
}

func (m *diskModel) checkDisks(step int) string {
	used := m.usedFraction()
	m.s.CheckDisks()
	what := "checks: between"
	switch {
	case used > diskModelThreshold:
		m.full, what = true, "checks: over the threshold"
	case used < diskModelLwm:
		m.full, what = false, "checks: below the mark"
	}
	m.readOnly(step, fmt.Sprintf("disk check at %.3f", used))
	return what
}

func (m *diskModel) gcRequest(step int) string {
	used := m.usedFraction()
	req := m.s.Dirs()[m.rng.Intn(2)].nextGCRequest()
	what := "gc request"
	var want GCRequest
	switch {
	case used > diskModelWarn && m.forceGC:
		want.Force = true
	case used > diskModelThreshold:
		want.SkipMajor, want.SkipMinor = true, true
	case used > diskModelWarn:
		want.SkipMajor = true
	}
	if used > diskModelThreshold {
		what = "gc request: over the threshold"
	}
	require.Equal(m.t, want, req, "step %d: disk at %.3f", step, used)
	return what
}

// gcCycle runs a forced cycle of one directory: it may fail for lack of
// space, never lose a live entry.
func (m *diskModel) gcCycle(step int) string {
	_, err := m.s.Dirs()[m.rng.Intn(2)].RunGC(GCRequest{Force: true})
	if err != nil {
		require.True(m.t, vfs.IsNoSpace(err), "step %d: gc: %v", step, err)
		return "gc: no space"
	}
	m.verify(step, -1)
	return "gc"
}

// recover frees space as an operator would and waits for the storage to
// take writes again by itself: its engines recover, a checkpoint
// succeeds, and a disk check finds it below the low-water mark.
func (m *diskModel) recover(step int) string {
	m.env.fillDisk(m.t, 0.3)
	waitFor(m.t, "a checkpoint after space returned", func() bool { return m.checkpoint(step) == "checkpoint" })
	waitFor(m.t, "the index engines recovered", func() bool {
		for _, d := range m.s.Dirs() {
			if d.IndexError() != nil {
				return false
			}
		}
		return true
	})
	m.s.CheckDisks()
	m.full = false
	ro, reason := m.s.ReadOnly()
	require.False(m.t, ro, "step %d: space returned, a checkpoint succeeded, the disk is below the mark: %s", step, reason)
	m.noSpace = false
	return "recover"
}

// restart closes the storage cleanly and reopens it: the final checkpoint
// makes everything durable, unless it fails for lack of space (then what
// no checkpoint completed is lost, as documented).
func (m *diskModel) restart(step int) string {
	what := "restart"
	if err := m.s.Close(); err != nil {
		require.True(m.t, vfs.IsNoSpace(err), "step %d: close: %v", step, err)
		what = "restart: final checkpoint failed"
	} else {
		m.durable = m.live.clone()
		clear(m.since)
	}
	m.s = m.open()
	m.reopened(step)
	return what
}

// crash takes a power-loss image (torn tails included) and reopens it.
func (m *diskModel) crash(step int) string {
	img := m.env.crashClone(m.rng.Int63())
	m.env.restartOn(m.s, img)
	m.s = m.open()
	m.reopened(step)
	return "crash"
}

// reopened checks the storage after a restart against the model, and
// adopts what it holds: every entry durable holds, with its payload or one
// added after it; of an entry only added after it, nothing or one of those
// payloads. From then on the storage holds exactly that.
func (m *diskModel) reopened(step int) {
	keys := map[[2]int64]bool{}
	for l, es := range m.durable {
		for e := range es {
			keys[[2]int64{l, e}] = true
		}
	}
	for k := range m.since {
		keys[k] = true
	}
	live := model{}
	for k := range keys {
		l, e := k[0], k[1]
		if m.uncertain[l] {
			continue
		}
		want, durable := m.durable[l][e]
		got, err := m.s.GetEntry(l, e)
		if err != nil {
			require.False(m.t, durable, "step %d: entry %d of ledger %d, durable, is gone: %v", step, e, l, err)
			require.True(m.t, errors.Is(err, ErrNoEntry) || errors.Is(err, ErrNoLedger), "step %d: %v", step, err)
			continue
		}
		ok := durable && string(got) == string(want)
		for _, p := range m.since[k] {
			ok = ok || string(got) == string(p)
		}
		require.True(m.t, ok, "step %d: entry %d of ledger %d reads %.20q, neither its durable payload nor one added since", step, e, l, got)
		if live[l] == nil {
			live[l] = map[int64][]byte{}
		}
		live[l][e] = got
	}
	m.live, m.durable = live, live.clone()
	clear(m.since)
	m.verify(step, -1)
}

// verify reads n random ledgers of the model (-1: all) and checks every
// entry, the last entry, and an entry never written.
func (m *diskModel) verify(step, n int) {
	ls := []int64{0, 1, 2, 3, 4, 5, 6, 7}
	if n >= 0 {
		m.rng.Shuffle(len(ls), func(i, j int) { ls[i], ls[j] = ls[j], ls[i] })
		ls = ls[:n]
	}
	for _, l := range ls {
		if m.uncertain[l] {
			continue
		}
		es, ok := m.live[l]
		if !ok {
			_, err := m.s.GetEntry(l, 0)
			require.True(m.t, errors.Is(err, ErrNoLedger) || errors.Is(err, ErrNoEntry), "step %d: ledger %d: %v", step, l, err)
			continue
		}
		for _, e := range slices.Sorted(maps.Keys(es)) {
			requireEntry(m.t, m.s, l, e, es[e])
		}
		requireNoEntry(m.t, m.s, l, 1000)
	}
}

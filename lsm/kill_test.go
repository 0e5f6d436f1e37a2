package lsm

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/internal/killtest"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var (
	killRounds = flag.Int("kill-rounds", 8, "SIGKILL rounds of TestKillWriterProcess and (when set) TestKillShortLivedWriters")
	killSeed   = flag.Int64("kill-seed", 0, "seed of the kill tests' random lifetimes, to replay a logged run (0: from the clock)")
	killFull   = flag.Bool("kill-full", false, "TestKillShortLivedWriters runs its full variant: 500 rounds of 150–750 ms writers")
)

// killRound runs TestKillChild in mode on dir, writing batches from id
// first on, for life (or, with atLeastOneAck, until its first
// acknowledgement if that comes later), and SIGKILLs it. It returns the
// acknowledged ids; it fails the test if the child ended by itself (an
// error: it writes until killed) or acknowledged nothing when it had to.
func killRound(t *testing.T, mode, dir string, first int, life time.Duration, atLeastOneAck bool) []int {
	t.Helper()
	return killtest.Round{
		Test:          "TestKillChild",
		Env:           []string{"LSM_KILL_CHILD=" + dir, "LSM_KILL_MODE=" + mode, "LSM_KILL_FIRST=" + strconv.Itoa(first)},
		Life:          life,
		AtLeastOneAck: atLeastOneAck,
	}.Run(t).Acks
}

// killTestSeed returns the seed of a kill test's random choices, logging it.
func killTestSeed(t *testing.T) int64 {
	return killtest.Seed(t, *killSeed, "kill-seed")
}

// checkKillBatches checks batches [from, to) of a kill test's DB: each is
// there in full or not at all, and an acknowledged one is there.
func checkKillBatches(t *testing.T, d *DB, mode string, from, to int, acked map[int]bool, round int) {
	t.Helper()
	for id := from; id < to; id++ {
		n := 0
		for i := 0; i < crashBatchKeys; i++ {
			v, err := d.Get(killKey(mode, id, i))
			if errors.Is(err, ErrNotFound) {
				continue
			}
			require.NoError(t, err)
			require.Equal(t, uint64(id), binary.BigEndian.Uint64(v))
			n++
		}
		require.True(t, n == 0 || n == crashBatchKeys, "round %d: batch %d partly visible", round, id)
		if acked[id] {
			require.Equal(t, crashBatchKeys, n, "round %d: acknowledged batch %d lost", round, id)
		}
	}
}

// TestKillWriterProcess runs a child process that applies synced batches to
// a DB on the real file system and reports each acknowledged batch on
// stdout; the parent kills it with SIGKILL at a random moment (after its
// first acknowledgement), reopens the DB and checks that every
// acknowledged batch is there in full and no batch is partly visible. Then
// it does it again on the same directory.
func TestKillWriterProcess(t *testing.T) {
	if os.Getenv("LSM_KILL_CHILD") != "" {
		t.Skip("child mode runs in TestMain-less helper below")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := filepath.Join(t.TempDir(), "db")
	rng := rand.New(rand.NewSource(killTestSeed(t)))
	acked := map[int]bool{}
	next := 1
	for round := 0; round < *killRounds; round++ {
		ids := killRound(t, "", dir, next, time.Duration(50+rng.Intn(250))*time.Millisecond, true)
		for _, id := range ids {
			acked[id] = true
			next = max(next, id+1)
		}
		next += 1000 // ids the child may have started but not acknowledged

		d, err := Open(dir, &Options{WriteBufferSize: 256 << 10})
		require.NoError(t, err, "round %d: reopen after SIGKILL", round)
		checkKillBatches(t, d, "", 1, next, acked, round)
		require.NoError(t, d.Close())
		t.Logf("round %d: %d batches acknowledged so far", round, len(acked))
	}
}

// killShortOptions are the options of TestKillShortLivedWriters' writers:
// small tables and triggers, so that a few seconds of writing make a tree
// whose L0 compactions take longer than a writer lives.
func killShortOptions() *Options {
	return &Options{
		WriteBufferSize:                64 << 10,
		TargetFileSizeBase:             64 << 10, // (MaxCompactionBytes: its default, 25 × this)
		MaxBytesForLevelBase:           1 << 20,
		Level0FileNumCompactionTrigger: 2,
		Level0SlowdownWritesTrigger:    4,
		Level0StopWritesTrigger:        6,
	}
}

// TestKillShortLivedWriters is a crash-looping writer: a child opens the
// DB, writes synced batches for a random 150–750 ms (60–200 ms in the short
// variant) and is SIGKILLed, again and again. Each open flushes the
// replayed WAL to L0, and compactions rarely have time to finish: L0 must
// still stay at most twice the stop trigger (the flush at open waits for
// room, and each compaction step is bounded and kept), and every
// acknowledged batch must survive. The parent looks at the DB read-only
// between rounds, so that it lends the writers no compaction time.
//
// CI runs 40 short rounds; -kill-full runs 500 rounds of 150–750 ms
// (-kill-rounds N overrides the count; -kill-seed replays a run).
func TestKillShortLivedWriters(t *testing.T) {
	if os.Getenv("LSM_KILL_CHILD") != "" {
		t.Skip("child mode runs in TestKillChild")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if raceEnabled && !*killFull {
		// Race-instrumented writers are too slow to make progress in 150 ms;
		// CI runs the test without the race detector too.
		t.Skip("timing-based: runs without the race detector")
	}
	// CI's variant: fewer rounds, the shortest lives. Lives of 60-200
	// ms made no progress for 25 rounds on a loaded 2-core machine (a step
	// of the L0 compaction did not fit in a life); -kill-full runs the
	// issue's 500 rounds of 150-750 ms.
	rounds, minLife, maxLife := 30, 150, 400
	if *killFull {
		rounds, minLife, maxLife = 500, 150, 750
	}
	if killtest.FlagSet("kill-rounds") {
		rounds = *killRounds
	}
	const mode = "short"
	stop := killShortOptions().Level0StopWritesTrigger
	dir := filepath.Join(t.TempDir(), "db")
	rng := rand.New(rand.NewSource(killTestSeed(t)))
	start := time.Now()
	acked := map[int]bool{}
	next, maxL0, idle := 1, 0, 0
	for round := 0; round < rounds; round++ {
		first := next
		life := time.Duration(minLife+rng.Intn(maxLife-minLife+1)) * time.Millisecond
		ids := killRound(t, mode, dir, first, life, false)
		for _, id := range ids {
			acked[id] = true
			next = max(next, id+2) // (+1: a batch written but not acknowledged)
		}
		if idle = idle + 1; len(ids) > 0 {
			idle = 0
		}
		require.Less(t, idle, 25, "round %d: no batch acknowledged in 25 rounds", round)
		if len(acked) == 0 {
			// A child killed before it created the DB left nothing to open
			// (seen under load in round 0); nothing was acknowledged either.
			if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
				continue
			}
		}

		d, err := Open(dir, &Options{ReadOnly: true})
		require.NoError(t, err, "round %d: read-only open after SIGKILL", round)
		l0 := d.Metrics().Levels[0].Tables
		maxL0 = max(maxL0, l0)
		checkKillBatches(t, d, mode, first, next, acked, round)
		// And a sample of the earlier batches.
		for range 20 {
			id := 1 + rng.Intn(first)
			checkKillBatches(t, d, mode, id, id+1, acked, round)
		}
		require.NoError(t, d.Close())
		require.LessOrEqual(t, l0, 2*stop, "round %d: L0 holds %d tables (stop trigger %d)", round, l0, stop)
		if round%25 == 0 {
			t.Logf("round %d (%v): L0 %d tables, max %d; %d batches acknowledged", round, life, l0, maxL0, len(acked))
		}
	}
	d, err := Open(dir, &Options{ReadOnly: true})
	require.NoError(t, err)
	checkKillBatches(t, d, mode, 1, next, acked, rounds)
	m := d.Metrics()
	require.NoError(t, d.Close())
	var levels []string
	for level, lm := range m.Levels {
		if lm.Tables > 0 {
			levels = append(levels, fmt.Sprintf("L%d %d tables %d KiB", level, lm.Tables, lm.Bytes>>10))
		}
	}
	t.Logf("%d rounds in %v: max L0 %d tables (stop trigger %d); %d batches acknowledged, all present; %s",
		rounds, time.Since(start).Round(time.Millisecond), maxL0, stop, len(acked), strings.Join(levels, ", "))
}

// killKey is the key of entry i of batch id. The short-lived writers'
// batches spread over 64 "ledgers", so that every L0 table spans the whole
// key space, as a bookie's do.
func killKey(mode string, id, i int) []byte {
	if mode == "short" {
		return []byte(fmt.Sprintf("l%02d-%08d-%02d", id%64, id, i))
	}
	return crashKey(id, i)
}

// TestKillChild is the child of the kill tests: it writes batches until
// killed, reporting those a sync made durable.
func TestKillChild(t *testing.T) {
	dir := os.Getenv("LSM_KILL_CHILD")
	if dir == "" {
		t.Skip("only runs as the child of TestKillWriterProcess")
	}
	mode := os.Getenv("LSM_KILL_MODE")
	first, _ := strconv.Atoi(os.Getenv("LSM_KILL_FIRST"))
	o := &Options{WriteBufferSize: 256 << 10, TargetFileSizeBase: 256 << 10, Level0FileNumCompactionTrigger: 2}
	if mode == "short" {
		o = killShortOptions()
	}
	d, err := Open(dir, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "OPEN FAILED", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	value := make([]byte, 8+200)
	rng := rand.New(rand.NewSource(int64(first)))
	for id := first; ; id++ {
		var b Batch
		for i := 0; i < crashBatchKeys; i++ {
			v := value[:8+id%64]
			if mode == "short" {
				// Incompressible: the tables' size is the data's.
				v = value[:8+100+id%100]
				rng.Read(v[8:])
			}
			binary.BigEndian.PutUint64(v, uint64(id))
			b.Set(killKey(mode, id, i), v)
		}
		// The short-lived writers sync every 64th batch, which makes the
		// batches before it durable too, and acknowledge them together.
		sync := mode != "short" || id%64 == 0
		wo := NoSync
		if sync {
			wo = Sync
		}
		if err := d.Apply(&b, wo); err != nil {
			fmt.Fprintln(os.Stderr, "APPLY FAILED", err)
			os.Exit(3)
		}
		if sync {
			for ; first <= id; first++ {
				fmt.Fprintf(out, "ACK %d\n", first)
			}
			out.Flush()
		}
	}
}

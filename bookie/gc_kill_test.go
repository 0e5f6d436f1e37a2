package bookie

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/internal/killtest"
	"github.com/stretchr/testify/require"
)

var (
	gcKillRounds = flag.Int("gc-kill-rounds", 4, "SIGKILL rounds of TestKillDuringGC")
	gcKillSeed   = flag.Int64("gc-kill-seed", 0, "seed of TestKillDuringGC's kill times, to replay a logged run (0: from the clock)")
)

// gcKillLedgers are the ledgers batch b of the GC kill test writes: 12,
// interleaved in the logs; those with id%4 != 0 are then deleted.
func gcKillLedgers(b int) (first, last int64) { return int64(b*12 + 1), int64(b*12 + 12) }

func gcKillPayload(l, e int64) []byte {
	return fmt.Appendf(nil, "ledger %d entry %d %s", l, e, strings.Repeat("g", int((l*13+e)%400)))
}

// TestKillDuringGC runs a child that writes a batch of ledgers
// interleaved in small logs on the real file system, checkpoints,
// deletes three in four, acknowledges the batch, then runs forced GC
// cycles (throttled, so that kills land inside compactions) until the
// parent kills it with SIGKILL at a random moment up to 300 ms after the
// acknowledgement. After each kill the storage reopens (finishing an
// interrupted compaction) with every entry of the kept ledgers of every
// batch, byte for byte, and the deleted ones gone. A child that exits by
// itself (an error) or acknowledges nothing within 30 s fails the test;
// -gc-kill-seed replays a logged run.
func TestKillDuringGC(t *testing.T) {
	if os.Getenv("BOOKIE_GC_KILL_DIR") != "" {
		t.Skip("the child runs TestKillDuringGCChild")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	rng := rand.New(rand.NewSource(killtest.Seed(t, *gcKillSeed, "gc-kill-seed")))
	for round := 0; round < *gcKillRounds; round++ {
		cycles := 0
		res := killtest.Round{
			Test:             "TestKillDuringGCChild",
			Env:              []string{"BOOKIE_GC_KILL_DIR=" + root, "BOOKIE_GC_KILL_BATCH=" + strconv.Itoa(round)},
			Life:             time.Duration(rng.Intn(300)) * time.Millisecond,
			LifeFromFirstAck: true,
			KillOn: func(line string) bool {
				if line == "CYCLE" {
					cycles++
				}
				return false
			},
		}.Run(t)
		require.Equal(t, []int{round}, res.Acks, "round %d: the batch's deletions are acknowledged", round)

		s, err := Open(osGCKillOptions(root))
		require.NoError(t, err, "round %d: reopen after SIGKILL", round)
		for b := 0; b <= round; b++ {
			first, last := gcKillLedgers(b)
			for l := first; l <= last; l++ {
				if l%4 != 0 {
					requireNoLedger(t, s, l)
					continue
				}
				for e := int64(0); e < 40; e++ {
					requireEntry(t, s, l, e, gcKillPayload(l, e))
				}
			}
		}
		require.NoError(t, s.Close())
		t.Logf("round %d: killed after %d GC cycles", round, cycles)
	}
}

func osGCKillOptions(root string) *Options {
	o := osOptions(root, 1)
	o.LogSizeLimit = 16 << 10
	o.GC.CompactionRateByEntries = 5000
	return o
}

// TestKillDuringGCChild is the child of TestKillDuringGC.
func TestKillDuringGCChild(t *testing.T) {
	root := os.Getenv("BOOKIE_GC_KILL_DIR")
	if root == "" {
		t.Skip("only runs as the child of TestKillDuringGC")
	}
	batch, _ := strconv.Atoi(os.Getenv("BOOKIE_GC_KILL_BATCH"))
	fail := func(what string, err error) {
		fmt.Println("FAIL", what+":", err)
		os.Exit(3)
	}
	s, err := Open(osGCKillOptions(root))
	if err != nil {
		fail("open", err)
	}
	first, last := gcKillLedgers(batch)
	for e := int64(0); e < 40; e++ {
		for l := first; l <= last; l++ {
			if err := s.AddEntry(l, e, gcKillPayload(l, e)); err != nil {
				fail("add", err)
			}
		}
		if err := s.Checkpoint(); err != nil {
			fail("checkpoint", err)
		}
	}
	for l := first; l <= last; l++ {
		if l%4 != 0 {
			if _, err := s.DeleteLedger(l); err != nil {
				fail("delete", err)
			}
		}
	}
	// The deletions are durable: acknowledged. Then GC until killed.
	fmt.Printf("ACK %d\n", batch)
	for {
		if _, err := s.RunGC(GCRequest{Force: true}); err != nil {
			fail("gc", err)
		}
		fmt.Println("CYCLE")
	}
}

package bookie

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/internal/killtest"
	"github.com/stretchr/testify/require"
)

var (
	killRounds = flag.Int("kill-rounds", 6, "SIGKILL rounds of TestKillProcess")
	killSeed   = flag.Int64("kill-seed", 0, "seed of TestKillProcess's random choices, to replay a logged run (0: from the clock)")
)

// killEntries are the entries of checkpoint c of the kill test: ten
// entries of one of seven ledgers.
func killEntries(c int) (ledgerID int64, first, count int64) {
	return int64(c%7 + 1), int64(c/7) * 10, 10
}

func killPayload(ledgerID, entryID int64, c int) []byte {
	return fmt.Appendf(nil, "checkpoint %d ledger %d entry %d %s", c, ledgerID, entryID, strings.Repeat("k", int(entryID%500)))
}

// TestKillProcess runs a child process that writes entries and
// checkpoints on the real file system, printing each checkpoint it
// completes. The parent kills it with SIGKILL: in odd rounds while a
// checkpoint is stopped between the entry-log fsync and the index write,
// in even rounds at a random moment after its first acknowledged
// checkpoint. After each kill the storage reopens with every acknowledged
// checkpoint's entries, and the unacknowledged checkpoint is there in full
// or not at all. A child that exits by itself (an error) or acknowledges
// nothing within 30 s fails the test; -kill-seed replays a logged run.
func TestKillProcess(t *testing.T) {
	if os.Getenv("BOOKIE_KILL_DIR") != "" {
		t.Skip("the child runs TestKillChild")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	rng := rand.New(rand.NewSource(killtest.Seed(t, *killSeed, "kill-seed")))
	acked := map[int]bool{}
	next := 0
	for round := range *killRounds {
		gap := round%2 == 1
		r := killtest.Round{
			Test:          "TestKillChild",
			Env:           []string{"BOOKIE_KILL_DIR=" + root, "BOOKIE_KILL_FIRST=" + strconv.Itoa(next)},
			Life:          time.Duration(100+rng.Intn(400)) * time.Millisecond,
			AtLeastOneAck: true,
		}
		stallAt := -1
		if gap {
			stallAt = next + 3 + rng.Intn(20)
			r.Env = append(r.Env, "BOOKIE_KILL_STALL="+strconv.Itoa(stallAt))
			r.Life = 0 // until the child stops in the gap
			r.KillOn = func(line string) bool { return strings.HasPrefix(line, "GAP ") }
		}
		first := next
		res := r.Run(t)
		for _, n := range res.Acks {
			acked[n] = true
			next = max(next, n+1)
		}
		if gap {
			// The child stops in checkpoint stallAt, having acknowledged
			// every one before it.
			require.Equal(t, stallAt-first, len(res.Acks), "round %d: checkpoints acknowledged before the gap", round)
			require.Equal(t, stallAt, next, "round %d", round)
		}
		unacked := next // the checkpoint the child was in when it died
		next += 2

		s, err := Open(osKillOptions(root))
		require.NoError(t, err, "round %d: reopen after SIGKILL", round)
		for c := 0; c <= unacked; c++ {
			l, first, count := killEntries(c)
			present := 0
			for e := first; e < first+count; e++ {
				got, err := s.GetEntry(l, e)
				if err == nil {
					require.Equal(t, string(killPayload(l, e, c)), string(got))
					present++
				}
			}
			if acked[c] {
				require.Equal(t, int(count), present, "round %d: acknowledged checkpoint %d lost entries", round, c)
			} else if c == unacked {
				require.True(t, present == 0 || present == int(count), "round %d: checkpoint %d partly visible (%d)", round, c, present)
				if gap {
					require.Zero(t, present, "round %d: killed before the index write", round)
				}
			}
		}
		require.NoError(t, s.Close())
		t.Logf("round %d (gap %v): %d checkpoints acknowledged", round, gap, len(acked))
	}
}

func osKillOptions(root string) *Options {
	o := osOptions(root, 1)
	o.LogSizeLimit = 16 << 10
	return o
}

// TestKillChild is the child of TestKillProcess.
func TestKillChild(t *testing.T) {
	root := os.Getenv("BOOKIE_KILL_DIR")
	if root == "" {
		t.Skip("only runs as the child of TestKillProcess")
	}
	first, _ := strconv.Atoi(os.Getenv("BOOKIE_KILL_FIRST"))
	stallAt := -1
	if v := os.Getenv("BOOKIE_KILL_STALL"); v != "" {
		stallAt, _ = strconv.Atoi(v)
	}
	s, err := Open(osKillOptions(root))
	if err != nil {
		fmt.Println("FAIL open:", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	var current atomic.Int64
	s.Dirs()[0].hooks.Store(&testHooks{afterEntryLogFlush: func() error {
		if c := current.Load(); c == int64(stallAt) {
			fmt.Printf("GAP %d\n", c)
			time.Sleep(time.Hour)
		}
		return nil
	}})
	for c := first; ; c++ {
		current.Store(int64(c))
		l, e0, count := killEntries(c)
		for e := e0; e < e0+count; e++ {
			if err := s.AddEntry(l, e, killPayload(l, e, c)); err != nil {
				fmt.Println("FAIL add:", err)
				os.Exit(3)
			}
		}
		if err := s.Checkpoint(); err != nil {
			fmt.Println("FAIL checkpoint:", err)
			os.Exit(3)
		}
		fmt.Fprintf(out, "ACK %d\n", c)
		out.Flush()
	}
}

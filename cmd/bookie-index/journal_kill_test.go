package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/internal/killtest"
	"github.com/stretchr/testify/require"
)

var (
	serveKillRounds = flag.Int("serve-kill-rounds", 3, "rounds of TestServeKillJournal (the long run: -serve-kill-rounds 300)")
	serveKillSeed   = flag.Int64("serve-kill-seed", 0, "replay TestServeKillJournal's random choices")
)

// killAck is an entry a PUT got 200 for.
type killAck struct {
	ledger, entry int64
	payload       []byte
	round         int
}

// TestServeKillJournal is the journal's promise through the built binary:
// serve with two ledger directories and two journals
// (journalDirectories), 4 to 8 concurrent writers PUT entries of random
// sizes over HTTP, and serve is SIGKILLed at a random moment (0 to 1.5 s
// after the first 200), never asked for a checkpoint; its own
// checkpoints (every flushInterval, chosen per round between 50 ms and an
// hour, and when the small write cache fills) come and go, and the
// journals roll and drop files (journalMaxSizeMB=1). Each round starts
// serve again on the same directories (it replays the journals) and reads
// back, byte for byte, every entry the round before acknowledged and a
// sample of the older ones; the last start reads back every entry any
// round acknowledged, and the journal directories hold BookKeeper .txn
// files. The seed is logged; -serve-kill-seed replays the choices,
// -serve-kill-rounds sets the rounds (3 by default, for CI; hundreds for
// the long run).
func TestServeKillJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	seed := killtest.Seed(t, *serveKillSeed, "serve-kill-seed")
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	bin := filepath.Join(root, "bookie-index")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(root, "l1") + "," + filepath.Join(root, "l2"),
		"journalDirectories=" + filepath.Join(root, "j1") + "," + filepath.Join(root, "j2"),
		"journalMaxSizeMB=1",
		"journalMaxBackups=1",
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"prometheusStatsHttpEnable=false",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
		"dbStorage_writeCacheMaxSizeMb=8",
		"dbStorage_readAheadCacheMaxSizeMb=4",
		"nettyMaxFrameSizeBytes=1048576",
	}, "\n")+"\n"), 0o600))

	listening := regexp.MustCompile(`msg="admin HTTP server listening" addr=(\S+)`)
	client := &http.Client{Timeout: 10 * time.Second}
	entryURL := func(base string, l, e int64) string {
		return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l, e)
	}
	var acked []killAck
	next := map[int64]int64{} // each ledger's next entry id
	var errsMu sync.Mutex
	var errs []string
	fail := func(format string, args ...any) {
		errsMu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		errsMu.Unlock()
	}
	// verify reads back acks, with 8 readers; it reports failures
	// through fail.
	verify := func(base string, acks []killAck) {
		var readers sync.WaitGroup
		for r := range 8 {
			readers.Go(func() {
				for i := r; i < len(acks); i += 8 {
					a := acks[i]
					resp, err := client.Get(entryURL(base, a.ledger, a.entry))
					if err != nil {
						fail("reading back ledger %d entry %d (acknowledged in round %d): %v", a.ledger, a.entry, a.round, err)
						return
					}
					body, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusOK || !bytes.Equal(body, a.payload) {
						fail("ledger %d entry %d (acknowledged in round %d, %d bytes): got %d, %d bytes: %.200q", a.ledger, a.entry, a.round,
							len(a.payload), resp.StatusCode, len(body), body)
					}
				}
			})
		}
		readers.Wait()
	}

	rounds := *serveKillRounds
	for round := 0; round <= rounds; round++ {
		last := round == rounds // a last start only reads back
		writers := 4 + rng.Intn(5)
		flushInterval := []int{50, 500, 3_600_000}[rng.Intn(3)]
		life := time.Duration(rng.Intn(1500)) * time.Millisecond
		// What this start reads back before it writes: the last round's
		// acknowledgements and a sample of the older ones (all of them
		// at the last start).
		var check []killAck
		for _, a := range acked {
			if last || a.round == round-1 || rng.Intn(len(acked)/200+1) == 0 {
				check = append(check, a)
			}
		}
		wrng := make([]*rand.Rand, writers)
		for w := range wrng {
			wrng[w] = rand.New(rand.NewSource(rng.Int63()))
		}

		started := make(chan struct{})
		var startOnce sync.Once
		stop := make(chan struct{})
		var mu sync.Mutex
		var roundAcks []killAck
		var wg sync.WaitGroup
		write := func(base string, w int) {
			r := wrng[w]
			for {
				select {
				case <-stop:
					return
				default:
				}
				ledger := int64(w*10 + r.Intn(3))
				mu.Lock()
				entry := next[ledger]
				next[ledger]++
				mu.Unlock()
				payload := make([]byte, r.Intn(32<<10))
				r.Read(payload)
				req, err := http.NewRequest(http.MethodPut, entryURL(base, ledger, entry), bytes.NewReader(payload))
				if err != nil {
					fail("%v", err)
					return
				}
				resp, err := client.Do(req)
				if err != nil {
					return // killed
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					mu.Lock()
					roundAcks = append(roundAcks, killAck{ledger, entry, payload, round})
					mu.Unlock()
					startOnce.Do(func() { close(started) })
				case http.StatusServiceUnavailable: // a full write cache: not acknowledged
				default:
					fail("round %d: PUT ledger %d entry %d: %d %s", round, ledger, entry, resp.StatusCode, body)
					return
				}
			}
		}
		var once sync.Once
		res := killtest.Round{
			Command: []string{bin, "serve", "--conf", confPath, "--set", fmt.Sprintf("flushInterval=%d", flushInterval)},
			Dir:     root,
			Stderr:  true,
			Start:   started,
			Life:    life,
			// The start replays the journals and reads back check first.
			NoProgress: killtest.DefaultNoProgress + time.Duration(len(check))*time.Millisecond,
			KillOn: func(line string) bool {
				m := listening.FindStringSubmatch(line)
				if m == nil {
					return false
				}
				once.Do(func() {
					base := "http://" + m[1]
					wg.Go(func() {
						verify(base, check)
						if last {
							startOnce.Do(func() { close(started) })
							return
						}
						for w := range writers {
							wg.Go(func() { write(base, w) })
						}
					})
				})
				return false
			},
		}.Run(t)
		_ = res
		close(stop)
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("round %d (seed %d, %d writers, flushInterval=%d, killed %v after the first 200): %d problems, the first:\n%s",
				round, seed, writers, flushInterval, life, len(errs), strings.Join(errs[:min(len(errs), 10)], "\n"))
		}
		acked = append(acked, roundAcks...)
		if !last {
			require.NotEmpty(t, roundAcks, "round %d acknowledged nothing", round)
			t.Logf("round %d: %d writers, flushInterval=%d ms, killed %v after the first 200: %d entries acknowledged; %d read back at its start",
				round, writers, flushInterval, life, len(roundAcks), len(check))
		}
	}
	t.Logf("%d rounds, %d acknowledged entries, all read back at the last start", rounds, len(acked))
	for _, j := range []string{"j1", "j2"} {
		names, err := filepath.Glob(filepath.Join(root, j, "current", "*.txn"))
		require.NoError(t, err)
		require.NotEmpty(t, names, "journal %s holds BookKeeper .txn files", j)
	}
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServeMemoryUnderConcurrentPuts measures, from outside, the resident
// memory of a built serve while many large entries are PUT at once, and
// after: it must stay under a bound set by the write cache and the bytes
// in flight, and come back near where it started.
//
// CI runs it small. The full measurement of docs/operations.md ("Capacity
// sizing") is 80 concurrent PUTs of 15 MiB with the default write cache,
// and 16 MiB entries allowed:
//
//	BOOKIE_INDEX_MEM_PUTS=80 BOOKIE_INDEX_MEM_ENTRY_MIB=15 BOOKIE_INDEX_MEM_WRITE_CACHE_MB=512 \
//	BOOKIE_INDEX_MEM_LIMIT_MIB=1024 go test -count=1 -v -run TestServeMemoryUnderConcurrentPuts ./cmd/bookie-index/
//
// BOOKIE_INDEX_MEM_BIN=path measures that binary instead of building one.
func TestServeMemoryUnderConcurrentPuts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads VmRSS from /proc")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	env := func(name string, def int) int {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, name)
			return n
		}
		return def
	}
	puts := env("BOOKIE_INDEX_MEM_PUTS", 24)
	entryMiB := env("BOOKIE_INDEX_MEM_ENTRY_MIB", 4)
	writeCacheMB := env("BOOKIE_INDEX_MEM_WRITE_CACHE_MB", 64)
	// The bound: the write cache, the bytes in flight (a quarter of it,
	// or one entry), the journal's copy of the adds it has not written
	// yet (16 MiB, or one entry beyond) and 128 MiB for the runtime, the
	// indexes and the garbage not yet collected.
	inFlightMiB := max(writeCacheMB/4, entryMiB+1)
	journalMiB := 16 + entryMiB + 1
	limitMiB := env("BOOKIE_INDEX_MEM_LIMIT_MIB", writeCacheMB+inFlightMiB+journalMiB+128)

	root := t.TempDir()
	bin := os.Getenv("BOOKIE_INDEX_MEM_BIN") // another build to measure (an older one, for a comparison)
	if bin == "" {
		bin = filepath.Join(root, "bookie-index")
		out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
		require.NoError(t, err, "go build: %s", out)
	}
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + filepath.Join(root, "ledgers"),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"flushInterval=1000",
		fmt.Sprintf("dbStorage_writeCacheMaxSizeMb=%d", writeCacheMB),
		fmt.Sprintf("nettyMaxFrameSizeBytes=%d", (entryMiB+1)<<20),
	}, "\n")+"\n"), 0o600))
	p := startServe(t, bin, confPath)
	pid := p.cmd.Process.Pid

	rss := func() int64 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, err := strconv.ParseInt(f[1], 10, 64)
				require.NoError(t, err)
				return kb << 10
			}
		}
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
		return 0
	}
	idle := rss()
	var peak atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r := rss(); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	// Every PUT is retried on 503 (Retry-After) until it is taken.
	payload := bytes.Repeat([]byte("0123456789abcdef"), entryMiB<<20/16)
	var mu sync.Mutex
	codes := map[int]int{}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range puts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=0", p.base, i)
			for attempt := 0; ; attempt++ {
				req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(payload))
				if err != nil {
					t.Error(err)
					return
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				mu.Unlock()
				if resp.StatusCode != http.StatusServiceUnavailable || attempt > 1000 {
					if resp.StatusCode != http.StatusOK {
						t.Errorf("PUT of ledger %d: %s", i, resp.Status)
					}
					return
				}
				if ra := resp.Header.Get("Retry-After"); ra != "1" {
					t.Errorf("503 with Retry-After %q", ra)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	afterPuts := rss()

	// Back near idle once the checkpoints have written the caches (and
	// still there a few seconds later).
	var settled int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		settled = rss()
		if settled <= idle+64<<20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	settledAfter := time.Since(start) - elapsed
	time.Sleep(3 * time.Second)
	settled = rss()
	close(stopSampling)
	<-sampled
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	t.Logf("%d concurrent PUTs of %d MiB, write cache %d MiB: %s; answers %v; RSS idle %s, peak %s, after the PUTs %s, "+
		"under idle+64 MiB %s later, %s 3 s after that",
		puts, entryMiB, writeCacheMB, elapsed.Round(time.Millisecond), codes, mib(idle), mib(peak.Load()), mib(afterPuts),
		settledAfter.Round(100*time.Millisecond), mib(settled))
	require.Equal(t, puts, codes[http.StatusOK], "every PUT taken in the end")
	require.LessOrEqual(t, peak.Load(), int64(limitMiB)<<20, "peak RSS over %d MiB", limitMiB)
	require.LessOrEqual(t, settled, idle+64<<20, "RSS did not come back near its idle %s", mib(idle))

	// Everything is there.
	for i := range puts {
		code, body := request(t, http.MethodGet, fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=0", p.base, i), "", "")
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, len(payload), len(body), "ledger %d", i)
	}
	require.NoError(t, p.stop(t, syscall.SIGTERM))
}

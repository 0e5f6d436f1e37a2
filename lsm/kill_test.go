package lsm

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var killRounds = flag.Int("kill-rounds", 8, "SIGKILL rounds of TestKillWriterProcess")

// TestKillWriterProcess runs a child process that applies synced batches to
// a DB on the real file system and reports each acknowledged batch on
// stdout; the parent kills it with SIGKILL at a random moment, reopens the
// DB and checks that every acknowledged batch is there in full and no batch
// is partly visible. Then it does it again on the same directory.
func TestKillWriterProcess(t *testing.T) {
	if os.Getenv("LSM_KILL_CHILD") != "" {
		t.Skip("child mode runs in TestMain-less helper below")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := filepath.Join(t.TempDir(), "db")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	acked := map[int]bool{}
	next := 1
	for round := 0; round < *killRounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.v")
		cmd.Env = append(os.Environ(), "LSM_KILL_CHILD="+dir, "LSM_KILL_FIRST="+strconv.Itoa(next))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		deadline := time.After(time.Duration(50+rng.Intn(250)) * time.Millisecond)
		lines := make(chan int, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
					n, _ := strconv.Atoi(id)
					lines <- n
				}
			}
			close(lines)
		}()
	wait:
		for {
			select {
			case id, ok := <-lines:
				if !ok {
					break wait
				}
				acked[id] = true
				next = max(next, id+1)
			case <-deadline:
				_ = cmd.Process.Signal(syscall.SIGKILL)
				for id := range lines {
					acked[id] = true
					next = max(next, id+1)
				}
				break wait
			}
		}
		_ = cmd.Wait()
		next += 1000 // ids the child may have started but not acknowledged

		d, err := Open(dir, &Options{WriteBufferSize: 256 << 10})
		require.NoError(t, err, "round %d: reopen after SIGKILL", round)
		for id := 1; id < next; id++ {
			n := 0
			for i := 0; i < crashBatchKeys; i++ {
				v, err := d.Get(crashKey(id, i))
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
		require.NoError(t, d.Close())
		t.Logf("round %d: %d batches acknowledged so far", round, len(acked))
	}
}

// TestKillChild is the child of TestKillWriterProcess: it writes synced
// batches until killed.
func TestKillChild(t *testing.T) {
	dir := os.Getenv("LSM_KILL_CHILD")
	if dir == "" {
		t.Skip("only runs as the child of TestKillWriterProcess")
	}
	first, _ := strconv.Atoi(os.Getenv("LSM_KILL_FIRST"))
	d, err := Open(dir, &Options{WriteBufferSize: 256 << 10, TargetFileSizeBase: 256 << 10, Level0FileNumCompactionTrigger: 2})
	if err != nil {
		fmt.Println("OPEN FAILED", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	for id := first; ; id++ {
		var b Batch
		for i := 0; i < crashBatchKeys; i++ {
			v := make([]byte, 8+id%64)
			binary.BigEndian.PutUint64(v, uint64(id))
			b.Set(crashKey(id, i), v)
		}
		if err := d.Apply(&b, Sync); err != nil {
			fmt.Println("APPLY FAILED", err)
			os.Exit(3)
		}
		fmt.Fprintf(out, "ACK %d\n", id)
		out.Flush()
	}
}

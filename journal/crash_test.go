package journal

import (
	"flag"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/internal/killtest"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

var crashSeed = flag.Int64("crash-seed", 0, "replay TestCrashAtEveryStep's random choices")

// crashImage is the file system as a power loss before one operation left
// it, and the adds that had completed by then.
type crashImage struct {
	op   vfs.Op
	fs   *vfs.MemFS
	done []addRecord
}

// completedAdds is the adds completed so far, appended by the writers
// after each add's completion and read by the injector before each
// image, so that an add listed was durable before the image was taken.
type completedAdds struct {
	mu   sync.Mutex
	adds []addRecord
}

func (c *completedAdds) add(r addRecord) {
	c.mu.Lock()
	c.adds = append(c.adds, r)
	c.mu.Unlock()
}

func (c *completedAdds) snapshot() []addRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.adds[:len(c.adds):len(c.adds)]
}

// TestCrashAtEveryStep takes a power-loss image of the in-memory file
// system before every file system operation of a workload of concurrent
// adds, checkpoints, file rolls and journal removals (unsynced bytes
// dropped, or a random prefix of them kept), and checks each: Open
// succeeds (no corruption, whatever was torn), and every add that had
// completed is either replayed, byte for byte, or behind the image's last
// log mark (the storage's job). The seed (payloads, torn tails) is logged
// and -crash-seed replays it; the goroutines' interleaving is the
// scheduler's.
func TestCrashAtEveryStep(t *testing.T) {
	seed := killtest.Seed(t, *crashSeed, "crash-seed")
	rng := rand.New(rand.NewSource(seed))
	var rngMu sync.Mutex

	mem := vfs.NewMem()
	var done completedAdds
	var images []crashImage
	var imagesMu sync.Mutex
	taking := false
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		imagesMu.Lock()
		defer imagesMu.Unlock()
		if !taking {
			return nil
		}
		adds := done.snapshot()
		rngMu.Lock()
		opts := vfs.CrashOptions{}
		if rng.Intn(2) == 0 {
			opts = vfs.CrashOptions{KeepUnsyncedTail: true, Rand: rand.New(rand.NewSource(rng.Int63()))}
		}
		rngMu.Unlock()
		images = append(images, crashImage{op: op, fs: mem.CrashClone(opts), done: adds})
		return nil
	}))

	opts := testOptions(fs)
	opts.MaxFileSize = 1500
	opts.PreAllocSize = 512     // several pre-allocations per file
	opts.MaxBackupJournals = -1 // none: every file before the mark's goes
	opts.FlushWhenQueueEmpty = false
	opts.MaxGroupWait = 200 * time.Microsecond
	s, _ := openCollect(t, opts)
	imagesMu.Lock()
	taking = true
	imagesMu.Unlock()

	const writers, adds = 4, 25
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewSource(seed + int64(g)))
			for e := range adds {
				p := make([]byte, r.Intn(120))
				r.Read(p)
				c := s.Add(int64(g), int64(e), p)
				if err := c.Wait(); err != nil {
					t.Errorf("add: %v", err)
					return
				}
				done.add(addRecord{int64(g), int64(e), string(p), c.Mark()})
				if e%8 == 7 {
					// A checkpoint: the storage flush happens between
					// taking the mark and recording it.
					m := s.CurrentMark()
					if err := s.SetCheckpointed(m); err != nil {
						t.Errorf("checkpoint: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	st := s.Journals()[0].Stats()
	require.NoError(t, s.Close())
	t.Logf("%d steps of zeros pre-allocated ahead, %d batches pre-allocated by the writer, %d files created ahead of a roll",
		st.PreallocatedAhead, st.Preallocations, st.FilesAhead)
	require.Greater(t, st.PreallocatedAhead, int64(0), "the images cover the pre-allocator's steps")
	imagesMu.Lock()
	taking = false
	images = append(images, crashImage{op: vfs.Op{Path: "(after Close)"}, fs: mem.CrashClone(vfs.CrashOptions{}), done: done.snapshot()})
	imagesMu.Unlock()

	ids, err := ListFiles(mem, "j")
	require.NoError(t, err)
	t.Logf("%d images; %d journal files left (rolled and removed)", len(images), len(ids))
	require.Greater(t, len(images), 100)

	for i, img := range images {
		mark, _ := ReadLastMark(img.fs, opts.LedgerDirectories, "lastMark")
		o := opts
		o.FS = img.fs
		got := map[string]string{}
		s, err := Open(o, func(r *Record) error {
			got[fmt.Sprint(r.LedgerID, "/", r.EntryID)] = string(r.Payload)
			return nil
		})
		require.NoError(t, err, "image %d, before %s\n%s", i, img.op, img.fs)
		require.NoError(t, s.Close())
		for _, a := range img.done {
			p, ok := got[fmt.Sprint(a.ledger, "/", a.entry)]
			if !ok {
				require.False(t, mark.Less(a.mark), "image %d, before %s: add %d/%d (ends %s) completed, neither replayed nor behind the last log mark %s\n%s",
					i, img.op, a.ledger, a.entry, a.mark, mark, img.fs)
				continue
			}
			require.Equal(t, a.payload, p, "image %d: add %d/%d", i, a.ledger, a.entry)
		}
	}
}

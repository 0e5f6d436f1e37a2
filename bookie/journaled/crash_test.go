package journaled

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

// ack is an acknowledged write: an entry (entry >= 0) or a ledger's
// deletion (entry -1); entry -2 marks a deletion begun.
type ack struct {
	ledger, entry int64
	payload       string
}

// acks are the writes acknowledged so far; an image taken before an
// operation holds every write acknowledged before it.
type acks struct {
	mu   sync.Mutex
	list []ack
}

func (a *acks) add(x ack) {
	a.mu.Lock()
	a.list = append(a.list, x)
	a.mu.Unlock()
}

func (a *acks) snapshot() []ack {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.list[:len(a.list):len(a.list)]
}

// TestCrashAtEveryStep takes a power-loss image of the one file system
// that holds the storage and the journals (unsynced bytes dropped, or a
// random prefix of them kept) before every file system operation of a
// workload of concurrent adds (group commits), checkpoints (the storage's
// flush, then lastMark), journal rolls and removals behind the mark, and
// ledger deletions; and opens each image: the open succeeds, every add
// acknowledged before the image reads back byte for byte, and every
// ledger whose deletion was acknowledged stays deleted. The seed (payloads,
// torn tails, which ledgers are deleted) is logged; -crash-seed replays it.
func TestCrashAtEveryStep(t *testing.T) {
	seed := killtest.Seed(t, *crashSeed, "crash-seed")
	rng := rand.New(rand.NewSource(seed))
	var rngMu sync.Mutex

	env := newTestEnv(2, 2)
	env.tweak = func(o *Options) {
		o.Journal.MaxFileSize = 2 << 10 // rolls, so that checkpoints remove files
		o.Journal.FlushWhenQueueEmpty = false
		o.Journal.MaxGroupWait = 300 * time.Microsecond
	}
	s := env.open(t)
	mem := env.mem

	type image struct {
		op   vfs.Op
		fs   *vfs.MemFS
		acks []ack
	}
	var done acks
	var images []image
	var imagesMu sync.Mutex
	env.setFault(func(op vfs.Op) error {
		imagesMu.Lock()
		defer imagesMu.Unlock()
		acked := done.snapshot()
		rngMu.Lock()
		opts := vfs.CrashOptions{}
		if rng.Intn(2) == 0 {
			opts = vfs.CrashOptions{KeepUnsyncedTail: true, Rand: rand.New(rand.NewSource(rng.Int63()))}
		}
		rngMu.Unlock()
		images = append(images, image{op: op, fs: mem.CrashClone(opts), acks: acked})
		return nil
	})

	// Each writer writes to three ledgers, then a few entries to a ledger
	// of its own that the deleter may delete (and nobody writes again).
	// The deleter checkpoints, and once the deletable ledgers are
	// written deletes one of directory 0's and checkpoints again: the
	// purge that directory 0's checkpoint queues runs while directory 1
	// checkpoints, before the checkpoint that covers the deletion is
	// recorded.
	const writers, adds = 4, 12
	var wg sync.WaitGroup
	var deletable sync.WaitGroup
	deletable.Add(writers)
	for g := range writers {
		r := rand.New(rand.NewSource(seed + int64(g)))
		wg.Go(func() {
			defer deletable.Done()
			add := func(ledger, entry int64) bool {
				p := make([]byte, 1+r.Intn(300))
				r.Read(p)
				if err := s.AddEntry(ledger, entry, p); err != nil {
					t.Errorf("add: %v", err)
					return false
				}
				done.add(ack{ledger, entry, string(p)})
				return true
			}
			for e := range int64(adds) {
				if !add(int64(g*10)+e%3, e) {
					return
				}
			}
			for e := range int64(3) {
				if !add(int64(100+g), e) {
					return
				}
			}
		})
	}
	wg.Go(func() {
		checkpoint := func() {
			if err := s.Checkpoint(); err != nil {
				t.Errorf("checkpoint: %v", err)
			}
		}
		for range 2 {
			time.Sleep(2 * time.Millisecond)
			checkpoint()
		}
		deletable.Wait()
		rngMu.Lock()
		ledger := int64(100 + 2*rng.Intn(writers/2)) // directory 0's
		rngMu.Unlock()
		done.add(ack{ledger, -2, ""}) // from here on its entries may be gone
		if _, err := s.DeleteLedger(ledger); err != nil {
			t.Errorf("delete: %v", err)
		}
		done.add(ack{ledger, -1, ""})
		checkpoint()
		checkpoint()
	})
	wg.Wait()
	env.setFault(nil)
	require.NoError(t, s.Close())
	images = append(images, image{op: vfs.Op{Path: "(after Close)"}, fs: mem.CrashClone(vfs.CrashOptions{}), acks: done.snapshot()})
	t.Logf("%d images", len(images))
	require.Greater(t, len(images), 200)

	for i, img := range images {
		env.mem = img.fs.CrashClone(vfs.CrashOptions{}) // img.fs stays as it was, for messages
		s, err := Open(env.options())
		require.NoError(t, err, "image %d, before %s\n%s", i, img.op, img.fs)
		deleting, deleted := map[int64]bool{}, map[int64]bool{}
		for _, a := range img.acks {
			deleting[a.ledger] = deleting[a.ledger] || a.entry == -2
			deleted[a.ledger] = deleted[a.ledger] || a.entry == -1
		}
		for _, a := range img.acks {
			if a.entry < 0 || deleting[a.ledger] {
				continue
			}
			got, err := s.GetEntry(a.ledger, a.entry)
			require.NoError(t, err, "image %d, before %s: acknowledged entry %d/%d\n%s", i, img.op, a.ledger, a.entry, img.fs)
			require.Equal(t, a.payload, string(got), "image %d, before %s: entry %d/%d", i, img.op, a.ledger, a.entry)
		}
		for l, d := range deleted {
			if !d {
				continue
			}
			ok, err := s.LedgerExists(l)
			require.NoError(t, err)
			require.False(t, ok, "image %d, before %s: ledger %d came back after its deletion\n%s", i, img.op, l, fmt.Sprint(img.fs))
		}
		require.NoError(t, s.Close())
	}
}

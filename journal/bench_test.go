package journal

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
)

// BenchmarkAdd measures adds of 1 KiB entries, each goroutine waiting for
// its add's completion before the next (a bookie's request handlers), at
// 1, 16 and 256 goroutines, on the in-memory file system (the package's
// own cost) and on the operating system's (in the test's temporary
// directory: the disk's fsyncs), with upstream's grouping (wait up to
// journalMaxGroupWaitMSec=2) and with journalFlushWhenQueueEmpty. It
// reports adds/s, the adds per fsync and per batch written.
//
//	go test ./journal -run '^$' -bench BenchmarkAdd -benchtime 2s
func BenchmarkAdd(b *testing.B) {
	for _, fsName := range []string{"mem", "os"} {
		for _, group := range []string{"wait-2ms", "flush-when-empty"} {
			for _, writers := range []int{1, 16, 256} {
				b.Run(fmt.Sprintf("fs=%s/group=%s/writers=%d", fsName, group, writers), func(b *testing.B) {
					benchmarkAdd(b, fsName, group == "flush-when-empty", writers)
				})
			}
		}
	}
}

func benchmarkAdd(b *testing.B, fsName string, flushWhenEmpty bool, writers int) {
	var fs vfs.FS = vfs.NewMem()
	dir := "."
	if fsName == "os" {
		fs, dir = vfs.Default, b.TempDir()
	}
	opts := Options{
		FS:                  fs,
		JournalDirectories:  []string{filepath.Join(dir, "journal")},
		LedgerDirectories:   []string{filepath.Join(dir, "ledgers")},
		FlushWhenQueueEmpty: flushWhenEmpty,
	}
	s, err := Open(opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 1024)
	var next atomic.Int64
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for e := next.Add(1); e <= int64(b.N); e = next.Add(1) {
				if err := s.Add(int64(g), e, payload).Wait(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	st := s.Journals()[0].Stats()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
	b.ReportMetric(float64(st.Adds)/float64(max(st.Syncs, 1)), "adds/fsync")
	b.ReportMetric(float64(st.Adds)/float64(max(st.Batches, 1)), "adds/batch")
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}

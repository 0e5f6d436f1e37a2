package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
)

// Why serve gives memory back by itself: entries live in the write cache
// until a checkpoint writes them, and then the whole cache is garbage at
// once (hundreds of MiB with the default cache). The Go runtime collects
// garbage when the heap has grown by GOGC percent since the last
// collection, and returns freed pages to the operating system only in the
// background, after a collection; a service that stops taking writes
// allocates nothing more, so nothing triggers a collection (the runtime
// forces one every two minutes) and the process keeps its peak: measured,
// 965 MiB resident after 80 concurrent 15 MiB PUTs, still 965 MiB 40 s
// later. And under load the heap grows to twice what was live at the last
// collection, a full write cache included.
//
// So serve watches the checkpoints: once they have written a quarter of
// the write cache since the last release, that much memory has just
// become garbage, and debug.FreeOSMemory collects it and returns it; and
// once writes stop (no checkpoint wrote anything for a flush interval and
// a second: the caches have also dropped their chunks by then), one more
// release brings the process back to its idle size.

// memoryReleaser decides when to release memory from the bytes the
// checkpoints wrote, sampled once a second.
type memoryReleaser struct {
	// threshold is the bytes written that justify a release; quiet how
	// long after the last write the idle release comes.
	threshold int64
	quiet     time.Duration

	lastBytes    int64     // the bytes written at the last sample
	releasedAt   int64     // the bytes written at the last release
	lastWrite    time.Time // when the bytes written last grew
	idleReleased bool      // the release after the last writes was made
}

func newMemoryReleaser(threshold int64, quiet time.Duration, now time.Time) *memoryReleaser {
	return &memoryReleaser{threshold: max(threshold, 1), quiet: quiet, lastWrite: now, idleReleased: true}
}

// sample takes the bytes the checkpoints have written so far and says
// whether to release memory now.
func (m *memoryReleaser) sample(written int64, now time.Time) bool {
	if written != m.lastBytes {
		m.lastBytes, m.lastWrite, m.idleReleased = written, now, false
	}
	switch {
	case written-m.releasedAt >= m.threshold:
		m.releasedAt = written
		return true
	case !m.idleReleased && now.Sub(m.lastWrite) >= m.quiet:
		m.releasedAt, m.idleReleased = written, true
		return true
	}
	return false
}

// releaseMemory runs the releaser over the storage until ctx is done.
func releaseMemory(ctx context.Context, storage *bookie.Storage, writeCacheBytes int64, flushInterval time.Duration, log *slog.Logger) {
	written := func() int64 {
		var n int64
		for _, m := range storage.Metrics() {
			n += m.FlushBytes
		}
		return n
	}
	m := newMemoryReleaser(writeCacheBytes/4, flushInterval+time.Second, time.Now())
	m.lastBytes, m.releasedAt = written(), written()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if m.sample(written(), now) {
				start := time.Now()
				debug.FreeOSMemory()
				log.Debug("gave freed memory back to the operating system", "duration", time.Since(start))
			}
		}
	}
}

package httpapi

import (
	"context"
	"sync"
	"time"
)

// RunPeriodicCompaction compacts every directory periodically until ctx is
// cancelled or the Service is closed, then returns. It does nothing when
// interval is not positive (entryLocationCompactionInterval disabled).
//
// As BookKeeper's garbage collector thread, each directory is compacted
// once the time since its last compaction exceeds interval plus a random
// delay in [0, interval), drawn again after each compaction, so that the
// directories (and the bookies of a cluster) do not all compact at once.
// The first period starts when RunPeriodicCompaction is called. Two
// differences: upstream checks the deadline only once per gcWaitTime,
// where this waits for the deadline itself; and a compaction triggered over
// HTTP counts as the directory's last compaction, postponing the periodic
// one. A directory still compacting at its deadline is skipped until the
// next period, as upstream skips it.
func (s *Service) RunPeriodicCompaction(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	s.log.Info("Periodic entry location compaction enabled", "interval", interval)
	var wg sync.WaitGroup
	for _, d := range s.dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.compactPeriodically(ctx, d, interval)
		}()
	}
	wg.Wait()
}

// compactPeriodically is RunPeriodicCompaction's loop for one directory.
func (s *Service) compactPeriodically(ctx context.Context, d *directory, interval time.Duration) {
	last := s.opts.Now()
	period := interval + s.randomDelay(interval)
	timer := time.NewTimer(time.Hour)
	timer.Stop() // armed below; since Go 1.23 Reset needs no draining
	defer timer.Stop()
	for {
		s.mu.Lock()
		if d.lastStart.After(last) {
			last = d.lastStart
		}
		s.mu.Unlock()
		if wait := last.Add(period).Sub(s.opts.Now()); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-s.ctx.Done():
				return
			case <-timer.C:
			}
			continue // the deadline may have moved: check again
		}
		s.log.Info("Enter entry location compaction", "path", d.path,
			"interval", interval, "randomDelay", period-interval, "last", last)
		s.startCompaction(d, TriggerPeriodic)
		last = s.opts.Now()
		period = interval + s.randomDelay(interval)
		s.log.Info("Next entry location compaction interval", "path", d.path, "interval", period)
	}
}

// randomDelay draws a delay in [0, interval), clamping what
// Options.RandomCompactionDelay returns into that range.
func (s *Service) randomDelay(interval time.Duration) time.Duration {
	d := s.opts.RandomCompactionDelay(interval)
	return max(0, min(d, interval-1))
}

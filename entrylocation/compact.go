package entrylocation

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/errors"
)

// Compact compacts the whole index down to the last level, dropping
// overwritten locations and the ranges of purged ledgers, and returns when
// it is done. One runs at a time: a call while another runs returns nil at
// once without queueing a second one (the running one covers it). It stops
// early with ctx's error when ctx is cancelled, and with an error matching
// ErrClosed (and context.Canceled) when Close interrupts it; what it
// finished stays done.
func (ix *Index) Compact(ctx context.Context) error {
	if err := ix.enter("Compact"); err != nil {
		return err
	}
	if ctx == nil {
		ix.exit()
		return errors.Wrap(ErrInvalidArgument, "entrylocation: Compact with a nil context")
	}
	ix.compactMu.Lock()
	if ix.compactCancel != nil {
		ix.compactMu.Unlock()
		ix.exit()
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	ix.compactCancel, ix.compactDone = cancel, done
	ix.compacting.Store(true)
	ix.compactMu.Unlock()
	// Registered: from here Close cancels us rather than waiting for us
	// under closeMu, so the compaction must not hold it.
	ix.exit()

	defer func() {
		cancel()
		ix.compactMu.Lock()
		ix.compactCancel, ix.compactDone = nil, nil
		ix.compacting.Store(false)
		ix.compactMu.Unlock()
		close(done)
	}()

	// Debug: the caller (the admin API, the offline tool) logs the
	// compaction it runs, with why; a second line here would double it.
	ix.logger.Debug("Starting entry location index compaction")
	start := time.Now()
	err := ix.db.Compact(ctx, nil, nil)
	if err != nil {
		ix.logger.Debug("Entry location index compaction stopped", "duration", time.Since(start), "err", err)
		if ix.isClosing() {
			// Both targets: the caller may test either.
			return fmt.Errorf("entrylocation: Compact interrupted by Close: %w: %w", ErrClosed, err)
		}
		return errors.Wrap(err, "entrylocation: Compact")
	}
	ix.logger.Debug("Entry location index compaction finished", "duration", time.Since(start))
	return nil
}

// IsCompacting reports whether a Compact is running.
func (ix *Index) IsCompacting() bool { return ix.compacting.Load() }

// isClosing reports whether Close has started.
func (ix *Index) isClosing() bool {
	ix.closeMu.RLock()
	defer ix.closeMu.RUnlock()
	return ix.closed.Load()
}

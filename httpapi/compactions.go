package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/bookie-index/bookie-index/bookie"

	"github.com/cockroachdb/errors"
)

// Trigger says what started a compaction.
type Trigger string

// Triggers.
const (
	// TriggerHTTP is a PUT of the compaction endpoint.
	TriggerHTTP Trigger = "http"
	// TriggerPeriodic is RunPeriodicCompaction.
	TriggerPeriodic Trigger = "periodic"
)

// Outcomes of a compaction, as gc_details and the metrics report them.
const (
	outcomeCompleted = "completed"
	outcomeCancelled = "cancelled"
	outcomeFailed    = "failed"
)

// directory is a Directory with its compaction state. The fields after
// path are guarded by Service.mu.
type directory struct {
	Directory
	path string

	// cancel is set while a compaction the Service started runs.
	cancel context.CancelFunc
	// cancelRequested says a DELETE asked the running compaction to stop.
	cancelRequested bool

	// counter counts the compactions started; lastStart is the start of
	// the last one (upstream's entryLocationCompactionCounter and
	// lastEntryLocationCompactionTime).
	counter   int64
	lastStart time.Time
	// lastDuration, lastOutcome and lastError describe the last one that
	// ended.
	lastDuration time.Duration
	lastOutcome  string
	lastError    string
	// outcomes counts the compactions that ended, by trigger and outcome.
	outcomes map[outcomeKey]int64
}

type outcomeKey struct {
	trigger Trigger
	outcome string
}

// compactingLocked reports whether the directory is compacting: a
// compaction the Service started runs, or the index says one runs.
func (d *directory) compactingLocked() bool {
	return d.cancel != nil || d.Index.IsCompacting()
}

// startCompaction starts a background compaction of d and reports whether
// it did. It does not when d is compacting already (upstream logs and
// skips the same way) or after Close.
func (s *Service) startCompaction(d *directory, trigger Trigger) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.log.Info("Service closed, skipping this entryLocationCompaction", "path", d.path, "trigger", trigger)
		return false
	}
	if d.compactingLocked() {
		s.mu.Unlock()
		s.log.Info("Compacting directory, skipping this entryLocationCompaction this time", "path", d.path, "trigger", trigger)
		return false
	}
	if d.IndexFiles != nil {
		if err := d.IndexFiles.CanCreateIndexFiles(); err != nil {
			s.mu.Unlock()
			s.log.Warn("Not enough space for index files, skipping this entryLocationCompaction", "path", d.path, "trigger", trigger, "why", err.Error())
			return false
		}
	}
	ctx, cancel := context.WithCancel(s.ctx)
	start := s.opts.Now()
	d.cancel, d.cancelRequested = cancel, false
	d.counter++
	d.lastStart = start
	s.wg.Add(1)
	s.mu.Unlock()

	s.log.Info("Starting entry location compaction", "path", d.path, "trigger", trigger)
	go s.runCompaction(ctx, cancel, d, trigger, start)
	return true
}

// runCompaction runs one compaction and records how it ended.
func (s *Service) runCompaction(ctx context.Context, cancel context.CancelFunc, d *directory, trigger Trigger, start time.Time) {
	defer s.wg.Done()
	err := d.Index.Compact(ctx)
	duration := s.opts.Now().Sub(start)
	cancelled := ctx.Err() != nil
	cancel()

	outcome := outcomeCompleted
	switch {
	case err == nil:
	case cancelled || errors.Is(err, context.Canceled):
		outcome = outcomeCancelled
	default:
		outcome = outcomeFailed
	}
	s.mu.Lock()
	d.cancel, d.cancelRequested = nil, false
	d.lastDuration, d.lastOutcome, d.lastError = duration, outcome, ""
	if outcome == outcomeFailed {
		d.lastError = err.Error()
	}
	if d.outcomes == nil {
		d.outcomes = make(map[outcomeKey]int64)
	}
	d.outcomes[outcomeKey{trigger, outcome}]++
	s.mu.Unlock()

	switch outcome {
	case outcomeCompleted:
		s.log.Info("Entry location compaction finished", "path", d.path, "trigger", trigger, "duration", duration)
	case outcomeCancelled:
		s.log.Info("Entry location compaction cancelled", "path", d.path, "trigger", trigger, "duration", duration)
	default:
		s.log.Error("Entry location compaction failed", "path", d.path, "trigger", trigger, "duration", duration, "err", err)
	}
}

// cancelCompaction asks d's running compaction to stop and reports whether
// one was running. It does not wait: the compaction stops at its next
// cancellation point, and the compaction endpoint's GET reports it
// running until then.
func (s *Service) cancelCompaction(d *directory) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.cancel == nil {
		return false
	}
	if !d.cancelRequested {
		s.log.Info("Cancelling entry location compaction", "path", d.path)
	}
	d.cancelRequested = true
	d.cancel()
	return true
}

// serveGCDetails lists, per directory, the entry location compaction part
// of upstream's GarbageCollectionStatus (lastEntryLocationCompactionTime in
// milliseconds since the epoch, 0 if none, and
// entryLocationCompactionCounter) with the directory's names, whether it is
// compacting and how its last compaction ended.
func (s *Service) serveGCDetails(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgGCDetailsMethod) {
		return
	}
	var statuses []bookie.GCStatus
	if s.opts.GC != nil {
		statuses = s.opts.GC.GCStatuses()
	}
	s.mu.Lock()
	list := make([]any, len(s.dirs))
	for i, d := range s.dirs {
		var lastMillis int64
		if !d.lastStart.IsZero() {
			lastMillis = d.lastStart.UnixMilli()
		}
		list[i] = jsonObject{
			{"ledgerDir", d.LedgerDir},
			{"indexDir", d.IndexDir},
			{"entryLocationDBPath", d.path},
			{"entryLocationCompacting", d.compactingLocked()},
			{"lastEntryLocationCompactionTime", lastMillis},
			{"entryLocationCompactionCounter", d.counter},
			{"lastEntryLocationCompactionDurationMs", d.lastDuration.Milliseconds()},
			{"lastEntryLocationCompactionOutcome", d.lastOutcome},
			{"lastEntryLocationCompactionError", d.lastError},
		}
		list[i] = append(list[i].(jsonObject), s.gcDetailFields(statuses, i)...)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, list)
}

package bookie

import (
	"log/slog"
	"sync"
)

// CheckpointSource is where the storage's checkpoints record how far they
// made it durable: a bookie's journal (upstream's CheckpointSource, which
// BookieImpl builds over its journals). A bookie acknowledges an add once
// the journal has it and gives it to the storage first; the storage is
// durable only at checkpoints. Each checkpoint of a directory takes a
// checkpoint from the source before it swaps its write cache, and once
// every directory has made durable a checkpoint taken at or after it, the
// storage reports it complete: the source may then forget what precedes
// it (the journal writes its last log mark and removes older files).
//
// Every checkpoint counts: the periodic ones (FlushInterval), those a full
// write cache triggers, Storage.Checkpoint and the last one of Close. With
// several ledger directories, which checkpoint independently, the
// checkpoint reported is the oldest of the newest ones each directory made
// durable, so that no directory still needs what precedes it.
type CheckpointSource interface {
	// NewCheckpoint returns the source's current position (the journal's
	// mark): everything the source holds before it was given to the
	// storage before NewCheckpoint was called. Nil means no position
	// (the source is not ready, as during a replay): nothing is reported
	// for a checkpoint that took it. Checkpoints taken later must not be
	// earlier positions.
	NewCheckpoint() Checkpoint
	// CheckpointComplete is told that every directory is durable up to c
	// (upstream's checkpointComplete). Calls do not overlap, and each
	// reports a checkpoint taken after the one before. An error is
	// logged, and the checkpoint is reported again after the next
	// directory checkpoint.
	CheckpointComplete(c Checkpoint) error
}

// Checkpoint is a CheckpointSource's position, opaque to the storage.
type Checkpoint interface{}

// takenCheckpoint is a checkpoint with the order in which it was taken.
type takenCheckpoint struct {
	seq uint64 // 0: none
	cp  Checkpoint
}

// checkpointTracker numbers the checkpoints the directories take, tracks
// the newest each directory made durable, and reports the oldest of those
// to the source when it moves. It also says whether a ledger's deletion is
// covered by a reported checkpoint: until it is, a replay from the
// source's recorded position may meet the ledger's records, so its record
// in the ledgers index (which tells the replay to skip them) must stay.
// A nil tracker (no source) tracks nothing and covers every deletion.
type checkpointTracker struct {
	src CheckpointSource
	log *slog.Logger

	mu sync.Mutex
	// taken is the number of the last checkpoint taken; durable[i] the
	// newest directory i made durable; reported the number of the last
	// checkpoint reported complete.
	taken    uint64
	durable  []takenCheckpoint
	reported uint64

	// reportMu serializes the reports (CheckpointComplete calls).
	reportMu sync.Mutex
}

func newCheckpointTracker(src CheckpointSource, dirs int, log *slog.Logger) *checkpointTracker {
	if src == nil {
		return nil
	}
	return &checkpointTracker{src: src, log: log, durable: make([]takenCheckpoint, dirs)}
}

// take takes a checkpoint from the source; the zero value without one.
func (t *checkpointTracker) take() takenCheckpoint {
	if t == nil {
		return takenCheckpoint{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// Under mu: the numbers follow the positions' order.
	t.taken++
	return takenCheckpoint{seq: t.taken, cp: t.src.NewCheckpoint()}
}

// done records that directory dir made checkpoint c durable and reports
// the oldest checkpoint every directory has made durable if it moved.
func (t *checkpointTracker) done(dir int, c takenCheckpoint) {
	if t == nil || c.seq == 0 {
		return
	}
	t.mu.Lock()
	if c.seq > t.durable[dir].seq {
		t.durable[dir] = c
	}
	t.mu.Unlock()
	if err := t.report(); err != nil {
		t.log.Error("checkpoint: recording the checkpoint in its source failed; the next checkpoint records it again", "err", err)
	}
}

// report reports the oldest checkpoint every directory has made durable,
// if it is newer than the last one reported.
func (t *checkpointTracker) report() error {
	t.reportMu.Lock()
	defer t.reportMu.Unlock()
	t.mu.Lock()
	oldest := t.durable[0]
	for _, c := range t.durable[1:] {
		if c.seq < oldest.seq {
			oldest = c
		}
	}
	if oldest.seq <= t.reported || oldest.cp == nil {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	if err := t.src.CheckpointComplete(oldest.cp); err != nil {
		return err
	}
	t.mu.Lock()
	t.reported = oldest.seq
	t.mu.Unlock()
	return nil
}

// current returns the number of the last checkpoint taken: a deletion
// made now is covered once a checkpoint numbered above it is reported.
func (t *checkpointTracker) current() uint64 {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.taken
}

// covers reports whether a checkpoint reported complete was taken after
// the deletion that current numbered seq.
func (t *checkpointTracker) covers(seq uint64) bool {
	if t == nil {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reported > seq
}

package lsm

import (
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
)

// Idle compaction. Below Level0FileNumCompactionTrigger the L0 tables wait
// for more flushes, which is right while writes go on (one L0→base
// compaction per four flushes instead of one per flush) and wrong once
// they stop: the last flushes stay in L0 for good, every get probes their
// filters and every floor lookup positions them, although nothing will
// come to share the compaction's cost. After IdleCompactionDelay without a
// write, the L0 tables are compacted into the base level like any L0
// compaction (bounded by MaxCompactionBytes, sliced when their overlap is
// larger), so a settled index is one sorted run (docs/design.md, "Idle
// compaction").
//
// "Without a write" is read from the visible sequence number, which every
// write moves: the timer ticks idleTicks times per delay and the
// compaction is due once the number has not moved for idleTicks ticks in a
// row, so it starts between one delay and 1+1/idleTicks delays after the
// last write. A write after that makes the picker drop the due state at
// its next pick (a running compaction finishes).

// idleTicks is the number of quiet timer ticks that make a delay.
const idleTicks = 4

// idleState is the idle-compaction state, guarded by d.mu.
type idleState struct {
	timer *time.Timer
	// seq is the visible sequence number at the last tick; quiet counts
	// the ticks in a row that found it unchanged.
	seq   uint64
	quiet int
	// due: the delay passed with no write; L0 tables compact to the base.
	due bool
}

// armIdleCompactionLocked starts the idle timer when the tree has settled
// with tables in L0, or with a spare memtable arena to give back (see
// idleTimerFired). d.mu must be held.
func (d *DB) armIdleCompactionLocked(v *manifest.Version) {
	s := &d.mu.idle
	if d.opts.IdleCompactionDelay <= 0 || s.timer != nil || s.due || v.NumTables(0) == 0 && d.spareMem.Load() == nil {
		return
	}
	s.seq, s.quiet = d.visibleSeq.Load(), 0
	s.timer = time.AfterFunc(d.idleTick(), d.idleTimerFired)
}

func (d *DB) idleTick() time.Duration {
	return max(d.opts.IdleCompactionDelay/idleTicks, time.Millisecond)
}

// idleTimerFired counts a quiet tick, or starts over after a write; after
// idleTicks quiet ticks the idle compaction is due.
func (d *DB) idleTimerFired() {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &d.mu.idle
	if d.mu.closed || s.timer == nil {
		return
	}
	if seq := d.visibleSeq.Load(); seq != s.seq {
		s.seq, s.quiet = seq, 0
	} else {
		s.quiet++
	}
	if s.quiet < idleTicks {
		s.timer.Reset(d.idleTick())
		return
	}
	s.timer, s.due = nil, true
	// No memtable switch is coming soon: the spare arena goes back to the
	// system (it is unmapped once collected) instead of staying resident.
	d.spareMem.Store(nil)
	d.maybeScheduleCompactionLocked()
}

// pickIdleCompactionLocked returns an L0→base compaction when the idle
// compaction is due, or nil. d.mu must be held.
func (d *DB) pickIdleCompactionLocked(v *manifest.Version, baseLevel int) *compaction {
	s := &d.mu.idle
	if !s.due {
		return nil
	}
	l0 := v.Tables(0)
	if len(l0) == 0 || d.visibleSeq.Load() != s.seq {
		s.due = false
		return nil
	}
	var oldest []*manifest.TableMeta
	for i := len(l0) - 1; i >= 0 && !l0[i].IsCompacting(); i-- {
		oldest = append(oldest, l0[i])
	}
	if len(oldest) == 0 {
		return nil
	}
	c := d.pickL0ToBaseLocked(v, oldest, baseLevel)
	if c != nil {
		c.reason = "idle: " + c.reason
	}
	return c
}

// stopIdleCompactionLocked stops the timer (Close). d.mu must be held.
func (d *DB) stopIdleCompactionLocked() {
	if s := &d.mu.idle; s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// IdleCompactionDelay returns the delay after the last write at which L0
// is compacted (negative: never).
func (d *DB) IdleCompactionDelay() time.Duration { return d.opts.IdleCompactionDelay }

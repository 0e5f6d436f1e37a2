package lsm

import (
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Snapshot is a consistent point-in-time view of the DB: reads through it
// see exactly the batches applied before it was taken. Compactions keep
// the versions it can see. Close it when done.
type Snapshot struct {
	db     *DB
	seq    base.SeqNum
	closed bool
}

// NewSnapshot returns a snapshot of the DB as of now.
func (d *DB) NewSnapshot() (*Snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, errors.Wrap(ErrClosed, "lsm: NewSnapshot")
	}
	s := &Snapshot{db: d, seq: base.SeqNum(d.visibleSeq.Load())}
	d.mu.snapshots[s] = struct{}{}
	return s, nil
}

// Close releases the snapshot.
func (s *Snapshot) Close() error {
	d := s.db
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.closed {
		return errors.New("lsm: snapshot closed twice")
	}
	s.closed = true
	delete(d.mu.snapshots, s)
	if len(d.mu.snapshots) == 0 {
		// Deletion rewrites wait while any snapshot is open (a rewrite must
		// keep what a snapshot sees); without a new pick here the space of
		// deleted ranges would come back only after the next flush.
		d.maybeScheduleCompactionLocked()
	}
	return nil
}

// snapshotSeqsLocked returns the sequence numbers of the open snapshots,
// ascending. d.mu must be held.
func (d *DB) snapshotSeqsLocked() []base.SeqNum {
	seqs := make([]base.SeqNum, 0, len(d.mu.snapshots))
	for s := range d.mu.snapshots {
		seqs = append(seqs, s.seq)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	return seqs
}

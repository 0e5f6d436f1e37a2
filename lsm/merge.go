package lsm

import (
	"bytes"
	"io"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// MergeOperator combines the merge operands of a key (written with
// Batch.Merge) with the key's older value. A read of a key whose newest
// entry is a merge operand full-merges the operands down to the newest Set,
// Delete or range deletion below them; flushes and compactions
// partial-merge adjacent operands they cannot full-merge, and full-merge at
// the bottom of the tree or over a Set or Delete. Operands are never
// combined across an open snapshot's sequence number.
//
// An operator must be deterministic and safe for concurrent use: the same
// inputs may be merged on the read path, by a flush and by a compaction, and
// all of them must agree. It must not retain or modify its arguments.
type MergeOperator interface {
	// Name identifies the operator. It is persisted: a DB that has held
	// merge operands refuses to open with another or no operator.
	Name() string
	// FullMerge returns the value of key given its older value (existing is
	// nil when the key has none: absent or deleted) and its operands,
	// oldest first. An error fails the read (or leaves the operands for the
	// reader, in a compaction) naming the key.
	FullMerge(key, existing []byte, operands [][]byte) ([]byte, error)
	// PartialMerge combines two adjacent operands, older then newer, into
	// one when it can; ok=false keeps both.
	PartialMerge(key, older, newer []byte) (merged []byte, ok bool)
}

// ErrMergeOperator marks errors about the merge operator: a Merge with none
// configured, a name that differs from the one the DB was written with, or
// a FullMerge that failed.
var ErrMergeOperator = errors.New("lsm: merge operator")

// merger calls the DB's merge operator. With EnableStatistics it times
// every call into MergeTimeNanos; without, it reads no clock: the check is
// one predictable branch on a field fixed at open.
type merger struct {
	op    MergeOperator
	timed bool
	nanos *atomic.Int64
}

func newMerger(o *Options, m *dbMetrics) merger {
	return merger{op: o.MergeOperator, timed: o.EnableStatistics, nanos: &m.mergeNanos}
}

// fullMerge runs FullMerge; an error names the key and the operator.
func (m *merger) fullMerge(key, existing []byte, operands [][]byte) ([]byte, error) {
	if m.op == nil {
		// Only if MERGE-OPERATOR was removed from a DB holding operands.
		return nil, base.Mark(errors.Newf("lsm: key %q has merge operands but Options.MergeOperator is not set", key),
			ErrMergeOperator)
	}
	var v []byte
	var err error
	if m.timed {
		start := time.Now()
		v, err = m.op.FullMerge(key, existing, operands)
		m.record(start)
	} else {
		v, err = m.op.FullMerge(key, existing, operands)
	}
	if err != nil {
		return nil, base.Mark(errors.Wrapf(err, "lsm: merge operator %q failed on key %q (%d operands)",
			m.op.Name(), key, len(operands)), ErrMergeOperator)
	}
	return v, nil
}

// partialMerge runs PartialMerge.
func (m *merger) partialMerge(key, older, newer []byte) ([]byte, bool) {
	if m.op == nil {
		return nil, false // keep the operands as they are (see fullMerge)
	}
	if !m.timed {
		return m.op.PartialMerge(key, older, newer)
	}
	start := time.Now()
	v, ok := m.op.PartialMerge(key, older, newer)
	m.record(start)
	return v, ok
}

// record adds the time since start. A measured call counts at least one
// nanosecond, so that a clock coarser than the call still shows the
// operator ran.
func (m *merger) record(start time.Time) {
	m.nanos.Add(max(time.Since(start).Nanoseconds(), 1))
}

// operandStack collects copies of one key's merge operands (and their
// sequence numbers) while the source iterator moves on. Its buffers are
// reused from key to key.
type operandStack struct {
	buf  []byte
	ends []int
	seqs []base.SeqNum
	list [][]byte
}

func (s *operandStack) reset() {
	s.buf, s.ends, s.seqs = s.buf[:0], s.ends[:0], s.seqs[:0]
}

func (s *operandStack) push(v []byte, seq base.SeqNum) {
	s.buf = append(s.buf, v...)
	s.ends = append(s.ends, len(s.buf))
	s.seqs = append(s.seqs, seq)
}

func (s *operandStack) len() int { return len(s.ends) }

// at returns operand i in push order.
func (s *operandStack) at(i int) []byte {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.buf[start:s.ends[i]:s.ends[i]]
}

// operands returns the operands oldest first; newestFirst says they were
// pushed newest first (a forward walk) rather than oldest first (backward).
// The slices are valid until the next push or reset.
func (s *operandStack) operands(newestFirst bool) [][]byte {
	n := s.len()
	s.list = s.list[:0]
	for i := range n {
		j := i
		if newestFirst {
			j = n - 1 - i
		}
		s.list = append(s.list, s.at(j))
	}
	return s.list
}

// errMergeNoOperator refuses a batch holding a Merge on a DB without a
// merge operator.
var errMergeNoOperator = base.Mark(errors.New("lsm: batch holds a Merge but Options.MergeOperator is not set"), ErrMergeOperator)

// mergeOperatorFile names the file that binds a DB to its merge operator.
// It holds the operator's name and a newline; it is written (to a temporary
// file, synced, renamed, directory synced) before the first WAL record
// holding a merge operand, so that no operand is durable without it.
const mergeOperatorFile = "MERGE-OPERATOR"

// checkMergeOperator refuses to open a DB bound to a merge operator with
// another or none. It runs at open before the WALs are replayed.
func (d *DB) checkMergeOperator() error {
	path := filepath.Join(d.dir, mergeOperatorFile)
	f, err := d.fs.Open(path)
	if err != nil {
		if _, statErr := d.fs.Stat(path); statErr != nil {
			return nil // never held a merge operand
		}
		return errors.Wrapf(err, "lsm: opening %s", path)
	}
	var data []byte
	size, err := f.Size()
	if err == nil && size > 4096 {
		err = base.CorruptionErrorf("lsm: %s: %d bytes, too long for a merge operator name", path, size)
	}
	if err == nil {
		data = make([]byte, size)
		_, err = f.ReadAt(data, 0)
		if err == io.EOF {
			err = nil
		}
	}
	_ = f.Close()
	if err != nil {
		return errors.Wrapf(err, "lsm: reading %s", path)
	}
	name, ok := bytes.CutSuffix(data, []byte("\n"))
	if !ok || len(name) == 0 || bytes.IndexByte(name, '\n') >= 0 {
		return base.CorruptionErrorf("lsm: %s: %d bytes, not a merge operator name and a newline", path, len(data))
	}
	switch {
	case d.opts.MergeOperator == nil:
		return base.Mark(errors.Newf("lsm: %s holds merge operands of operator %q but Options.MergeOperator is not set (%s)",
			d.dir, name, path), ErrMergeOperator)
	case d.opts.MergeOperator.Name() != string(name):
		return base.Mark(errors.Newf("lsm: %s holds merge operands of operator %q but Options.MergeOperator is %q (%s)",
			d.dir, name, d.opts.MergeOperator.Name(), path), ErrMergeOperator)
	}
	d.mergeOperatorBound.Store(true)
	return nil
}

// bindMergeOperator writes the merge operator file if it is not there yet.
// d.commitMu is held, so no batch reaches the WAL meanwhile.
func (d *DB) bindMergeOperator() error {
	if d.mergeOperatorBound.Load() {
		return nil
	}
	path := filepath.Join(d.dir, mergeOperatorFile)
	if err := vfs.ReplaceFile(d.fs, path, path+".tmp", []byte(d.opts.MergeOperator.Name()+"\n")); err != nil {
		return errors.Wrapf(err, "lsm: writing %s", path)
	}
	d.mergeOperatorBound.Store(true)
	return nil
}

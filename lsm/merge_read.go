package lsm

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Reads of merged keys. A key whose newest visible entry is a merge operand
// reads as FullMerge(key, existing, operands): the operands down to the
// first older entry that is not one, oldest first, over that entry's value
// when it is a Set (existing is nil below a Delete, a range tombstone that
// covers the next entry, or the key's last entry).

// errMergeOperand tells GetAppend that the newest entry it found is a merge
// operand: the key is read by getMerged instead.
// It never reaches callers.
var errMergeOperand = errors.New("lsm: the newest entry is a merge operand")

// mergeForward decides it.key, whose newest visible entry, not deleted, is
// the merge operand under the merged iterator. It moves merged past the
// operands (to the next key, or to the entry under them, which findNext
// then skips as a version of it.key).
func (it *iterState) mergeForward() bool {
	m := &it.merged
	ops := &it.operands
	ops.reset()
	ops.push(m.Value(), m.Trailer().SeqNum())
	var existing []byte
	for m.Next() {
		k, tr := m.UserKey(), m.Trailer()
		if !bytes.Equal(k, it.key) {
			break
		}
		if tr.SeqNum() > it.seq {
			continue // not visible (cannot follow a visible entry; kept for safety)
		}
		if it.deleted(k, tr) {
			break
		}
		if tr.Kind() == base.KindMerge {
			ops.push(m.Value(), tr.SeqNum())
			continue
		}
		existing = m.Value() // a Set: valid while merged stays here
		break
	}
	if m.Error() != nil {
		it.valid = false
		return false
	}
	v, err := it.d.merge.fullMerge(it.key, existing, ops.operands(true /* newestFirst */))
	if err != nil {
		it.err, it.valid = err, false
		return false
	}
	it.value = append(it.value[:0], v...)
	it.valid, it.reverse = true, false
	return true
}

// mergeBackward decides it.key from the operands findPrev stacked, oldest
// first, over it.mergeBase when hasBase.
func (it *iterState) mergeBackward(hasBase bool) bool {
	var existing []byte
	if hasBase {
		existing = it.mergeBase
	}
	v, err := it.d.merge.fullMerge(it.key, existing, it.operands.operands(false /* newestFirst */))
	if err != nil {
		it.err = err
		return false
	}
	it.value = append(it.value[:0], v...)
	return true
}

// getMerged reads a key whose newest entry is a merge operand, with an
// iterator bounded to that key: it applies the range tombstones and
// gathers the operands across memtables and levels like any iteration.
func (d *DB) getMerged(dst, key []byte, ro *ReadOptions) ([]byte, error) {
	var snapshot *Snapshot
	var stats *ReadStats
	if ro != nil {
		snapshot, stats = ro.Snapshot, ro.Stats
	}
	// key+"\x00" is the smallest key after key.
	upper := make([]byte, len(key)+1)
	copy(upper, key)
	s, err := d.newIterState(key, upper, snapshot, stats)
	if err != nil {
		return dst, err
	}
	if s.SeekGE(key) {
		dst = append(dst, s.value...)
	} else if err := s.Error(); err != nil {
		_ = s.close()
		return dst, err
	} else {
		err = ErrNotFound
		if cerr := s.close(); cerr != nil {
			err = cerr
		}
		return dst, err
	}
	return dst, s.close()
}

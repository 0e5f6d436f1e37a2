package sstable

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/cockroachdb/errors"
)

// IterOptions configure a table iterator.
type IterOptions struct {
	// LowerBound and UpperBound limit the iterator to user keys in
	// [LowerBound, UpperBound); nil means unbounded. Backward positioning
	// stops at the first key below LowerBound instead of walking on.
	LowerBound, UpperBound []byte
	// Stats, if set, counts the blocks the iterator reads.
	Stats *Stats
	// NoFillCache reads blocks missing from the cache without inserting
	// them (compactions use it).
	NoFillCache bool
}

// Iter walks a table's point entries in internal-key order through its
// two-level index: top-level index → index partition → data block. Blocks
// in use are held (cache references) until the iterator moves off them or
// is closed.
type Iter struct {
	r    *Reader
	opts IterOptions

	top      block.Iter // over the pinned top-level index
	index    block.Iter // over the current index partition
	indexRef blockRef
	indexAt  uint64 // offset of the loaded partition, or noBlock
	data     block.Iter
	dataRef  blockRef
	dataAt   uint64
	err      error
}

const noBlock = ^uint64(0)

// NewIter returns an iterator over the table. Close it when done.
func (r *Reader) NewIter(opts IterOptions) *Iter {
	it := &Iter{}
	r.InitIter(it, opts)
	return it
}

// InitIter makes it an iterator over the table, reusing its buffers (a
// closed or zero Iter), so that pooled iterators do not allocate.
func (r *Reader) InitIter(it *Iter, opts IterOptions) {
	it.r, it.opts, it.err = r, opts, nil
	it.indexRef, it.dataRef = blockRef{}, blockRef{}
	it.indexAt, it.dataAt = noBlock, noBlock
	if r.closed.Load() {
		it.err = errors.Wrapf(base.ErrClosed, "sstable: %s", r.name)
		return
	}
	if err := it.top.Init(r.topIndex); err != nil {
		it.err = err
	}
}

// SetBounds changes the iterator's bounds; it must be positioned again.
func (it *Iter) SetBounds(lower, upper []byte) {
	it.opts.LowerBound, it.opts.UpperBound = lower, upper
}

// Error returns the error that stopped the iterator, if any.
func (it *Iter) Error() error { return it.err }

// Valid reports whether the iterator is at an entry.
func (it *Iter) Valid() bool { return it.err == nil && it.data.Valid() && it.dataAt != noBlock }

// UserKey returns the current user key, valid until the iterator moves.
func (it *Iter) UserKey() []byte { return it.data.UserKey() }

// Trailer returns the current entry's trailer.
func (it *Iter) Trailer() base.Trailer { return it.data.Trailer() }

// Value returns the current value, valid until the iterator moves.
func (it *Iter) Value() []byte { return it.data.Value() }

// PrevKeyDiffers reports, right after SeekLT or Last, that the entry
// before the current one is known to hold another user key (see
// block.Iter.PrevKeyDiffers). After a SeekLT, which lands on the oldest
// version of a key, the current entry is then the table's only version of
// its key.
func (it *Iter) PrevKeyDiffers() bool { return it.Valid() && it.data.PrevKeyDiffers() }

// Close releases the blocks the iterator holds.
func (it *Iter) Close() error {
	it.indexRef.release()
	it.dataRef.release()
	it.indexAt, it.dataAt = noBlock, noBlock
	err := it.err
	if err == nil {
		it.err = errIterClosed
	}
	return err
}

// errIterClosed is the error of a closed iterator: made once, since Close
// is on every short-lived iterator's path and a fresh error would capture a
// stack trace each time.
var errIterClosed = errors.Wrap(base.ErrClosed, "sstable: iterator is closed")

func (it *Iter) invalidate() bool {
	it.dataAt = noBlock
	it.dataRef.release()
	return false
}

func (it *Iter) setErr(err error) bool {
	if it.err == nil {
		it.err = err
	}
	return it.invalidate()
}

// readMode is how the iterator reads blocks: holding handles, without
// filling the cache for NoFillCache.
func (it *Iter) readMode() readMode {
	if it.opts.NoFillCache {
		return readNoFill
	}
	return readHold
}

// loadIndex loads the partition the top-level iterator points at.
func (it *Iter) loadIndex() bool {
	h, err := DecodeBlockHandle(it.top.Value())
	if err != nil {
		return it.setErr(err)
	}
	if h.Offset == it.indexAt {
		return true
	}
	it.indexRef.release()
	it.indexAt = noBlock
	ref, err := it.r.readBlock(h, cache.KindIndex, it.opts.Stats, it.readMode())
	if err != nil {
		return it.setErr(err)
	}
	if err := it.index.Init(ref.data); err != nil {
		ref.release()
		return it.setErr(err)
	}
	it.indexRef, it.indexAt = ref, h.Offset
	return true
}

// loadData loads the data block the index iterator points at.
func (it *Iter) loadData() bool {
	h, err := DecodeBlockHandle(it.index.Value())
	if err != nil {
		return it.setErr(err)
	}
	if h.Offset == it.dataAt {
		return true
	}
	it.dataRef.release()
	it.dataAt = noBlock
	ref, err := it.r.readBlock(h, cache.KindData, it.opts.Stats, it.readMode())
	if err != nil {
		return it.setErr(err)
	}
	if err := it.data.Init(ref.data); err != nil {
		ref.release()
		return it.setErr(err)
	}
	it.data.SetRestartStride(it.r.restartStride)
	it.dataRef, it.dataAt = ref, h.Offset
	return true
}

// blockErr returns the first corruption any block iterator met.
func (it *Iter) blockErr() error {
	for _, e := range []error{it.top.Error(), it.index.Error(), it.data.Error()} {
		if e != nil {
			return errors.Wrapf(e, "sstable: %s", it.r.name)
		}
	}
	return nil
}

// skipForward moves to the first entry of the following blocks while the
// data iterator is exhausted (or no data block is loaded).
func (it *Iter) skipForward() bool {
	for it.dataAt == noBlock || !it.data.Valid() {
		if err := it.blockErr(); err != nil {
			return it.setErr(err)
		}
		if !it.index.Next() {
			if err := it.blockErr(); err != nil {
				return it.setErr(err)
			}
			if !it.top.Next() {
				return it.setErrIfAny(it.top.Error())
			}
			if !it.loadIndex() {
				return false
			}
			if !it.index.First() {
				continue // an empty partition: move on to the next one
			}
		}
		if !it.loadData() {
			return false
		}
		it.data.First()
	}
	return it.checkUpper()
}

// skipBackward moves to the last entry of the preceding blocks while the
// data iterator is exhausted (or no data block is loaded).
func (it *Iter) skipBackward() bool {
	for it.dataAt == noBlock || !it.data.Valid() {
		if err := it.blockErr(); err != nil {
			return it.setErr(err)
		}
		if !it.index.Prev() {
			if err := it.blockErr(); err != nil {
				return it.setErr(err)
			}
			if !it.top.Prev() {
				return it.setErrIfAny(it.top.Error())
			}
			if !it.loadIndex() {
				return false
			}
			if !it.index.Last() {
				continue
			}
		}
		if !it.loadData() {
			return false
		}
		it.data.Last()
	}
	return it.checkLower()
}

func (it *Iter) checkUpper() bool {
	if it.opts.UpperBound != nil && bytes.Compare(it.data.UserKey(), it.opts.UpperBound) >= 0 {
		return it.invalidate()
	}
	return true
}

func (it *Iter) checkLower() bool {
	if it.opts.LowerBound != nil && bytes.Compare(it.data.UserKey(), it.opts.LowerBound) < 0 {
		return it.invalidate()
	}
	return true
}

// SeekGE moves to the first entry >= (userKey, trailer), honouring the
// lower bound (a target below it seeks to the bound).
func (it *Iter) SeekGE(userKey []byte, trailer base.Trailer) bool {
	if it.err != nil {
		return false
	}
	if lb := it.opts.LowerBound; lb != nil && bytes.Compare(userKey, lb) < 0 {
		userKey, trailer = lb, base.SeekTrailer(base.SeqNumMax)
	}
	if !it.top.SeekGE(userKey, trailer) {
		return it.setErrIfAny(it.top.Error())
	}
	if !it.loadIndex() {
		return false
	}
	if it.index.SeekGE(userKey, trailer) {
		if !it.loadData() {
			return false
		}
		it.data.SeekGE(userKey, trailer)
	} else {
		it.invalidate()
	}
	return it.skipForward()
}

func (it *Iter) setErrIfAny(err error) bool {
	if err != nil {
		return it.setErr(errors.Wrapf(err, "sstable: %s", it.r.name))
	}
	return it.invalidate()
}

// SeekLT moves to the last entry < (userKey, trailer), honouring the upper
// bound (a target above it seeks below the bound).
func (it *Iter) SeekLT(userKey []byte, trailer base.Trailer) bool {
	if it.err != nil {
		return false
	}
	if ub := it.opts.UpperBound; ub != nil && bytes.Compare(userKey, ub) >= 0 {
		userKey, trailer = ub, base.SeekTrailer(base.SeqNumMax)
	}
	if !it.top.SeekGE(userKey, trailer) {
		if it.top.Error() != nil || !it.top.Last() {
			return it.setErrIfAny(it.top.Error())
		}
	}
	if !it.loadIndex() {
		return false
	}
	if !it.index.SeekGE(userKey, trailer) {
		if it.index.Error() != nil || !it.index.Last() {
			return it.setErrIfAny(it.index.Error())
		}
	}
	if !it.loadData() {
		return false
	}
	it.data.SeekLT(userKey, trailer)
	return it.skipBackward()
}

// First moves to the first entry (or the lower bound).
func (it *Iter) First() bool {
	if it.opts.LowerBound != nil {
		return it.SeekGE(it.opts.LowerBound, base.SeekTrailer(base.SeqNumMax))
	}
	if it.err != nil {
		return false
	}
	if !it.top.First() {
		return it.setErrIfAny(it.top.Error())
	}
	if !it.loadIndex() {
		return false
	}
	if it.index.First() {
		if !it.loadData() {
			return false
		}
		it.data.First()
	} else {
		it.invalidate()
	}
	return it.skipForward()
}

// Last moves to the last entry (or the last below the upper bound).
func (it *Iter) Last() bool {
	if it.opts.UpperBound != nil {
		return it.SeekLT(it.opts.UpperBound, base.SeekTrailer(base.SeqNumMax))
	}
	if it.err != nil {
		return false
	}
	if !it.top.Last() {
		return it.setErrIfAny(it.top.Error())
	}
	if !it.loadIndex() {
		return false
	}
	if it.index.Last() {
		if !it.loadData() {
			return false
		}
		it.data.Last()
	} else {
		it.invalidate()
	}
	return it.skipBackward()
}

// Next moves to the next entry.
func (it *Iter) Next() bool {
	if !it.Valid() {
		return false
	}
	it.data.Next()
	return it.skipForward()
}

// Prev moves to the previous entry.
func (it *Iter) Prev() bool {
	if !it.Valid() {
		return false
	}
	it.data.Prev()
	return it.skipBackward()
}

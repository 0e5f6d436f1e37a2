package sstable

import (
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
)

// CoveredBytes estimates how much of the table's data a set of range
// deletions covers: for each data block, whose keys lie between the
// previous index separator and its own, covers(lo, hi) says whether
// every user key in [lo, hi] is deleted. It returns the stored bytes of
// the covered blocks and of all blocks. It reads the index partitions
// through the block cache.
func (r *Reader) CoveredBytes(covers func(lo, hi []byte) bool) (covered, total uint64, err error) {
	var top, idx block.Iter
	if err := top.Init(r.topIndex); err != nil {
		return 0, 0, err
	}
	lo := r.props.Smallest.UserKey
	var prev []byte
	for ok := top.First(); ok; ok = top.Next() {
		h, err := DecodeBlockHandle(top.Value())
		if err != nil {
			return 0, 0, err
		}
		ref, err := r.readBlock(h, cache.KindIndex, nil, readHold)
		if err != nil {
			return 0, 0, err
		}
		if err := idx.Init(ref.data); err != nil {
			ref.release()
			return 0, 0, err
		}
		for ok := idx.First(); ok; ok = idx.Next() {
			dh, err := DecodeBlockHandle(idx.Value())
			if err != nil {
				ref.release()
				return 0, 0, err
			}
			size := dh.Length + blockTrailerSize
			total += size
			if prev != nil {
				lo = prev
			}
			if covers(lo, idx.UserKey()) {
				covered += size
			}
			prev = append(prev[:0], idx.UserKey()...)
		}
		err = idx.Error()
		ref.release()
		if err != nil {
			return 0, 0, err
		}
	}
	return covered, total, top.Error()
}

package sstable

import (
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/cockroachdb/errors"
)

// pinPartitionsFraction: a partitioned table pins all of its index and
// filter partitions when it opens if, with them, the bytes pinned in the
// block cache stay within 1/pinPartitionsFraction of the cache's capacity.
//
// Why: every point lookup in a partitioned table needs one filter partition
// and one index partition besides the data block. In a cache large enough
// for all of them they are hot anyway, and each still cost a cache lookup
// (shard lock, map probe, LRU bookkeeping): two more than the full layout,
// whose oversized filter and index are pinned by the reader. Pinned
// partitions make a lookup in a large cache as cheap as in the full layout;
// in a small cache (the case partitions exist for) they stay in the cache,
// where only the hot ones need room. Tables opening at the same time may
// each see room for themselves and overshoot the budget by one table's
// partitions.
const pinPartitionsFraction = 4

// pinPartitions reads every index and filter partition of a partitioned
// table into r.partitions if the cache has the room (see
// pinPartitionsFraction), charging them as pinned bytes.
func (r *Reader) pinPartitions() error {
	if r.cache == nil || r.footer.flags&flagPartitionedIndex == 0 {
		return nil
	}
	need := int64(r.props.IndexBytes)
	if r.footer.flags&flagPartitionedFilter != 0 {
		need += int64(r.props.FilterBytes)
	}
	if r.cache.PinnedUsage()+need > r.cache.Capacity()/pinPartitionsFraction {
		return nil
	}
	parts := make(map[uint64][]byte)
	var total int64
	var indexParts [][]byte
	for _, top := range []struct {
		block   []byte
		kind    cache.Kind
		ordered *[][]byte
	}{{r.topIndex, cache.KindIndex, &indexParts}, {r.topFilter, cache.KindFilter, &r.filterParts}} {
		if top.block == nil || top.kind == cache.KindFilter && r.footer.flags&flagPartitionedFilter == 0 {
			continue
		}
		var it block.Iter
		if err := it.Init(top.block); err != nil {
			return errors.Wrapf(err, "top-level %s block", top.kind)
		}
		var ordered [][]byte
		for ok := it.First(); ok; ok = it.Next() {
			h, err := DecodeBlockHandle(it.Value())
			if err != nil {
				return errors.Wrapf(err, "top-level %s block", top.kind)
			}
			data, err := r.readVerified(h, top.kind, nil)
			if err != nil {
				return err
			}
			parts[h.Offset] = data
			ordered = append(ordered, data)
			total += int64(len(data))
		}
		if err := it.Error(); err != nil {
			return errors.Wrapf(err, "top-level %s block", top.kind)
		}
		if len(ordered) == it.NumRestarts() {
			// Every top-level entry is a restart point (index restart
			// interval 1, the default), so the partitions can be kept in
			// entry order.
			*top.ordered = ordered
		}
	}
	if r.filterParts != nil {
		// Get finds a filter partition by the ordinal of its top-level
		// entry, without seeking the top-level block or a map probe.
		search, err := newTopSearch(r.topFilter)
		if err != nil {
			return errors.Wrap(err, "top-level filter block")
		}
		r.filterSearch = search
		total += search.size()
	}
	if indexParts != nil {
		// All data-block entries in one search: a lookup finds its data
		// block without seeking the top-level index or a partition.
		search, err := newTopSearch(indexParts...)
		if err != nil {
			return errors.Wrap(err, "index partitions")
		}
		r.dataSearch = search
		total += search.size()
	}
	r.partitions = parts
	r.partitionBytes = total
	r.cache.AddPinned(total)
	return nil
}

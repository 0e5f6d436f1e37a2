package sstable

import (
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/cockroachdb/errors"
)

// pinPartitionsFraction: a partitioned table pins all of its index
// partitions when it opens if, with them, the bytes pinned in the block
// cache stay within 1/pinPartitionsFraction of the cache's capacity; and
// its filter partitions too, on the same condition, when it reads every
// filter block (AlwaysLoadFilters).
//
// Why: every point lookup in a partitioned table needs one index partition
// (and maybe one filter partition) besides the data block. In a cache large
// enough for all of them they are hot anyway, and each still cost a cache
// lookup (shard lock, map probe, LRU bookkeeping): more than the full
// layout, whose oversized index is pinned by the reader. Pinned partitions
// make a lookup in a large cache as cheap as in the full layout; in a small
// cache (the case partitions exist for) they stay in the cache, where only
// the hot ones need room. By default filter partitions are read only while
// they pay (filter_use.go): pinning them all would take memory from data
// blocks for filters that lookups of present keys skip. Tables opening at
// the same time may each see room for themselves and overshoot the budget
// by one table's partitions.
const pinPartitionsFraction = 4

// pinPartitions reads the partitions of a partitioned table into
// r.partitions if the cache has the room (see pinPartitionsFraction),
// charging them as pinned bytes, and decodes the top-level filter index
// into r.filterSearch.
func (r *Reader) pinPartitions() error {
	if r.cache == nil || r.footer.flags&flagPartitionedIndex == 0 {
		return nil
	}
	partitionedFilter := r.topFilter != nil && r.footer.flags&flagPartitionedFilter != 0
	pinIndex := r.roomToPin(int64(r.props.IndexBytes))
	pinFilter := partitionedFilter && r.alwaysLoadFilters && r.roomToPin(int64(r.props.IndexBytes+r.props.FilterBytes))
	parts := make(map[uint64][]byte)
	var total int64
	var indexParts, filterParts [][]byte
	for _, top := range []struct {
		pin     bool
		block   []byte
		kind    cache.Kind
		ordered *[][]byte
	}{{pinIndex, r.topIndex, cache.KindIndex, &indexParts}, {pinFilter, r.topFilter, cache.KindFilter, &filterParts}} {
		if !top.pin {
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
		*top.ordered = ordered
	}
	if partitionedFilter {
		// Get finds a filter partition by the ordinal of its top-level
		// entry (and, unpinned, its handle), without seeking the
		// top-level block.
		search, err := newTopSearch(r.topFilter)
		if err != nil {
			return errors.Wrap(err, "top-level filter block")
		}
		if pinFilter && len(filterParts) != len(search.handles) {
			return errors.Newf("top-level filter block: %d partitions read, %d entries decoded", len(filterParts), len(search.handles))
		}
		r.filterSearch, r.filterParts = search, filterParts
		total += search.size()
		if !pinFilter {
			r.filterSlots = make([]atomic.Pointer[[]byte], len(search.handles))
			total += 8 * int64(len(search.handles))
		}
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
	if len(parts) > 0 {
		r.partitions = parts
	}
	r.partitionBytes = total
	r.cache.AddPinned(total)
	return nil
}

// pinFilterPartition pins filter partition i, just read from the file, if
// it fits in the pinning budget (pinPartitionsFraction), and reports
// whether it did. A table that reads filters only while they pay
// (filter_use.go) pins the partitions lookups need as they are read,
// instead of all of them at open: a table whose lookups find their keys
// pins none.
func (r *Reader) pinFilterPartition(i int, data []byte) bool {
	n := int64(len(data))
	if !r.roomToPin(n) {
		return false
	}
	r.pinnedMu.Lock()
	defer r.pinnedMu.Unlock()
	if r.closed.Load() || r.filterSlots[i].Load() != nil {
		return false
	}
	r.filterSlots[i].Store(&data)
	r.pinnedBytes.Add(n)
	r.cache.AddPinned(n)
	r.slotsPinned.Store(true)
	return true
}

// unpinFilterSlots gives back the filter partitions pinned by
// pinFilterPartition. Lookups still holding one keep a valid slice (the
// garbage collector frees it).
func (r *Reader) unpinFilterSlots() {
	r.pinnedMu.Lock()
	defer r.pinnedMu.Unlock()
	if r.closed.Load() || !r.slotsPinned.Load() {
		return
	}
	var n int64
	for i := range r.filterSlots {
		if p := r.filterSlots[i].Swap(nil); p != nil {
			n += int64(len(*p))
		}
	}
	r.pinnedBytes.Add(-n)
	r.cache.AddPinned(-n)
	r.slotsPinned.Store(false)
}

// roomToPin reports whether n more pinned bytes stay within the pinning
// budget.
func (r *Reader) roomToPin(n int64) bool {
	return r.cache.PinnedUsage()+n <= r.cache.Capacity()/pinPartitionsFraction
}

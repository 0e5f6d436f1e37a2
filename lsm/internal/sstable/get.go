package sstable

import (
	"bytes"
	"math/rand/v2"
	"sync"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/bloom"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/cockroachdb/errors"
)

// Lookup is a point lookup of the newest version of UserKey visible at Seq.
// Hash is bloom.Hash(UserKey), computed once for all tables a Get visits.
type Lookup struct {
	UserKey []byte
	Hash    uint64
	Seq     base.SeqNum
}

// MakeLookup builds a Lookup.
func MakeLookup(userKey []byte, seq base.SeqNum) Lookup {
	return Lookup{UserKey: userKey, Hash: bloom.Hash(userKey), Seq: seq}
}

// getScratch holds the block iterators of one Get, pooled so that a Get on
// cached blocks allocates nothing.
type getScratch struct {
	top, index, data block.Iter
}

var getScratchPool = sync.Pool{New: func() any { return new(getScratch) }}

func validateFilter(data []byte) error { return bloom.Validate(data) }

// Get finds the newest entry of l.UserKey with a sequence number <= l.Seq.
// When found, the value is appended to dst and returned with the entry's
// trailer (a KindDelete trailer means the key is deleted). Range deletions
// are not applied here; see RangeDeletions.
//
// The path: top-level filter index → filter partition (a negative answer
// ends the lookup; skipped while the table's lookups find their keys, see
// filter_use.go) → top-level index → index partition → data block.
func (r *Reader) Get(dst []byte, l *Lookup, stats *Stats) (value []byte, trailer base.Trailer, found bool, err error) {
	if r.closed.Load() {
		return dst, 0, false, errors.Wrapf(base.ErrClosed, "sstable: %s", r.name)
	}
	s := getScratchPool.Get().(*getScratch)
	defer getScratchPool.Put(s)
	seek := base.SeekTrailer(l.Seq)

	filter := filterNone
	if r.topFilter != nil {
		var fb blockRef
		fb, filter, err = r.filterBlock(s, l.UserKey, seek, stats)
		if err != nil || filter == filterAbove {
			return dst, 0, false, err
		}
		if filter != filterSkipped {
			may := bloom.MayContain(fb.data, l.Hash)
			fb.release()
			if stats != nil {
				stats.FilterChecks++
				if !may {
					stats.FilterNegatives++
				}
			}
			if r.adaptiveFilters() && (filter == filterLoaded || rand.Uint32()&inMemorySampleMask == 0) {
				// Lookups that use a filter in memory are scored too, so
				// that the score falls back to zero when absent keys stop
				// (one in inMemorySampleMask+1: they run while the score is
				// positive, and a CAS per lookup would be contended).
				saved := int32(filterSavedRead)
				if may {
					saved = filterSavedNothing // the data block is read next
				}
				r.filterUse.record(saved)
			}
			if !may {
				return dst, 0, false, nil
			}
		}
	}

	h, ok, err := r.findDataBlock(s, l.UserKey, seek, stats)
	if err != nil || !ok {
		if filter == filterSkipped && err == nil {
			r.filterUse.record(filterSavedNothing) // the table could not hold it
		}
		return dst, 0, false, err
	}
	db, err := r.readBlock(h, cache.KindData, stats, readOnce)
	if err != nil {
		return dst, 0, false, err
	}
	defer db.release()
	if err := s.data.Init(db.data); err != nil {
		return dst, 0, false, err
	}
	s.data.SetRestartStride(r.restartStride)
	found = s.data.SeekGE(l.UserKey, seek) && bytes.Equal(s.data.UserKey(), l.UserKey)
	if filter == filterSkipped {
		switch {
		case found:
			r.filterUse.record(filterSavedNothing)
		case db.fromFile:
			r.filterUse.record(filterSavedRead)
		default:
			r.filterUse.record(filterSavedSearch)
		}
	}
	if !found {
		return dst, 0, false, s.data.Error()
	}
	return append(dst, s.data.Value()...), s.data.Trailer(), true, nil
}

// filterState says how a point lookup got its filter block, or why it has
// none.
type filterState uint8

const (
	filterNone     filterState = iota // the table has no filter
	filterInMemory                    // pinned by the table or cached
	filterLoaded                      // read from the file by this lookup
	filterSkipped                     // not worth using (filterUse)
	filterAbove                       // the key is above every partition: not in the table
)

// filterBlock returns the filter block (partition or full filter) that
// covers userKey while filterUse says filters pay (always with
// AlwaysLoadFilters): found through the decoded top-level filter search (a
// pinned partition by its ordinal) or by seeking the top-level filter
// block, then in memory or read from the file.
func (r *Reader) filterBlock(s *getScratch, userKey []byte, seek base.Trailer, stats *Stats) (blockRef, filterState, error) {
	if r.adaptiveFilters() && !r.filterUse.worthReading() {
		// This table's lookups find their keys: a filter, even one in
		// memory, saves nothing. Filter partitions pinned during a burst
		// of absent keys go back to the cache's budget.
		if r.slotsPinned.Load() {
			r.unpinFilterSlots()
		}
		if stats != nil {
			stats.FilterSkips++
		}
		return blockRef{}, filterSkipped, nil
	}
	var h BlockHandle
	slot := -1
	if r.filterSearch != nil {
		i := r.filterSearch.seek(userKey, seek)
		if i >= len(r.filterSearch.handles) {
			return blockRef{}, filterAbove, nil
		}
		var pinned []byte
		if r.filterParts != nil {
			pinned = r.filterParts[i]
		} else if p := r.filterSlots[i].Load(); p != nil {
			pinned = *p
		}
		if pinned != nil {
			if stats != nil {
				stats.CacheHits++
			}
			return blockRef{data: pinned}, filterInMemory, nil
		}
		h, slot = r.filterSearch.handles[i], i
	} else {
		var ok bool
		var err error
		if h, ok, err = r.partitionHandle(s, r.topFilter, userKey, seek); err != nil || !ok {
			return blockRef{}, filterAbove, err
		}
	}
	if b, ok := r.cachedBlock(h, cache.KindFilter, stats); ok {
		return b, filterInMemory, nil
	}
	if slot >= 0 && r.roomToPin(int64(h.Length)) {
		// Read it past the cache and pin it: lookups that need filters
		// here find it without a cache lookup from now on.
		b, err := r.loadBlock(h, cache.KindFilter, stats, readNoFill)
		if err == nil {
			r.pinFilterPartition(slot, b.data)
		}
		return b, filterLoaded, err
	}
	b, err := r.loadBlock(h, cache.KindFilter, stats, readHold)
	return b, filterLoaded, err
}

// adaptiveFilters reports whether filterUse decides which filters lookups
// use: not with AlwaysLoadFilters, nor when the table pinned all its
// filter partitions at open.
func (r *Reader) adaptiveFilters() bool {
	return !r.alwaysLoadFilters && r.filterParts == nil
}

// partitionHandle seeks a top-level block for the handle of the partition
// that may hold userKey, and returns false if the key is above every
// partition.
func (r *Reader) partitionHandle(s *getScratch, top []byte, userKey []byte, seek base.Trailer) (BlockHandle, bool, error) {
	if err := s.top.Init(top); err != nil {
		return BlockHandle{}, false, err
	}
	if !s.top.SeekGE(userKey, seek) {
		return BlockHandle{}, false, s.top.Error()
	}
	h, err := DecodeBlockHandle(s.top.Value())
	return h, err == nil, err
}

// findDataBlock returns the handle of the data block that may hold
// userKey, and false if the key is above every block.
func (r *Reader) findDataBlock(s *getScratch, userKey []byte, seek base.Trailer, stats *Stats) (BlockHandle, bool, error) {
	if r.dataSearch != nil {
		i := r.dataSearch.seek(userKey, seek)
		if i >= len(r.dataSearch.handles) {
			return BlockHandle{}, false, nil
		}
		if stats != nil {
			stats.CacheHits++ // the pinned index partition
		}
		return r.dataSearch.handles[i], true, nil
	}
	ih, ok, err := r.partitionHandle(s, r.topIndex, userKey, seek)
	if err != nil || !ok {
		return BlockHandle{}, false, err
	}
	ib, err := r.readBlock(ih, cache.KindIndex, stats, readHold)
	if err != nil {
		return BlockHandle{}, false, err
	}
	defer ib.release()
	if err := s.index.Init(ib.data); err != nil {
		return BlockHandle{}, false, err
	}
	if !s.index.SeekGE(userKey, seek) {
		return BlockHandle{}, false, s.index.Error()
	}
	h, err := DecodeBlockHandle(s.index.Value())
	return h, err == nil, err
}

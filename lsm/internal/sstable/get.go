package sstable

import (
	"bytes"
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
// ends the lookup) → top-level index → index partition → data block.
func (r *Reader) Get(dst []byte, l *Lookup, stats *Stats) (value []byte, trailer base.Trailer, found bool, err error) {
	if r.closed.Load() {
		return dst, 0, false, errors.Wrapf(base.ErrClosed, "sstable: %s", r.name)
	}
	s := getScratchPool.Get().(*getScratch)
	defer getScratchPool.Put(s)
	seek := base.SeekTrailer(l.Seq)

	if r.topFilter != nil {
		fb, ok, err := r.findPartition(s, r.topFilter, cache.KindFilter, l.UserKey, seek, stats)
		if err != nil || !ok {
			return dst, 0, false, err
		}
		may := bloom.MayContain(fb.data, l.Hash)
		fb.release()
		if stats != nil {
			stats.FilterChecks++
			if !may {
				stats.FilterNegatives++
			}
		}
		if !may {
			return dst, 0, false, nil
		}
	}

	h, ok, err := r.findDataBlock(s, l.UserKey, seek, stats)
	if err != nil || !ok {
		return dst, 0, false, err
	}
	db, err := r.readBlock(h, cache.KindData, stats, readPeek)
	if err != nil {
		return dst, 0, false, err
	}
	defer db.release()
	if err := s.data.Init(db.data); err != nil {
		return dst, 0, false, err
	}
	if !s.data.SeekGE(l.UserKey, seek) {
		return dst, 0, false, s.data.Error()
	}
	if !bytes.Equal(s.data.UserKey(), l.UserKey) {
		return dst, 0, false, nil
	}
	return append(dst, s.data.Value()...), s.data.Trailer(), true, nil
}

// findPartition returns the index or filter partition that may hold
// userKey, and false if the key is above every partition: a pinned filter
// partition by the ordinal the decoded top-level search gives, otherwise by
// seeking the top-level block and reading the partition through its handle.
func (r *Reader) findPartition(s *getScratch, top []byte, kind cache.Kind, userKey []byte, seek base.Trailer, stats *Stats) (blockRef, bool, error) {
	if kind == cache.KindFilter && r.filterSearch != nil {
		i := r.filterSearch.seek(userKey, seek)
		if i >= len(r.filterParts) {
			return blockRef{}, false, nil
		}
		if stats != nil {
			stats.CacheHits++
		}
		return blockRef{data: r.filterParts[i]}, true, nil
	}
	if err := s.top.Init(top); err != nil {
		return blockRef{}, false, err
	}
	if !s.top.SeekGE(userKey, seek) {
		return blockRef{}, false, s.top.Error()
	}
	h, err := DecodeBlockHandle(s.top.Value())
	if err != nil {
		return blockRef{}, false, err
	}
	b, err := r.readBlock(h, kind, stats, readPeek)
	return b, err == nil, err
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
	ib, ok, err := r.findPartition(s, r.topIndex, cache.KindIndex, userKey, seek, stats)
	if err != nil || !ok {
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

package lsm

import (
	"bytes"
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/memtable"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/cockroachdb/errors"
)

// ReadStats counts the work of the reads it is passed to: blocks read
// from table files by kind, bytes read, block cache hits, filter probes.
// One ReadStats belongs to one goroutine.
type ReadStats = sstable.Stats

// ReadOptions control one read.
type ReadOptions struct {
	// Snapshot, if set, reads as of the snapshot.
	Snapshot *Snapshot
	// Stats, if set, accumulates the read's block reads and cache hits.
	Stats *ReadStats
}

// Get returns a copy of the value of key, or an error marked ErrNotFound.
func (d *DB) Get(key []byte) ([]byte, error) {
	return d.GetAppend(nil, key, nil)
}

// getScratch holds a Get's memtable iterator, pooled so that a Get on
// cached blocks allocates nothing, and the get's stripe (readStripes):
// sync.Pool hands a processor back the scratch it put, so gets on
// different processors mostly count on different stripes.
type getScratch struct {
	mem    memtable.Iterator
	lookup sstable.Lookup
	stripe int
}

// newGetScratch is the DB's getScratch pool's New.
func (d *DB) newGetScratch() any {
	return &getScratch{stripe: int(d.stripes.Add(1) % readStripes)}
}

// GetAppend appends the value of key to dst and returns it, or returns an
// error marked ErrNotFound. With blocks in the cache and room in dst it
// allocates nothing.
//
// Sources are searched newest first: memtables, L0 tables newest first,
// then at most one table per level. Range tombstones met on the way
// delete older entries: an entry is visible only if no tombstone seen so
// far, visible at the read's sequence number, is newer than it; and once a
// tombstone is newer than everything a source holds, the search stops.
func (d *DB) GetAppend(dst, key []byte, ro *ReadOptions) ([]byte, error) {
	// No defers: with this many returns they are not open-coded, and
	// their set-up and run cost 4% of a cached get.
	s := d.getScratch.Get().(*getScratch)
	rs := d.loadReadStateStripe(s.stripe)
	value, err := d.getIn(rs, s, dst, key, ro)
	rs.unrefStripe(s.stripe)
	// A pooled iterator must not keep a memtable reachable: its arena is
	// unmapped only once nothing refers to it.
	s.mem = memtable.Iterator{}
	d.getScratch.Put(s)
	if err != nil {
		if err == errMergeOperand {
			// The newest entry is a merge operand: the operands and the
			// value under them are gathered by an iterator (getMerged).
			value, err = d.getMerged(dst, key, ro)
		}
		if err != nil && err != ErrNotFound {
			err = d.markIfClosed(err)
		}
	}
	return value, err
}

// getIn is GetAppend's search of read state rs.
func (d *DB) getIn(rs *readState, s *getScratch, dst, key []byte, ro *ReadOptions) ([]byte, error) {
	if d.isClosed() {
		return dst, errors.Wrap(ErrClosed, "lsm: Get")
	}
	seq := base.SeqNum(d.visibleSeq.Load())
	var stats *ReadStats
	if ro != nil {
		if ro.Snapshot != nil {
			seq = ro.Snapshot.seq
		}
		stats = ro.Stats
	}
	d.metrics.gets[s.stripe].n.Add(1)

	var tomb base.SeqNum // newest visible tombstone covering key so far
	seek := base.SeekTrailer(seq)
	for _, m := range rs.memtables {
		if base.SeqNum(m.maxSeq.Load()) < tomb {
			return dst, ErrNotFound
		}
		if set := m.rangeDelSet(); set != nil {
			tomb = max(tomb, set.MaxCoveringSeq(key, seq))
		}
		m.mt.InitPointIter(&s.mem)
		if s.mem.SeekGE(key, seek) && bytes.Equal(s.mem.UserKey(), key) {
			return found(dst, s.mem.Trailer(), s.mem.Value(), tomb)
		}
	}

	s.lookup = sstable.MakeLookup(key, seq)
	v := rs.version
	for _, t := range v.Tables(0) {
		if !tableContains(t, key) {
			continue
		}
		value, tr, ok, err := d.getFromTable(dst, t, &s.lookup, &tomb, stats)
		if err != nil || ok {
			return value, err
		}
		if tomb > 0 && tr == stopSearch {
			return dst, ErrNotFound
		}
	}
	for level := 1; level < manifest.NumLevels; level++ {
		tables := v.Tables(level)
		i := sort.Search(len(tables), func(i int) bool {
			return !tableBefore(tables[i], key)
		})
		if i == len(tables) || !tableContains(tables[i], key) {
			continue
		}
		value, tr, ok, err := d.getFromTable(dst, tables[i], &s.lookup, &tomb, stats)
		if err != nil || ok {
			return value, err
		}
		if tomb > 0 && tr == stopSearch {
			return dst, ErrNotFound
		}
	}
	return dst, ErrNotFound
}

// stopSearch is returned as the trailer by getFromTable when a tombstone
// is newer than everything the table holds: older sources are deleted too.
const stopSearch = base.Trailer(1<<64 - 1)

// getFromTable looks key up in one table; ok means the search is decided
// (value or ErrNotFound in err).
func (d *DB) getFromTable(dst []byte, t *manifest.TableMeta, l *sstable.Lookup, tomb *base.SeqNum, stats *ReadStats) ([]byte, base.Trailer, bool, error) {
	if t.LargestSeqNum < *tomb {
		return dst, stopSearch, false, nil
	}
	h, err := d.tableCache.get(t.FileNum)
	if err != nil {
		return dst, 0, true, err
	}
	defer d.tableCache.release(h)
	if h.tombstones != nil {
		*tomb = max(*tomb, h.tombstones.MaxCoveringSeq(l.UserKey, l.Seq))
	}
	value, tr, ok, err := h.reader.Get(dst, l, stats)
	if err != nil {
		return dst, 0, true, err
	}
	if !ok {
		return dst, 0, false, nil
	}
	value, err = found(value[:len(dst)], tr, value[len(dst):], *tomb)
	return value, tr, true, err
}

// found decides a lookup that met an entry: its value, unless it is a
// point tombstone or a newer range tombstone covers it. A merge operand
// not covered returns errMergeOperand.
func found(dst []byte, tr base.Trailer, value []byte, tomb base.SeqNum) ([]byte, error) {
	if tr.Kind() != base.KindSet || tr.SeqNum() < tomb {
		if tr.Kind() == base.KindMerge && tr.SeqNum() >= tomb {
			return dst, errMergeOperand
		}
		return dst, ErrNotFound
	}
	return append(dst, value...), nil
}

// tableBefore reports whether every key of t is below user key k.
func tableBefore(t *manifest.TableMeta, k []byte) bool {
	c := bytes.Compare(t.Largest.UserKey, k)
	return c < 0 || c == 0 && t.Largest.Trailer == manifest.RangeDeleteSentinel
}

// tableContains reports whether user key k lies within t's bounds.
func tableContains(t *manifest.TableMeta, k []byte) bool {
	return bytes.Compare(t.Smallest.UserKey, k) <= 0 && !tableBefore(t, k)
}

func (d *DB) isClosed() bool { return d.closedFlag.Load() }

// markIfClosed marks an error of a read that raced with Close (a table
// file closed under it) as ErrClosed, so callers see why.
func (d *DB) markIfClosed(err error) error {
	if err != nil && d.isClosed() && !errors.Is(err, ErrClosed) {
		return base.Mark(err, ErrClosed)
	}
	return err
}

package lsm

import (
	"bytes"
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
)

// levelIter walks the point entries of one level's tables (sorted and
// disjoint in user keys) as one sequence, opening tables as it reaches
// them. It also serves single L0 tables (a "level" of one table).
type levelIter struct {
	d      *DB
	tables []*manifest.TableMeta
	opts   sstable.IterOptions

	index   int           // current table, or -1 / len(tables) off either end
	iter    *sstable.Iter // iterator of tables[index] (&iterBuf), nil if none
	iterBuf sstable.Iter  // reused from table to table and across pooled uses
	handle  *tableHandle  // the open table of iter, referenced
	err     error
}

var _ base.InternalIterator = (*levelIter)(nil)

// init makes l an unpositioned iterator over tables, keeping its buffers.
func (l *levelIter) init(d *DB, tables []*manifest.TableMeta, opts sstable.IterOptions) {
	// Drop the tables outside the bounds up front.
	lo, hi := 0, len(tables)
	if opts.LowerBound != nil {
		lo = sort.Search(len(tables), func(i int) bool { return !tableBefore(tables[i], opts.LowerBound) })
	}
	if opts.UpperBound != nil {
		hi = sort.Search(len(tables), func(i int) bool {
			return bytes.Compare(tables[i].Smallest.UserKey, opts.UpperBound) >= 0
		})
	}
	if hi < lo {
		hi = lo
	}
	l.d, l.tables, l.opts, l.index, l.iter, l.handle, l.err = d, tables[lo:hi], opts, -1, nil, nil, nil
}

// currentMaxSeq is the largest sequence number of the current table: a
// range tombstone newer than it deletes everything the table holds in its
// range.
func (l *levelIter) currentMaxSeq() base.SeqNum {
	if l.index < 0 || l.index >= len(l.tables) {
		return base.SeqNumMax
	}
	return l.tables[l.index].LargestSeqNum
}

// open positions on table i (closing the previous table's iterator).
func (l *levelIter) open(i int) bool {
	if l.iter != nil {
		if err := l.iter.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.iter = nil
		l.d.tableCache.release(l.handle)
		l.handle = nil
	}
	l.index = i
	if i < 0 || i >= len(l.tables) || l.err != nil {
		return false
	}
	h, err := l.d.tableCache.get(l.tables[i].FileNum)
	if err != nil {
		l.err = err
		return false
	}
	h.reader.InitIter(&l.iterBuf, l.opts)
	l.iter = &l.iterBuf
	l.handle = h
	return true
}

func (l *levelIter) check(ok bool) bool {
	if !ok && l.iter != nil {
		if err := l.iter.Error(); err != nil && l.err == nil {
			l.err = err
		}
	}
	return ok && l.err == nil
}

func (l *levelIter) skipForward(ok bool) bool {
	for !l.check(ok) {
		if l.err != nil || !l.open(l.index+1) {
			return false
		}
		ok = l.iter.First()
	}
	return true
}

func (l *levelIter) skipBackward(ok bool) bool {
	for !l.check(ok) {
		if l.err != nil || !l.open(l.index-1) {
			return false
		}
		ok = l.iter.Last()
	}
	return true
}

func (l *levelIter) SeekGE(userKey []byte, trailer base.Trailer) bool {
	i := sort.Search(len(l.tables), func(i int) bool { return !tableBefore(l.tables[i], userKey) })
	if !l.open(i) {
		return false
	}
	return l.skipForward(l.iter.SeekGE(userKey, trailer))
}

func (l *levelIter) SeekLT(userKey []byte, trailer base.Trailer) bool {
	// The last table starting below the target.
	i := sort.Search(len(l.tables), func(i int) bool {
		s := l.tables[i].Smallest
		return base.CompareInternal(s.UserKey, s.Trailer, userKey, trailer) >= 0
	}) - 1
	if !l.open(i) {
		return false
	}
	return l.skipBackward(l.iter.SeekLT(userKey, trailer))
}

func (l *levelIter) First() bool {
	if !l.open(0) {
		return false
	}
	return l.skipForward(l.iter.First())
}

func (l *levelIter) Last() bool {
	if !l.open(len(l.tables) - 1) {
		return false
	}
	return l.skipBackward(l.iter.Last())
}

func (l *levelIter) Next() bool { return l.skipForward(l.iter.Next()) }
func (l *levelIter) Prev() bool { return l.skipBackward(l.iter.Prev()) }

func (l *levelIter) Valid() bool {
	return l.err == nil && l.iter != nil && l.iter.Valid()
}

func (l *levelIter) UserKey() []byte       { return l.iter.UserKey() }
func (l *levelIter) Trailer() base.Trailer { return l.iter.Trailer() }
func (l *levelIter) Value() []byte         { return l.iter.Value() }
func (l *levelIter) Error() error          { return l.err }

func (l *levelIter) Close() error {
	l.open(-1)
	return l.err
}

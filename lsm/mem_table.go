package lsm

import (
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/memtable"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
	"github.com/cockroachdb/errors"
)

// memTable is a memtable with what the DB tracks about it: the WAL that
// holds its batches, the writers still applying to it, and its range
// tombstones, fragmented on demand for reads.
type memTable struct {
	mt     *memtable.Memtable
	walNum uint64

	// refs counts the holders of the memtable: its place in the DB's
	// mutable or immutable memtables (one), and every read state listing
	// it that is not freed. Readers reach a memtable only through a read
	// state, and writers only while it is listed, so at zero nothing can
	// reach it: its arena goes to the DB's spare (recycle), for the next
	// memtable to be built in.
	refs    atomic.Int32
	recycle *atomic.Pointer[memtable.Memtable]

	// budget is the charge the memtable accepts; charged what batches
	// have reserved so far (guarded by the DB's commitMu).
	budget, charged int64

	// applyMu serializes inserts: the skiplist takes one writer at a time.
	applyMu sync.Mutex
	// writers counts batches enqueued to walNum's WAL and not yet applied;
	// a memtable is flushed only when it drops to zero after the switch.
	writersMu sync.Mutex
	writers   int
	drained   *sync.Cond

	maxSeq atomic.Uint64 // largest sequence number applied

	// flushed is the table a flush wrote whose manifest edit failed for
	// lack of space: the retry installs it instead of writing another.
	// Only the flush job touches it.
	flushed *manifest.TableMeta

	// Range tombstones: the skiplist holds them as entries; readers need
	// them fragmented. tombstones caches the fragmented set for the count
	// of range deletions it was built from.
	rangeDels  atomic.Int64
	tombstones atomic.Pointer[memTombstones]
}

type memTombstones struct {
	count int64
	set   *rangedel.Set
}

// newMemTable returns a memtable whose arena holds size bytes, built in
// the arena of the spare memtable, if any, when it has that size; its
// reference is the DB's list's.
func newMemTable(size int64, walNum uint64, spare *atomic.Pointer[memtable.Memtable]) *memTable {
	var mt *memtable.Memtable
	if spare != nil {
		mt = memtable.Recycle(spare.Swap(nil), int(size))
	} else {
		mt = memtable.New(int(size))
	}
	m := &memTable{mt: mt, walNum: walNum, recycle: spare}
	m.refs.Store(1)
	m.drained = sync.NewCond(&m.writersMu)
	return m
}

// ref adds a holder.
func (m *memTable) ref() { m.refs.Add(1) }

// unref drops a holder; the last one gives the arena to the DB's spare.
func (m *memTable) unref() {
	if n := m.refs.Add(-1); n > 0 || m.recycle == nil {
		return
	} else if n < 0 {
		panic(errors.AssertionFailedf("lsm: memtable of WAL %d released once too often", m.walNum))
	}
	if base.InvariantsEnabled {
		memtable.Poison(m.mt) // a reader still holding it reads garbage
	}
	m.recycle.Store(m.mt)
	m.mt = nil
}

// reserve registers a writer that will apply a batch later.
func (m *memTable) reserve() {
	m.writersMu.Lock()
	m.writers++
	m.writersMu.Unlock()
}

// release ends a reserve.
func (m *memTable) release() {
	m.writersMu.Lock()
	m.writers--
	if m.writers == 0 {
		m.drained.Broadcast()
	}
	m.writersMu.Unlock()
}

// waitForWriters returns when every reserved writer has released.
func (m *memTable) waitForWriters() {
	m.writersMu.Lock()
	for m.writers > 0 {
		m.drained.Wait()
	}
	m.writersMu.Unlock()
}

// add inserts one operation. The caller holds applyMu.
func (m *memTable) add(seq base.SeqNum, kind base.Kind, key, value []byte) error {
	if err := m.mt.Add(seq, kind, key, value); err != nil {
		return err
	}
	if kind == base.KindRangeDelete {
		m.rangeDels.Add(1)
	}
	m.noteSeqNum(seq)
	return nil
}

// noteSeqNum records that an entry with sequence number seq was applied.
func (m *memTable) noteSeqNum(seq base.SeqNum) {
	for {
		cur := m.maxSeq.Load()
		if uint64(seq) <= cur || m.maxSeq.CompareAndSwap(cur, uint64(seq)) {
			return
		}
	}
}

// rangeDelSet returns the memtable's range tombstones, fragmented, or nil
// when it has none. The set is rebuilt only after new range deletions.
func (m *memTable) rangeDelSet() *rangedel.Set {
	n := m.rangeDels.Load()
	if n == 0 {
		return nil
	}
	if t := m.tombstones.Load(); t != nil && t.count == n {
		return t.set
	}
	var ts []rangedel.Tombstone
	var it memtable.Iterator
	m.mt.InitRangeDelIter(&it)
	for ok := it.First(); ok; ok = it.Next() {
		ts = append(ts, rangedel.Tombstone{Start: it.UserKey(), End: it.Value(), Seq: it.Trailer().SeqNum()})
	}
	// A tombstone added while we iterated is counted in a later n; the
	// cache entry records the count we started from, so it is rebuilt.
	set := rangedel.BuildSet(ts)
	m.tombstones.Store(&memTombstones{count: n, set: set})
	return set
}

// empty reports whether nothing was ever added.
func (m *memTable) empty() bool { return m.mt.Empty() }

package memtable

import (
	"bytes"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Memtable is the engine's write buffer: point entries (KindSet, KindDelete, KindMerge)
// and range tombstones (KindRangeDelete, keyed by their inclusive start with
// the exclusive end as value) in two skiplists that share one arena, so one
// budget bounds both and ApproximateSize is the single number a flush
// decision needs.
//
// Range tombstones are stored as written, unfragmented and possibly
// overlapping; applying them (to Get results, iterators, compactions) is the
// engine's job.
//
// Concurrency is that of Skiplist: one goroutine at a time in Add, any number
// of readers concurrently.
type Memtable struct {
	arena     *arena
	points    *Skiplist
	rangeDels *Skiplist
}

// New returns an empty memtable with an arena of size bytes (clamped as for
// NewSkiplist; the two head nodes are always accommodated).
func New(size int) *Memtable {
	a := newArena(size, arenaReserved+2*headNodeSize)
	return &Memtable{
		arena:     a,
		points:    newSkiplistInArena(a),
		rangeDels: newSkiplistInArena(a),
	}
}

// Recycle returns an empty memtable as New(size) would, built in m's arena
// when that arena has the size New would allocate (else it is New(size)):
// the arena's memory is resident already, where a new one costs zeroing
// and a page fault per 4 KiB as it fills (an insert of a 16-byte key took
// 73 ns of CPU in a new arena, 54 in a recycled one; go test
// ./lsm/internal/memtable -bench AddFresh -benchtime 8000000x). m must be
// unreachable: no reader or writer may use it, or a slice it returned,
// again. Nothing of m's bytes is relied on beyond the head nodes, which
// are cleared: m may have been poisoned (Poison).
func Recycle(m *Memtable, size int) *Memtable {
	minSize := arenaReserved + 2*headNodeSize
	if m == nil || m.arena.capacity() != arenaSizeFor(size, minSize) {
		return New(size)
	}
	a := m.arena
	// Nodes are written whole before they are linked (Add sets every
	// tower slot), so only the head nodes need zeroing.
	clear(a.buf[:minSize])
	a.used.Store(arenaReserved)
	return &Memtable{arena: a, points: newSkiplistInArena(a), rangeDels: newSkiplistInArena(a)}
}

// poisonByte fills a released arena (Poison): tower slots read from it
// point far past any arena's end, and keys and values read from it are
// recognisably not written data.
const poisonByte = 0xdb

// Poison overwrites every byte m's entries occupy, so that a reader that
// reaches m after its release (a missing reference: see Recycle) fails
// loudly, where a recycled arena would hand it another memtable's entries.
// The engine calls it in invariants builds when the last holder releases
// m; the race detector reports such a reader too (Poison's plain writes
// against its atomic loads). m must be unreachable, as for Recycle.
func Poison(m *Memtable) {
	a := m.arena
	b := a.buf[arenaReserved:a.used.Load()]
	for i := range b {
		b[i] = poisonByte
	}
}

// Add records one write: a Set, Delete or Merge of key, or, for KindRangeDelete, the
// deletion of user keys in [key, value). Errors: an unknown kind, a sequence
// number above base.SeqNumMax, an empty or inverted range, a duplicate
// (key, seq, kind) (wrapping ErrDuplicateKey) and a full arena (wrapping
// ErrArenaFull). On error nothing is added.
//
// REQUIRES: no other goroutine is in Add on this memtable.
func (m *Memtable) Add(seq base.SeqNum, kind base.Kind, key, value []byte) error {
	if seq > base.SeqNumMax {
		return errors.Newf("memtable: sequence number %d of key %q exceeds the maximum %d", seq, key, base.SeqNumMax)
	}
	trailer := base.MakeTrailer(seq, kind)
	switch kind {
	case base.KindSet, base.KindDelete, base.KindMerge:
		return m.points.Add(key, trailer, value)
	case base.KindRangeDelete:
		if bytes.Compare(key, value) >= 0 {
			return errors.Newf("memtable: range deletion [%q, %q) #%d is empty: start must sort before end", key, value, seq)
		}
		return m.rangeDels.Add(key, trailer, value)
	}
	return errors.Newf("memtable: key %q #%d has unknown kind %d", key, seq, uint8(kind))
}

// Ops is a sequence of write operations, as a decoded batch yields them
// (batch.Reader).
type Ops interface {
	Next() (kind base.Kind, key, value []byte, ok bool, err error)
}

// AddSorted adds ops, with sequence numbers seq, seq+1, ..., in one pass,
// if they are point entries (Set, Delete, Merge) in strictly increasing
// user-key order that all sort after the memtable's last point entry: the
// nodes are appended at the end of the list without a search, and the run
// becomes visible to readers when it is complete. A bookie's checkpoint
// writes such batches: sorted locations, one per entry, each batch after
// the previous one in a fresh memtable (53 → 37 ns of CPU per key; go test
// ./lsm/internal/memtable -bench AddBatch -benchtime 8000000x). It reports
// false, with nothing
// added and the arena as it was, when the ops are not such a run or the
// arena cannot hold them; the caller then adds them one by one. A decoding
// error is returned as is, with nothing added.
//
// REQUIRES: no other goroutine is in Add on this memtable.
func (m *Memtable) AddSorted(seq base.SeqNum, ops Ops) (bool, error) {
	var run SortedRun
	prepared, err := m.PrepareSorted(seq, ops, &run)
	if !prepared || err != nil {
		return false, err
	}
	m.PublishSorted(&run)
	return true, nil
}

// SortedRun is a run of entries that PrepareSorted built in a memtable's
// arena where no reader can reach it yet.
type SortedRun struct {
	run sortedRun
}

// PrepareSorted is the first half of AddSorted: it builds the run in the
// arena, unreachable by readers and iterators, and reports whether it
// did (false, with nothing kept, in the cases where AddSorted reports
// false). A prepared run must then be made visible at once with
// PublishSorted, or dropped with DiscardSorted, before anything else is
// added to the memtable. The DB builds a large batch's run while its WAL
// record is written and synced, and publishes it only once the WAL holds
// it, or discards it if the WAL failed.
//
// REQUIRES: no other goroutine is in Add on this memtable, until
// PublishSorted or DiscardSorted.
func (m *Memtable) PrepareSorted(seq base.SeqNum, ops Ops, run *SortedRun) (bool, error) {
	var err error
	prepared := m.points.prepareSorted(&run.run, func() ([]byte, base.Trailer, []byte, bool, bool) {
		kind, key, value, ok, derr := ops.Next()
		switch {
		case derr != nil:
			err = derr
			return nil, 0, nil, false, true
		case !ok:
			return nil, 0, nil, false, false
		case kind != base.KindSet && kind != base.KindDelete && kind != base.KindMerge || seq > base.SeqNumMax:
			return nil, 0, nil, false, true
		}
		tr := base.MakeTrailer(seq, kind)
		seq++
		return key, tr, value, true, false
	})
	if err != nil {
		return false, err
	}
	return prepared, nil
}

// PublishSorted links a run from PrepareSorted into the memtable: readers
// see all of it at once.
func (m *Memtable) PublishSorted(run *SortedRun) { m.points.publishSorted(&run.run) }

// DiscardSorted frees the arena bytes of a run from PrepareSorted that is
// not to be published: the memtable is as before PrepareSorted.
func (m *Memtable) DiscardSorted(run *SortedRun) { m.points.discardSorted(&run.run) }

// Get returns the newest point entry of userKey with a sequence number <= seq:
// its value and kind (KindSet or KindDelete). found is false when there is no
// such entry. Range tombstones are not consulted. The value points into the
// arena and is valid for the memtable's life. Get does not allocate.
func (m *Memtable) Get(userKey []byte, seq base.SeqNum) (value []byte, kind base.Kind, found bool) {
	// SeekTrailer(seq) sorts before every real entry of userKey with a
	// sequence number <= seq and after every newer one.
	_, nd := m.points.seek(userKey, base.SeekTrailer(min(seq, base.SeqNumMax)))
	if nd == 0 || !bytes.Equal(m.arena.nodeKey(nd), userKey) {
		return nil, 0, false
	}
	return m.arena.nodeValue(nd), m.arena.nodeTrailer(nd).Kind(), true
}

// NewPointIter returns an iterator over the point entries.
func (m *Memtable) NewPointIter() *Iterator { return m.points.NewIter() }

// InitPointIter resets it to an unpositioned iterator over the point entries.
func (m *Memtable) InitPointIter(it *Iterator) { m.points.InitIter(it) }

// NewRangeDelIter returns an iterator over the range tombstones, ordered by
// start key (then newest first); each entry's Value is its exclusive end key.
func (m *Memtable) NewRangeDelIter() *Iterator { return m.rangeDels.NewIter() }

// InitRangeDelIter resets it to an unpositioned iterator over the range
// tombstones.
func (m *Memtable) InitRangeDelIter(it *Iterator) { m.rangeDels.InitIter(it) }

// ApproximateSize returns the arena bytes in use by both lists, head nodes
// included. It only grows, and never exceeds Capacity.
func (m *Memtable) ApproximateSize() int { return m.arena.size() }

// Capacity returns the arena's size in bytes.
func (m *Memtable) Capacity() int { return m.arena.capacity() }

// Available returns the arena bytes still free. An entry is certain to fit
// when MaxEntrySize of it is at most Available.
func (m *Memtable) Available() int { return m.arena.capacity() - m.arena.size() }

// Count returns the number of point entries and range tombstones.
func (m *Memtable) Count() int { return m.points.Count() + m.rangeDels.Count() }

// Empty reports whether nothing has been added.
func (m *Memtable) Empty() bool { return m.Count() == 0 }

package rocksdb

import (
	"bytes"
	"container/heap"
	"sort"
)

// internalIter walks internal keys in compareInternal order: one table, the
// memtable rebuilt from the WAL, or all of them merged.
type internalIter interface {
	First()
	SeekGE(user []byte) // the newest version of the first user key >= user
	Next()
	Valid() bool
	Key() internalKey // valid until the iterator moves
	Value() []byte    // valid until the iterator moves
	Err() error
}

// tableIter walks one table's data blocks in index order.
type tableIter struct {
	t       *table
	block   int // index of the current data block
	entries []blockEntry
	keys    []internalKey
	pos     int
	err     error
}

func (it *tableIter) First() { it.load(0); it.skipEmpty() }

func (it *tableIter) SeekGE(user []byte) {
	if it.t.meta != nil {
		if large, _ := parseInternalKey(it.t.meta.largest); bytes.Compare(user, large.user) > 0 {
			it.load(len(it.t.index)) // the table holds nothing at or after user
			return
		}
	}
	it.load(it.t.seekBlock(user))
	for it.Valid() && bytes.Compare(it.keys[it.pos].user, user) < 0 {
		it.Next()
	}
	it.skipEmpty()
}

func (it *tableIter) Next() {
	if !it.Valid() {
		return
	}
	it.pos++
	it.skipEmpty()
}

func (it *tableIter) skipEmpty() {
	for it.err == nil && it.pos >= len(it.entries) && it.block < len(it.t.index) {
		it.load(it.block + 1)
	}
}

func (it *tableIter) Valid() bool { return it.err == nil && it.pos < len(it.entries) }

func (it *tableIter) Key() internalKey { return it.keys[it.pos] }

func (it *tableIter) Value() []byte { return it.entries[it.pos].value }

func (it *tableIter) Err() error { return it.err }

// load positions the iterator at the start of data block i (or past the
// end).
func (it *tableIter) load(i int) {
	it.block, it.entries, it.keys, it.pos = i, nil, nil, 0
	if i >= len(it.t.index) || it.err != nil {
		return
	}
	if c := it.t.lastBlock.Load(); c != nil && c.index == i {
		it.entries, it.keys = c.entries, c.keys
		return
	}
	c, err := it.t.loadDataBlock(i)
	if err != nil {
		it.err = err
		return
	}
	it.t.lastBlock.Store(c)
	it.entries, it.keys = c.entries, c.keys
}

// decodedBlock is a data block's entries and parsed keys; immutable, so that
// iterators can share the table's last one.
type decodedBlock struct {
	index   int
	entries []blockEntry
	keys    []internalKey
}

// loadDataBlock reads data block i and checks its keys: each an internal
// key of a type this reader applies, in order.
func (t *table) loadDataBlock(i int) (*decodedBlock, error) {
	h := t.index[i].handle
	entries, err := t.decodeBlockAt(h, "data", dataBlock)
	if err != nil {
		return nil, err
	}
	keys := make([]internalKey, 0, len(entries))
	for j, e := range entries {
		ik, ok := parseInternalKey(e.key)
		if !ok {
			return nil, corruptf("%s: data %s: entry at offset %d: key shorter than its 8-byte trailer", t.name, h, e.offset)
		}
		switch ik.kind {
		case typeValue, typeDeletion, typeSingleDeletion:
		case typeMerge:
			return nil, mergeRecordError(t.name, h, e.offset, ik.user)
		default:
			return nil, unsupportedf("%s: data %s: entry at offset %d: value type %#x", t.name, h, e.offset, ik.kind)
		}
		if t.globalSeqno != 0 {
			ik.seq = t.globalSeqno
		}
		if j > 0 && compareInternal(keys[j-1], ik) >= 0 {
			return nil, corruptf("%s: data %s: entry at offset %d: keys out of order", t.name, h, e.offset)
		}
		keys = append(keys, ik)
	}
	return &decodedBlock{index: i, entries: entries, keys: keys}, nil
}

// memEntry is one operation replayed from the WAL.
type memEntry struct {
	key   internalKey
	value []byte
}

// memIter walks the WAL's operations, sorted.
type memIter struct {
	entries []memEntry
	pos     int
}

func (it *memIter) First() { it.pos = 0 }

func (it *memIter) SeekGE(user []byte) {
	it.pos = sort.Search(len(it.entries), func(i int) bool { return bytes.Compare(it.entries[i].key.user, user) >= 0 })
}

func (it *memIter) Next() {
	if it.pos < len(it.entries) {
		it.pos++
	}
}

func (it *memIter) Valid() bool      { return it.pos < len(it.entries) }
func (it *memIter) Key() internalKey { return it.entries[it.pos].key }
func (it *memIter) Value() []byte    { return it.entries[it.pos].value }
func (it *memIter) Err() error       { return nil }

// mergingIter merges its children into one internalIter with a heap.
type mergingIter struct {
	children []internalIter
	h        iterHeap
	err      error
}

type iterHeap []internalIter

func (h iterHeap) Len() int           { return len(h) }
func (h iterHeap) Less(i, j int) bool { return compareInternal(h[i].Key(), h[j].Key()) < 0 }
func (h iterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *iterHeap) Push(x any)        { *h = append(*h, x.(internalIter)) }
func (h *iterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (m *mergingIter) init(position func(internalIter)) {
	m.h = m.h[:0]
	for _, c := range m.children {
		position(c)
		if c.Valid() {
			m.h = append(m.h, c)
		} else if err := c.Err(); err != nil {
			m.err = err
			m.h = m.h[:0]
			return
		}
	}
	heap.Init(&m.h)
}

func (m *mergingIter) First() { m.init(func(c internalIter) { c.First() }) }

func (m *mergingIter) SeekGE(user []byte) { m.init(func(c internalIter) { c.SeekGE(user) }) }

func (m *mergingIter) Next() {
	if !m.Valid() {
		return
	}
	top := m.h[0]
	top.Next()
	if top.Valid() {
		heap.Fix(&m.h, 0)
		return
	}
	if err := top.Err(); err != nil {
		m.err = err
		m.h = m.h[:0]
		return
	}
	heap.Pop(&m.h)
}

func (m *mergingIter) Valid() bool      { return m.err == nil && len(m.h) > 0 }
func (m *mergingIter) Key() internalKey { return m.h[0].Key() }
func (m *mergingIter) Value() []byte    { return m.h[0].Value() }
func (m *mergingIter) Err() error       { return m.err }

package bookie

import (
	"slices"
	"sync"
	"sync/atomic"
)

// readCacheSegments is the number of segments of a read cache: filling
// the newest one evicts the oldest, a quarter of the cache at once.
const readCacheSegments = 4

// readCache holds entries read from the entry logs, and those read ahead
// after them (upstream's ReadCache). It is a ring of segments: entries are
// appended to the current segment's buffer; when it is full, the next
// segment is emptied and becomes current. Eviction is thus by age, a
// segment at a time, with no per-entry bookkeeping.
//
// Entries that change (a rewrite, an entry-log compaction moving an
// entry, a deleted ledger) are invalidated. A reader that looked an entry
// up before an invalidation must not insert what it read after it: it
// takes the epoch before its index lookup and inserts only if the epoch
// has not moved (putIf).
type readCache struct {
	segmentSize int
	epoch       atomic.Uint64

	mu       sync.RWMutex
	segments [readCacheSegments]readSegment
	cur      int
}

// readSegment is one segment: payloads back to back in buf.
type readSegment struct {
	buf     []byte
	ledgers map[int64]map[int64]span
	count   int
}

// span locates a payload in a segment's buffer.
type span struct{ off, len int }

func newReadCache(capacity int64) *readCache {
	c := &readCache{segmentSize: int(min(max(capacity/readCacheSegments, 0), 1<<30))}
	for i := range c.segments {
		c.segments[i].ledgers = map[int64]map[int64]span{}
	}
	return c
}

// get returns a copy of an entry's payload, newest segment first.
func (c *readCache) get(ledgerID, entryID int64) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i := range readCacheSegments {
		s := &c.segments[(c.cur-i+readCacheSegments)%readCacheSegments]
		if sp, ok := s.ledgers[ledgerID][entryID]; ok {
			return slices.Clone(s.buf[sp.off : sp.off+sp.len]), true
		}
	}
	return nil, false
}

// currentEpoch returns the epoch to pass to putIf.
func (c *readCache) currentEpoch() uint64 { return c.epoch.Load() }

// putIf inserts a copy of an entry's payload, unless an invalidation
// happened since epoch or the payload is larger than a segment.
func (c *readCache) putIf(epoch uint64, ledgerID, entryID int64, payload []byte) {
	if c.segmentSize == 0 || len(payload) > c.segmentSize {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch.Load() != epoch {
		return
	}
	s := &c.segments[c.cur]
	if s.buf == nil {
		s.buf = make([]byte, 0, c.segmentSize)
	}
	if len(s.buf)+len(payload) > cap(s.buf) {
		c.cur = (c.cur + 1) % readCacheSegments
		s = &c.segments[c.cur]
		if s.buf == nil {
			s.buf = make([]byte, 0, c.segmentSize)
		}
		s.buf = s.buf[:0]
		clear(s.ledgers)
		s.count = 0
	}
	m := s.ledgers[ledgerID]
	if m == nil {
		m = map[int64]span{}
		s.ledgers[ledgerID] = m
	}
	if _, ok := m[entryID]; !ok {
		s.count++
	}
	m[entryID] = span{len(s.buf), len(payload)}
	s.buf = append(s.buf, payload...)
}

// invalidate drops the cached copies of entries and moves the epoch.
func (c *readCache) invalidate(entries []cachedEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch.Add(1)
	for i := range c.segments {
		s := &c.segments[i]
		if s.count == 0 {
			continue
		}
		for _, e := range entries {
			if m := s.ledgers[e.ledgerID]; m != nil {
				if _, ok := m[e.entryID]; ok {
					delete(m, e.entryID)
					s.count--
				}
			}
		}
	}
}

// deleteLedger drops a ledger's entries and moves the epoch.
func (c *readCache) deleteLedger(ledgerID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch.Add(1)
	for i := range c.segments {
		s := &c.segments[i]
		s.count -= len(s.ledgers[ledgerID])
		delete(s.ledgers, ledgerID)
	}
}

// sizeAndCount returns the bytes held (including the payloads of
// invalidated entries, until their segment is reused) and the entries.
func (c *readCache) sizeAndCount() (int64, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var size, count int64
	for i := range c.segments {
		size += int64(len(c.segments[i].buf))
		count += int64(c.segments[i].count)
	}
	return size, count
}

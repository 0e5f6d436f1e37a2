package bookie

import (
	"cmp"
	"maps"
	"slices"
	"sync"
)

// writeCacheEntryOverhead is charged to the write cache per entry, besides
// its payload, for the maps that index it: a flood of tiny entries is
// bounded too.
const writeCacheEntryOverhead = 64

// writeCache holds the entries added since the last checkpoint swapped it
// (upstream's WriteCache). Payloads are copied into large chunks that are
// reused after clear, so that a checkpoint's worth of entries costs the
// garbage collector a few big objects, not millions of small ones.
//
// A directory has two: the one being filled and the one being flushed;
// checkpoints swap them. The storage's cacheMu guards which is which; the
// cache's own mu guards its contents.
type writeCache struct {
	maxSize int64

	mu      sync.RWMutex
	size    int64 // charged bytes: payloads + overhead
	count   int64
	ledgers map[int64]*cachedLedger
	arena   arena
}

// cachedLedger is one ledger's entries in a writeCache.
type cachedLedger struct {
	entries map[int64][]byte // payloads, slices of the arena
	last    int64            // the greatest entry id in entries
}

func newWriteCache(maxSize int64) *writeCache {
	return &writeCache{maxSize: maxSize, ledgers: map[int64]*cachedLedger{}, arena: newArena(maxSize)}
}

// put copies the entry in and reports whether it fit. A rewrite of an
// entry replaces it (its old bytes stay charged until clear).
func (c *writeCache) put(ledgerID, entryID int64, payload []byte) bool {
	return c.insert(ledgerID, entryID, payload, false)
}

// putOwned is put for a payload nothing else holds or changes: a payload
// too large for the arena's chunks is kept as it is, not copied (see
// DirStorage.AddEntryFrom).
func (c *writeCache) putOwned(ledgerID, entryID int64, payload []byte) bool {
	return c.insert(ledgerID, entryID, payload, true)
}

func (c *writeCache) insert(ledgerID, entryID int64, payload []byte, owned bool) bool {
	charge := int64(len(payload)) + writeCacheEntryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size+charge > c.maxSize {
		return false
	}
	l := c.ledgers[ledgerID]
	if l == nil {
		l = &cachedLedger{entries: map[int64][]byte{}, last: entryID}
		c.ledgers[ledgerID] = l
	}
	if _, rewrite := l.entries[entryID]; !rewrite {
		c.count++
	}
	l.entries[entryID] = c.arena.store(payload, owned)
	l.last = max(l.last, entryID)
	c.size += charge
	return true
}

// get returns a copy of an entry's payload.
func (c *writeCache) get(ledgerID, entryID int64) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	l := c.ledgers[ledgerID]
	if l == nil {
		return nil, false
	}
	p, ok := l.entries[entryID]
	if !ok {
		return nil, false
	}
	return slices.Clone(p), true
}

// lastEntry returns the ledger's greatest entry id and a copy of its
// payload.
func (c *writeCache) lastEntry(ledgerID int64) (int64, []byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	l := c.ledgers[ledgerID]
	if l == nil {
		return 0, nil, false
	}
	return l.last, slices.Clone(l.entries[l.last]), true
}

// deleteLedger drops the ledger's entries (their bytes stay charged until
// clear).
func (c *writeCache) deleteLedger(ledgerID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.ledgers[ledgerID]; l != nil {
		c.count -= int64(len(l.entries))
		delete(c.ledgers, ledgerID)
	}
}

// cachedEntry is one entry of sortedEntries. Its payload is a slice of
// the cache's arena, valid until clear.
type cachedEntry struct {
	ledgerID, entryID int64
	payload           []byte
}

// sortedEntries returns the entries in (ledger, entry) order, the order in
// which a checkpoint writes them (upstream's WriteCache.forEach). Entry
// ids sort numerically, negative ones first.
func (c *writeCache) sortedEntries() []cachedEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]cachedEntry, 0, c.count)
	for _, ledgerID := range slices.Sorted(maps.Keys(c.ledgers)) {
		l := c.ledgers[ledgerID]
		start := len(out)
		for entryID, p := range l.entries {
			out = append(out, cachedEntry{ledgerID, entryID, p})
		}
		part := out[start:]
		slices.SortFunc(part, func(a, b cachedEntry) int { return cmp.Compare(a.entryID, b.entryID) })
	}
	return out
}

// ledgerIDs returns the ledgers with entries in the cache.
func (c *writeCache) ledgerIDs() []int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ids := make([]int64, 0, len(c.ledgers))
	for id := range c.ledgers {
		ids = append(ids, id)
	}
	return ids
}

// isEmpty reports whether the cache holds no entry.
func (c *writeCache) isEmpty() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.count == 0 && c.size == 0
}

// sizeAndCount returns the charged bytes and the number of entries.
func (c *writeCache) sizeAndCount() (int64, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.size, c.count
}

// clear empties the cache, keeping for reuse the chunks its last fill
// used.
func (c *writeCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.size, c.count = 0, 0
	clear(c.ledgers)
	c.arena.reset()
}

// release drops every chunk of an empty cache, so that a storage that
// stopped taking writes gives the memory of its last burst back. It
// reports whether there was anything to drop.
func (c *writeCache) release() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count != 0 || c.size != 0 || len(c.arena.chunks) == 0 {
		return false
	}
	c.arena.release()
	return true
}

// arena hands out copies of payloads from large chunks.
type arena struct {
	chunkSize int
	chunks    [][]byte // chunks[:cur+1] are in use
	cur       int
	// large holds the payloads bigger than a chunk, allocated on their
	// own and dropped at reset.
	large int
}

// arenaMaxChunk bounds the chunk size: big enough to make the garbage
// collector's work negligible, small enough not to waste much of a small
// cache.
const arenaMaxChunk = 1 << 20

func newArena(capacity int64) arena {
	size := int(min(max(capacity/8, 4<<10), arenaMaxChunk))
	return arena{chunkSize: size, cur: -1}
}

// store returns a copy of p in the arena. A payload larger than half a
// chunk is allocated on its own instead; if owned, p itself is kept.
func (a *arena) store(p []byte, owned bool) []byte {
	if len(p) > a.chunkSize/2 {
		a.large++
		if owned {
			return p[:len(p):len(p)]
		}
		return slices.Clone(p)
	}
	if a.cur < 0 || len(a.chunks[a.cur])+len(p) > cap(a.chunks[a.cur]) {
		a.cur++
		if a.cur == len(a.chunks) {
			a.chunks = append(a.chunks, make([]byte, 0, a.chunkSize))
		}
		a.chunks[a.cur] = a.chunks[a.cur][:0]
	}
	chunk := a.chunks[a.cur]
	start := len(chunk)
	chunk = append(chunk, p...)
	a.chunks[a.cur] = chunk
	return chunk[start:len(chunk):len(chunk)]
}

// reset makes the chunks free again. It keeps those the last fill used
// (the next fill is likely to need as many) and drops the others: a cache
// does not keep the memory of a burst for ever, only until a fill that
// needs less.
func (a *arena) reset() {
	used := a.cur + 1
	clear(a.chunks[used:])
	a.chunks = a.chunks[:used]
	a.cur = -1
	a.large = 0
}

// release drops every chunk.
func (a *arena) release() {
	a.chunks = nil
	a.cur = -1
	a.large = 0
}

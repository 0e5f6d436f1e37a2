package lsm

import (
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// tableCache opens table readers lazily and keeps them open. With
// maxOpen > 0 it closes the least recently used readers nobody is using
// when more than maxOpen are open; a later access reopens them. Every get
// must be paired with a release.
type tableCache struct {
	fs         vfs.FS
	dir        string
	readerOpts sstable.ReaderOptions
	maxOpen    int

	clock   atomic.Int64 // access counter, for least-recently-used choices
	numOpen atomic.Int64 // handles in the map

	// mu guards the map. Readers take it shared to find a handle and take
	// their reference; eviction takes it exclusively, so a handle with no
	// references cannot gain one while it is being closed.
	mu     sync.RWMutex
	tables map[uint64]*tableHandle
	closed bool // set by close: no table opens afterwards

	// ready holds the successfully opened tables (fileNum → *tableHandle)
	// when maxOpen is 0. Without a limit a table is only closed once it is
	// obsolete — no version, so no read, references it — or by close, so
	// lookups need neither the mutex nor a reference: a sync.Map load
	// writes no shared memory. The mutex and the per-table reference counts
	// were contended atomic updates on every Get (7% of the get phase's
	// CPU at a 1 GiB cache on 2 cores).
	ready sync.Map
}

// tableHandle is an open table: its reader and its range tombstones.
type tableHandle struct {
	fileNum    uint64
	once       sync.Once
	err        error
	reader     *sstable.Reader
	tombstones *rangedel.Set // nil without range deletions
	refs       atomic.Int32
	lastUse    atomic.Int64
}

func newTableCache(fs vfs.FS, dir string, readerOpts sstable.ReaderOptions, maxOpen int) *tableCache {
	return &tableCache{fs: fs, dir: dir, readerOpts: readerOpts, maxOpen: maxOpen, tables: make(map[uint64]*tableHandle)}
}

// get returns the open table fileNum with a reference (with maxOpen > 0),
// opening it on first use. The caller must release it.
func (c *tableCache) get(fileNum uint64) (*tableHandle, error) {
	unlimited := c.maxOpen == 0
	if unlimited {
		if h, ok := c.ready.Load(fileNum); ok {
			return h.(*tableHandle), nil
		}
	}
	c.mu.RLock()
	h := c.tables[fileNum]
	if h != nil && !unlimited {
		h.refs.Add(1)
	}
	c.mu.RUnlock()
	if h == nil {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errors.Wrap(ErrClosed, "lsm: table cache")
		}
		if h = c.tables[fileNum]; h == nil {
			h = &tableHandle{fileNum: fileNum}
			c.tables[fileNum] = h
			c.numOpen.Add(1)
		}
		if !unlimited {
			h.refs.Add(1)
		}
		c.mu.Unlock()
	}
	if c.maxOpen > 0 {
		h.lastUse.Store(c.clock.Add(1))
	}
	opened := false
	h.once.Do(func() { h.err = h.open(c, fileNum); opened = true })
	if h.err != nil {
		// Forget the failure so that a later read retries the open.
		c.mu.Lock()
		if c.tables[fileNum] == h {
			delete(c.tables, fileNum)
			c.numOpen.Add(-1)
		}
		c.mu.Unlock()
		if !unlimited {
			h.refs.Add(-1)
		}
		return nil, h.err
	}
	if opened && unlimited {
		c.mu.Lock()
		if c.tables[fileNum] == h && !c.closed {
			c.ready.Store(fileNum, h)
		}
		c.mu.Unlock()
	}
	if opened && c.maxOpen > 0 {
		c.evictOverLimit()
	}
	return h, nil
}

// release drops a reference taken by get; the last one of a table
// closes tables if too many are open (an iterator over every table opens
// them all at once).
func (c *tableCache) release(h *tableHandle) {
	if c.maxOpen > 0 && h != nil && h.refs.Add(-1) == 0 && c.numOpen.Load() > int64(c.maxOpen) {
		c.evictOverLimit()
	}
}

// evictOverLimit closes the least recently used unreferenced tables while
// more than maxOpen are open.
func (c *tableCache) evictOverLimit() {
	c.mu.Lock()
	var victims []*tableHandle
	for len(c.tables) > c.maxOpen {
		var lru *tableHandle
		for _, h := range c.tables {
			if h.refs.Load() == 0 && h.reader != nil && (lru == nil || h.lastUse.Load() < lru.lastUse.Load()) {
				lru = h
			}
		}
		if lru == nil {
			break // every open table is in use
		}
		delete(c.tables, lru.fileNum)
		c.numOpen.Add(-1)
		victims = append(victims, lru)
	}
	c.mu.Unlock()
	for _, h := range victims {
		_ = h.reader.Close()
	}
}

func (h *tableHandle) open(c *tableCache, fileNum uint64) error {
	path := manifest.FilePath(c.dir, manifest.FileKindTable, fileNum)
	f, err := c.fs.Open(path)
	if err != nil {
		return errors.Wrapf(err, "lsm: opening table %s", path)
	}
	r, err := sstable.Open(f, path, c.readerOpts)
	if err != nil {
		_ = f.Close()
		return err
	}
	h.reader = r
	if dels := r.RangeDeletions(); len(dels) > 0 {
		ts := make([]rangedel.Tombstone, len(dels))
		for i, t := range dels {
			ts[i] = rangedel.Tombstone{Start: t.Start, End: t.End, Seq: t.Seq}
		}
		h.tombstones = rangedel.BuildSet(ts)
	}
	return nil
}

// openTables returns the number of open tables.
func (c *tableCache) openTables() int { return int(c.numOpen.Load()) }

// evict closes table fileNum (it is obsolete) and drops its blocks from
// the block cache.
func (c *tableCache) evict(fileNum uint64) {
	c.mu.Lock()
	h := c.tables[fileNum]
	if h != nil {
		delete(c.tables, fileNum)
		c.ready.Delete(fileNum)
		c.numOpen.Add(-1)
	}
	c.mu.Unlock()
	if h != nil && h.reader != nil {
		_ = h.reader.Close()
	}
}

// close closes every open table.
func (c *tableCache) close() {
	c.mu.Lock()
	tables := c.tables
	c.tables = map[uint64]*tableHandle{}
	c.numOpen.Store(0)
	c.closed = true
	c.ready.Clear()
	c.mu.Unlock()
	for _, h := range tables {
		h.once.Do(func() { h.err = ErrClosed })
		if h.reader != nil {
			_ = h.reader.Close()
		}
	}
}

package lsm

import (
	"sync"

	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/bookie-index/bookie-index/lsm/internal/vfs"
	"github.com/cockroachdb/errors"
)

// tableCache opens table readers lazily, once, and keeps them open while
// the table is live. Readers need no reference per access: a read holds a
// version, and a table's reader is closed only after every version holding
// it is gone (the table is obsolete).
//
// MaxOpenFiles is not enforced yet: like BookKeeper's max_open_files=-1,
// every live table stays open.
type tableCache struct {
	fs    vfs.FS
	dir   string
	cache *cache.Cache

	mu     sync.RWMutex
	tables map[uint64]*tableHandle
	closed bool // set by close: no table opens afterwards
}

// tableHandle is an open table: its reader and its range tombstones.
type tableHandle struct {
	once       sync.Once
	err        error
	reader     *sstable.Reader
	tombstones *rangedel.Set // nil without range deletions
}

func newTableCache(fs vfs.FS, dir string, c *cache.Cache) *tableCache {
	return &tableCache{fs: fs, dir: dir, cache: c, tables: make(map[uint64]*tableHandle)}
}

// get returns the open table fileNum, opening it on first use.
func (c *tableCache) get(fileNum uint64) (*tableHandle, error) {
	c.mu.RLock()
	h := c.tables[fileNum]
	c.mu.RUnlock()
	if h == nil {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errors.Wrap(ErrClosed, "lsm: table cache")
		}
		if h = c.tables[fileNum]; h == nil {
			h = &tableHandle{}
			c.tables[fileNum] = h
		}
		c.mu.Unlock()
	}
	h.once.Do(func() { h.err = h.open(c, fileNum) })
	if h.err != nil {
		// Forget the failure so that a later read retries the open.
		c.mu.Lock()
		if c.tables[fileNum] == h {
			delete(c.tables, fileNum)
		}
		c.mu.Unlock()
		return nil, h.err
	}
	return h, nil
}

func (h *tableHandle) open(c *tableCache, fileNum uint64) error {
	path := manifest.FilePath(c.dir, manifest.FileKindTable, fileNum)
	f, err := c.fs.Open(path)
	if err != nil {
		return errors.Wrapf(err, "lsm: opening table %s", path)
	}
	r, err := sstable.Open(f, path, sstable.ReaderOptions{Cache: c.cache})
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

// evict closes table fileNum (it is obsolete) and drops its blocks from
// the block cache.
func (c *tableCache) evict(fileNum uint64) {
	c.mu.Lock()
	h := c.tables[fileNum]
	delete(c.tables, fileNum)
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
	c.closed = true
	c.mu.Unlock()
	for _, h := range tables {
		h.once.Do(func() { h.err = ErrClosed })
		if h.reader != nil {
			_ = h.reader.Close()
		}
	}
}

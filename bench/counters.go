package main

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// readCounters are the read work Pebble does, as counted globally: block
// cache misses (blocks read from table files), block cache hits, and bytes
// read from table files.
type readCounters struct {
	blockReads, cacheHits, bytesRead int64
}

func (c readCounters) add(o readCounters) readCounters {
	return readCounters{c.blockReads + o.blockReads, c.cacheHits + o.cacheHits, c.bytesRead + o.bytesRead}
}

func (c readCounters) sub(o readCounters) readCounters {
	return readCounters{c.blockReads - o.blockReads, c.cacheHits - o.cacheHits, c.bytesRead - o.bytesRead}
}

// deltaAttributor splits global, ever-growing counters among readers that
// cannot count their own work: each take returns the growth since the
// previous take, whoever made it. A reader that adds its takes to its own
// cumulative counters therefore holds the work done between its Stats call
// and the one before it, by any reader.
//
// The harness samples every reader of a phase before the measured run and
// again after it, with the readers idle at both points. Between the first
// sample of the "after" round and the last, nothing runs, so only the first
// after-sample takes anything: the whole measured run's growth. The
// before-samples' takes cancel out (each reader's take appears in both its
// before and after values). Summed over the readers, the deltas the harness
// computes are exactly the global growth during the measured run, plus
// whatever background work (flushes, compactions, table opens) touched the
// cache and the files meanwhile; the split among readers is arbitrary.
type deltaAttributor struct {
	source func() readCounters
	mu     sync.Mutex
	last   readCounters
}

func newDeltaAttributor(source func() readCounters) *deltaAttributor {
	return &deltaAttributor{source: source, last: source()}
}

// take returns the growth of the counters since the previous take.
func (a *deltaAttributor) take() readCounters {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.source()
	d := now.sub(a.last)
	a.last = now
	return d
}

// countingFS counts the bytes read from table files (*.sst) through the
// files it opens for reading. Pebble reads every table block, whether for
// a lookup, a table open or a compaction, with ReadAt on such a file.
type countingFS struct {
	vfs.FS
	tableBytes atomic.Int64
}

func newCountingFS(fs vfs.FS) *countingFS { return &countingFS{FS: fs} }

// Open implements vfs.FS.
func (fs *countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &countingFile{File: f, bytes: &fs.tableBytes}, nil
}

func (fs *countingFS) tableBytesRead() int64 { return fs.tableBytes.Load() }

// countingFile adds the bytes its reads return to a counter.
type countingFile struct {
	vfs.File
	bytes *atomic.Int64
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.bytes.Add(int64(n))
	return n, err
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.bytes.Add(int64(n))
	return n, err
}

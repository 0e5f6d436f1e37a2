package sstable

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/lsm/internal/crc"
	"github.com/bookie-index/bookie-index/lsm/internal/manual"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// ReaderOptions configure a table reader.
type ReaderOptions struct {
	// Cache is the block cache; nil reads every block from the file
	// (metadata blocks are then pinned by the reader, see readBlock).
	Cache *cache.Cache
	// AlwaysLoadFilters makes every point lookup use its filter block,
	// reading it if it is not in memory; by default a table uses filters
	// only while they pay for themselves (filter_use.go).
	AlwaysLoadFilters bool
}

// Tombstone is a range deletion: user keys in [Start, End) with sequence
// numbers below Seq are deleted.
type Tombstone struct {
	Start, End []byte
	Seq        base.SeqNum
}

// Reader reads one table. It is safe for concurrent use. The top-level
// index and top-level filter index (or, for the full layout, a one-entry
// stand-in pointing at the single index and filter) are pinned for the
// reader's life and charged to the block cache.
type Reader struct {
	f       vfs.File
	name    string
	size    uint64
	cache   *cache.Cache
	cacheID uint64
	footer  footer
	props   Properties
	// restartStride is the data blocks' restart interval from the
	// properties (0 if absent or implausible), a hint for in-block seeks
	// (block.Iter.SetRestartStride).
	restartStride int

	// topIndex maps each index partition's last key to its handle;
	// topFilter maps the same keys to the filter partitions (nil without
	// filters). Both are block-format bytes held for the reader's life.
	topIndex  []byte
	topFilter []byte
	rangeDels []Tombstone

	// partitions holds every index and filter partition, by offset, when
	// the table pinned them at open (pinned_partitions.go); nil otherwise.
	// Immutable after Open, so read without a lock.
	partitions     map[uint64][]byte
	partitionBytes int64
	// filterSearch is the decoded top-level filter index of a partitioned
	// table opened with a cache (top_search.go): it finds a key's filter
	// partition, by ordinal and handle. filterParts are the partitions in
	// that order when the table pinned them; nil otherwise.
	filterParts  [][]byte
	filterSearch *topSearch
	// filterSlots, when filterSearch is set and filterParts is not, hold
	// the filter partitions pinned on first read, by ordinal, while they
	// fit in the pinning budget (pinFilterPartition).
	filterSlots []atomic.Pointer[[]byte]
	// dataSearch holds every data block's index entry, when the index
	// partitions are pinned in order.
	dataSearch *topSearch
	// topPinned is what the top-level blocks charged to the cache.
	topPinned int64

	// pinned holds metadata blocks the cache refused because they are
	// larger than a cache shard: read, verified and parsed once, then kept
	// here for the table's life (charged to the cache as pinned usage)
	// instead of being re-read by every lookup.
	pinnedMu    sync.RWMutex
	pinned      map[uint64][]byte
	hasPinned   atomic.Bool
	pinnedBytes atomic.Int64

	// filterUse decides whether lookups use filters, unless
	// alwaysLoadFilters.
	filterUse         filterUse
	alwaysLoadFilters bool
	// slotsPinned is set while some filterSlots entry is pinned.
	slotsPinned atomic.Bool

	closed atomic.Bool
}

// Open reads a table's footer, properties, top-level blocks and range
// deletions. On error, f is not closed; the caller owns it.
func Open(f vfs.File, name string, opts ReaderOptions) (*Reader, error) {
	size, err := f.Size()
	if err != nil {
		return nil, errors.Wrapf(err, "sstable: size of %s", name)
	}
	r := &Reader{f: f, name: name, size: uint64(size), cache: opts.Cache, alwaysLoadFilters: opts.AlwaysLoadFilters}
	if r.cache != nil {
		r.cacheID = r.cache.NewID()
	}
	if err := r.open(); err != nil {
		r.releasePinned()
		return nil, &OpenError{File: name, Err: err}
	}
	return r, nil
}

func (r *Reader) open() error {
	if r.size < footerSize {
		return base.CorruptionErrorf("sstable: file of %d bytes is too short to be a table", r.size)
	}
	buf := make([]byte, footerSize)
	if _, err := r.f.ReadAt(buf, int64(r.size-footerSize)); err != nil {
		return errors.Wrap(err, "reading footer")
	}
	ft, err := decodeFooter(buf, r.size)
	if err != nil {
		return err
	}
	r.footer = ft
	propsRaw, err := r.readRaw(ft.properties, nil)
	if err != nil {
		return errors.Wrap(err, "properties block")
	}
	if r.props, err = decodeProperties(propsRaw); err != nil {
		return err
	}
	if ri := r.props.RestartInterval; ri > 0 && ri <= 1<<16 {
		r.restartStride = int(ri)
	}
	if r.rangeDels, err = r.loadRangeDeletions(); err != nil {
		return errors.Wrap(err, "range deletion block")
	}
	partitioned := ft.flags&flagPartitionedIndex != 0
	if partitioned {
		if r.topIndex, err = r.readRaw(ft.index, nil); err != nil {
			return errors.Wrap(err, "top-level index")
		}
	} else {
		r.topIndex = r.standIn(ft.index, r.props.Largest.Trailer)
	}
	if ft.filter.Length > 0 {
		if ft.flags&flagPartitionedFilter != 0 {
			if r.topFilter, err = r.readRaw(ft.filter, nil); err != nil {
				return errors.Wrap(err, "top-level filter index")
			}
		} else {
			r.topFilter = r.standIn(ft.filter, 0)
		}
	}
	for _, b := range [][]byte{r.topIndex, r.topFilter} {
		if b == nil {
			continue
		}
		if err := block.Validate(b); err != nil {
			return errors.Wrap(err, "top-level block")
		}
	}
	if r.cache != nil {
		r.topPinned = int64(len(r.topIndex) + len(r.topFilter))
		r.cache.AddPinned(r.topPinned)
	}
	return r.pinPartitions()
}

// standIn builds the one-entry top-level block of a full-layout table: its
// largest user key (with the given trailer) pointing at the single index or
// filter block, so that reads of both layouts take the same two-level path.
func (r *Reader) standIn(h BlockHandle, trailer base.Trailer) []byte {
	b := block.NewBuilder(1, false)
	if r.props.Entries > 0 {
		b.Add(r.props.Largest.UserKey, trailer, h.AppendTo(nil))
	}
	return append([]byte(nil), b.Finish()...)
}

func (r *Reader) loadRangeDeletions() ([]Tombstone, error) {
	raw, err := r.readRaw(r.footer.rangeDel, nil)
	if err != nil {
		return nil, err
	}
	var it block.Iter
	if err := it.Init(raw); err != nil {
		return nil, err
	}
	var ts []Tombstone
	for ok := it.First(); ok; ok = it.Next() {
		if it.Trailer().Kind() != base.KindRangeDelete {
			return nil, base.CorruptionErrorf("sstable: range deletion block holds a %s entry", it.Trailer().Kind())
		}
		ts = append(ts, Tombstone{
			Start: append([]byte(nil), it.UserKey()...),
			End:   append([]byte(nil), it.Value()...),
			Seq:   it.Trailer().SeqNum(),
		})
	}
	return ts, it.Error()
}

// readRaw reads, verifies and decompresses one block from the file.
func (r *Reader) readRaw(h BlockHandle, stats *Stats) ([]byte, error) {
	return r.readStored(h, stats, false)
}

// readStored reads, checks and decompresses the block at h. With pooled,
// the stored bytes go to a pooled buffer that is recycled once the block is
// decompressed (an uncompressed block is copied out of it): for data blocks
// of compressed tables, whose stored bytes are dead after decompression.
func (r *Reader) readStored(h BlockHandle, stats *Stats, pooled bool) ([]byte, error) {
	if err := r.checkHandle(h); err != nil {
		return nil, err
	}
	n := int(h.Length + blockTrailerSize)
	var buf []byte
	if pooled {
		pb := getReadBuffer(n)
		defer putReadBuffer(pb)
		buf = *pb
	} else {
		buf = make([]byte, n)
	}
	raw, inBuf, err := r.readDecoded(h, buf, stats)
	if err != nil {
		return nil, err
	}
	if pooled && inBuf {
		raw = append([]byte(nil), raw...)
	}
	return raw, nil
}

// checkHandle checks that a block handle lies within the file.
func (r *Reader) checkHandle(h BlockHandle) error {
	if h.Offset > r.size || h.Length+blockTrailerSize > r.size-h.Offset || h.Length > maxBlockSize {
		return base.CorruptionErrorf("sstable: block handle (offset %d, length %d) lies outside the %d-byte file", h.Offset, h.Length, r.size)
	}
	return nil
}

// readDecoded reads the block at h with its trailer into buf (of length
// h.Length+blockTrailerSize), verifies its checksum and decompresses it.
// inBuf reports that the block was stored uncompressed and the result is
// buf itself.
func (r *Reader) readDecoded(h BlockHandle, buf []byte, stats *Stats) (data []byte, inBuf bool, err error) {
	typ, err := r.readChecked(h, buf, stats)
	if err != nil {
		return nil, false, err
	}
	if data, err = decompressBlock(typ, buf[:h.Length]); err != nil {
		return nil, false, errors.Wrapf(err, "block at offset %d", h.Offset)
	}
	return data, typ == blockTypeNone, nil
}

// readChecked reads the block at h with its trailer into buf (of length
// h.Length+blockTrailerSize), verifies its checksum and returns its
// compression type.
func (r *Reader) readChecked(h BlockHandle, buf []byte, stats *Stats) (byte, error) {
	if _, err := r.f.ReadAt(buf, int64(h.Offset)); err != nil {
		return 0, errors.Wrapf(err, "reading block at offset %d", h.Offset)
	}
	if stats != nil {
		stats.BytesRead += int64(len(buf))
	}
	stored := buf[:h.Length]
	typ := buf[h.Length]
	want := binary.LittleEndian.Uint32(buf[h.Length+1:])
	if got := crc.Mask(crc.Extend(crc.Extend(0, stored), buf[h.Length:h.Length+1])); got != want {
		return 0, base.CorruptionErrorf("sstable: block at offset %d (length %d): checksum mismatch (stored %#x, computed %#x)", h.Offset, h.Length, want, got)
	}
	return typ, nil
}

// blockRef is a block in use. Its data lives in one of three places: a
// block cache entry, held by h until release; a buffer of the cache's
// memory read for this one use (owned, freed by release); or memory the
// reader pins for its life or the Go heap (neither set).
type blockRef struct {
	h    cache.Handle
	data []byte
	// fromFile: this call (or the cache load it waited for) read the block
	// from the file.
	fromFile bool
	// owned, when set, is the buffer data lives in (readOnce), given back
	// to c by release.
	owned manual.Buf
	c     *cache.Cache
}

func (b *blockRef) release() {
	b.h.Release()
	if b.c != nil {
		b.c.Free(b.owned)
	}
	*b = blockRef{}
}

// readMode says how readBlock uses the block cache.
type readMode uint8

const (
	// readHold: a hit takes a handle, held until the blockRef is released;
	// a miss is read into the cache.
	readHold readMode = iota
	// readNoFill: a miss is not inserted (compactions, which must not push
	// the readers' working set out of the cache).
	readNoFill
	// readOnce: as readHold, but a miss the cache does not admit
	// (cache.Admit) is read into a buffer of the cache's memory for this
	// use only, valid until the blockRef is released, and not cached: a
	// point lookup's data block.
	readOnce
)

// readBlock returns a verified, decompressed block of the given kind,
// through the block cache.
func (r *Reader) readBlock(h BlockHandle, kind cache.Kind, stats *Stats, mode readMode) (blockRef, error) {
	if b, ok := r.cachedBlock(h, kind, stats); ok {
		return b, nil
	}
	return r.loadBlock(h, kind, stats, mode)
}

// cachedBlock returns the block if it is in memory: pinned by the table or
// in the block cache.
func (r *Reader) cachedBlock(h BlockHandle, kind cache.Kind, stats *Stats) (blockRef, bool) {
	if kind != cache.KindData && r.partitions != nil {
		if b, ok := r.partitions[h.Offset]; ok {
			if stats != nil {
				stats.CacheHits++
			}
			return blockRef{data: b}, true
		}
	}
	if kind != cache.KindData && r.hasPinned.Load() {
		r.pinnedMu.RLock()
		b, ok := r.pinned[h.Offset]
		r.pinnedMu.RUnlock()
		if ok {
			if stats != nil {
				stats.CacheHits++
			}
			return blockRef{data: b}, true
		}
	}
	if r.cache != nil {
		if ch, ok := r.cache.Lookup(r.cacheID, h.Offset, kind); ok {
			if stats != nil {
				stats.CacheHits++
			}
			return blockRef{h: ch, data: ch.Value()}, true
		}
	}
	return blockRef{}, false
}

// loadBlock reads a block that cachedBlock did not find, inserting it into
// the cache unless mode is readNoFill.
func (r *Reader) loadBlock(h BlockHandle, kind cache.Kind, stats *Stats, mode readMode) (blockRef, error) {
	if mode == readOnce && r.cache != nil && !r.cache.Admit(r.cacheID, h.Offset) {
		return r.readTransient(h, kind, stats)
	}
	if r.cache == nil || mode == readNoFill {
		data, err := r.readVerified(h, kind, stats)
		if err != nil {
			return blockRef{}, err
		}
		if r.cache == nil && kind != cache.KindData {
			r.pin(h.Offset, data)
		}
		return blockRef{data: data, fromFile: true}, nil
	}
	pri := cache.PriorityHigh
	if kind == cache.KindData {
		pri = cache.PriorityLow
	}
	ch, hit, err := r.cache.GetOrLoad(r.cacheID, h.Offset, kind, pri, func() (manual.Buf, error) {
		return r.readToCache(h, kind, stats)
	})
	if err != nil {
		return blockRef{}, err
	}
	if kind != cache.KindData && !ch.Cached() && int64(len(ch.Value())) > r.cache.MaxEntrySize() {
		// Larger than a cache shard: pin it instead of re-reading it on
		// every lookup (the full-filter cliff of RocksDB's LRU cache). The
		// handle's bytes go back to the cache with its release; the pinned
		// copy lives on the heap for the table's life.
		r.pin(h.Offset, bytes.Clone(ch.Value()))
	}
	return blockRef{h: ch, data: ch.Value(), fromFile: !hit}, nil
}

// readVerified reads a block onto the Go heap, checks its structure and
// counts the read: for blocks read past the cache (compactions, a reader
// without a cache) and those the reader pins for its life.
func (r *Reader) readVerified(h BlockHandle, kind cache.Kind, stats *Stats) ([]byte, error) {
	data, err := r.readStored(h, stats, kind == cache.KindData && r.dataMostlyCompressed())
	if err != nil {
		return nil, r.blockError(h, kind, err)
	}
	return data, r.checkBlock(h, kind, data, stats)
}

// readToCache reads a block into the cache's memory, checks its structure
// and counts the read. The stored bytes go straight into a buffer of their
// own, which is the block if it was stored uncompressed; a compressed
// block is decompressed into a second buffer and the first given back. No
// heap memory is involved, so a miss leaves nothing for the collector.
func (r *Reader) readToCache(h BlockHandle, kind cache.Kind, stats *Stats) (manual.Buf, error) {
	if err := r.checkHandle(h); err != nil {
		return manual.Buf{}, r.blockError(h, kind, err)
	}
	buf, err := r.cache.Alloc(int(h.Length + blockTrailerSize))
	if err != nil {
		return manual.Buf{}, r.blockError(h, kind, err)
	}
	typ, err := r.readChecked(h, buf.Bytes(), stats)
	if err == nil {
		if typ == blockTypeNone {
			buf = buf.Truncate(int(h.Length))
		} else {
			var raw manual.Buf
			raw, err = r.decompressToCache(typ, buf.Bytes()[:h.Length])
			r.cache.Free(buf)
			buf = raw
		}
	}
	if err != nil {
		r.cache.Free(buf)
		return manual.Buf{}, r.blockError(h, kind, err)
	}
	if err := r.checkBlock(h, kind, buf.Bytes(), stats); err != nil {
		r.cache.Free(buf)
		return manual.Buf{}, err
	}
	return buf, nil
}

// decompressToCache decompresses a stored block body into a buffer of the
// cache's memory.
func (r *Reader) decompressToCache(typ byte, stored []byte) (manual.Buf, error) {
	n, err := decodedLength(typ, stored)
	if err != nil {
		return manual.Buf{}, err
	}
	raw, err := r.cache.Alloc(n)
	if err != nil {
		return manual.Buf{}, err
	}
	if err := decompressInto(typ, stored, raw.Bytes()); err != nil {
		r.cache.Free(raw)
		return manual.Buf{}, err
	}
	return raw, nil
}

// readTransient reads a block for one use, not to be cached, into the
// cache's memory; the blockRef's release gives it back.
func (r *Reader) readTransient(h BlockHandle, kind cache.Kind, stats *Stats) (blockRef, error) {
	buf, err := r.readToCache(h, kind, stats)
	if err != nil {
		return blockRef{}, err
	}
	return blockRef{data: buf.Bytes(), fromFile: true, owned: buf, c: r.cache}, nil
}

// blockError names the table and the block a read failed at.
func (r *Reader) blockError(h BlockHandle, kind cache.Kind, err error) error {
	return &BlockReadError{File: r.name, Kind: kind.String(), Offset: h.Offset, Err: err}
}

// checkBlock checks the structure of a block just read and counts the read.
func (r *Reader) checkBlock(h BlockHandle, kind cache.Kind, data []byte, stats *Stats) error {
	var err error
	if kind == cache.KindFilter {
		err = validateFilter(data)
	} else {
		var it block.Iter
		err = it.Init(data)
	}
	if err != nil {
		return r.blockError(h, kind, err)
	}
	if stats != nil {
		switch kind {
		case cache.KindFilter:
			stats.FilterReads++
		case cache.KindIndex:
			stats.IndexReads++
		default:
			stats.DataReads++
		}
	}
	return nil
}

// dataMostlyCompressed reports whether the table's data blocks were mostly
// stored compressed (together at least 1/8 smaller than raw; the writer
// skips compression of a block that gains less). Only then is reading them
// into recycled buffers worth it: an uncompressed block read that way has to
// be copied out again (runtime.memmove took 18% of the get phase's CPU at a
// 64 MiB cache when the bench's data blocks did not compress).
func (r *Reader) dataMostlyCompressed() bool {
	p := &r.props
	return p.Compression != CompressionNone && p.DataStoredBytes < p.DataBytes-p.DataBytes/8
}

func (r *Reader) pin(offset uint64, data []byte) {
	r.pinnedMu.Lock()
	defer r.pinnedMu.Unlock()
	if _, ok := r.pinned[offset]; ok || r.closed.Load() {
		return
	}
	if r.pinned == nil {
		r.pinned = make(map[uint64][]byte)
	}
	r.pinned[offset] = data
	r.pinnedBytes.Add(int64(len(data)))
	if r.cache != nil {
		r.cache.AddPinned(int64(len(data)))
	}
	r.hasPinned.Store(true)
}

func (r *Reader) releasePinned() {
	r.pinnedMu.Lock()
	defer r.pinnedMu.Unlock()
	if r.cache != nil {
		// Only what was added: a failed Open may not have charged its
		// top-level blocks or partitions yet.
		r.cache.AddPinned(-r.pinnedBytes.Load() - r.topPinned - r.partitionBytes)
	}
	r.pinned = nil
	r.pinnedBytes.Store(0)
	r.hasPinned.Store(false)
}

// Properties returns the table's properties.
func (r *Reader) Properties() *Properties { return &r.props }

// RangeDeletions returns the table's range tombstones, sorted by start.
func (r *Reader) RangeDeletions() []Tombstone { return r.rangeDels }

// PinnedBytes returns the bytes this reader holds outside the cache's
// shards: top-level blocks, oversized metadata blocks, and all partitions
// with their decoded searches when the table pinned them.
func (r *Reader) PinnedBytes() int64 {
	return r.pinnedBytes.Load() + int64(len(r.topIndex)+len(r.topFilter)) + r.partitionBytes
}

// FileSize returns the table's size in bytes.
func (r *Reader) FileSize() uint64 { return r.size }

// Close releases pinned memory, drops the table's blocks from the block
// cache (a reopened table gets a new cache id, so they could never be hit
// again) and closes the file. The caller must not use the reader or its
// iterators afterwards.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return errors.Wrapf(base.ErrClosed, "sstable: %s", r.name)
	}
	r.releasePinned()
	if r.cache != nil {
		r.cache.EvictFile(r.cacheID)
	}
	return r.f.Close()
}

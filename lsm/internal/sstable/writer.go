package sstable

import (
	"bytes"
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/bookie-index/bookie-index/lsm/internal/bloom"
	"github.com/bookie-index/bookie-index/lsm/internal/crc"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/pierrec/lz4/v4"
)

// Writer writes one table. Calls must follow: (Add | AddRangeDeletion)*
// Close, or Abort to give up; point keys in strictly increasing internal
// order, range deletions in increasing (start, trailer) order.
//
// Data blocks are written as they fill. Index and filter partitions are
// kept in memory (a few percent of the data) and written after the data,
// followed by the top-level blocks, range deletions, properties and footer.
//
// Index partitions are cut when they reach MetadataBlockSize; filter
// partitions independently, when they hold MetadataBlockSize·8/bitsPerKey
// keys, and only between two user keys. Coupling them would make one of
// the two the wrong size: a 4 KiB index partition covers ~150 data blocks
// of 64 KiB, whose keys need a filter of ~800 KiB.
type Writer struct {
	f    vfs.File
	name string
	opts WriterOptions
	err  error // sticky

	offset uint64
	props  Properties

	data       *block.Builder
	index      *block.Builder // current index partition (or the whole index)
	lastKey    []byte         // last point user key added
	lastTr     base.Trailer
	filterKeys []uint64 // hashes for the current filter partition (or the whole filter)
	filters    []pendingFilter

	partitions []pendingPartition
	rangeDels  *block.Builder

	// The index entry of the last finished data block waits for the next
	// block's first key, so that its key can be a short separator.
	pendingIndex  bool
	pendingHandle BlockHandle
	// filterHasLast says the current filter partition holds lastKey's hash
	// (consecutive versions of a key are hashed once per partition).
	filterHasLast bool
	// lastIndexKey is the key of the last index entry added.
	lastIndexKey     []byte
	lastIndexTrailer base.Trailer
	separator        []byte

	keysPerFilter int // keysPerFilterPartition
	// incompressible counts the data blocks stored raw since the last one
	// compression shrank (see dataCompression).
	incompressible int

	lz4     lz4.Compressor
	scratch []byte
}

// pendingPartition is a finished index partition.
type pendingPartition struct {
	lastKey     []byte
	lastTrailer base.Trailer
	index       []byte
}

// pendingFilter is a finished filter partition. Its key is a user key at
// or above every key hashed into it and below every key of the next
// partition; the top-level filter index stores it with trailer 0, which
// sorts after every version of that user key.
type pendingFilter struct {
	key    []byte
	filter []byte
}

// keysPerFilterPartition is how many keys fill a filter partition of
// about MetadataBlockSize bytes.
func keysPerFilterPartition(o WriterOptions) int {
	if o.BloomBitsPerKey <= 0 {
		return 0
	}
	return max(1, o.MetadataBlockSize*8/o.BloomBitsPerKey)
}

// NewWriter returns a writer of a table into f. name is used in errors.
func NewWriter(f vfs.File, name string, opts WriterOptions) (*Writer, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, errors.Wrapf(err, "sstable: writer options for %s", name)
	}
	w := &Writer{
		f:         f,
		name:      name,
		opts:      opts,
		data:      block.NewBuilder(opts.RestartInterval, !opts.DisableCommonPrefix),
		index:     block.NewBuilder(opts.IndexRestartInterval, !opts.DisableCommonPrefix),
		rangeDels: block.NewBuilder(1, false),

		keysPerFilter: keysPerFilterPartition(opts),
	}
	w.data.ShareValuePrefixes = !opts.DisableValuePrefixes
	w.data.CompactEntries = !opts.DisableCompactEntries
	w.props = Properties{
		Layout:               opts.Layout,
		Compression:          opts.Compression,
		CommonPrefix:         !opts.DisableCommonPrefix,
		BlockSize:            uint64(opts.BlockSize),
		RestartInterval:      uint64(opts.RestartInterval),
		IndexRestartInterval: uint64(opts.IndexRestartInterval),
		MetadataBlockSize:    uint64(opts.MetadataBlockSize),
		BloomBitsPerKey:      int64(opts.BloomBitsPerKey),
		FormatVersion:        FormatVersion,
	}
	return w, nil
}

func (w *Writer) filtersEnabled() bool { return w.opts.BloomBitsPerKey > 0 }

// EstimatedSize is the table's size if closed now (data written so far plus
// what is buffered), for cutting output files at a target size.
func (w *Writer) EstimatedSize() uint64 {
	return w.offset + uint64(w.data.EstimatedSize())
}

// Add appends a point entry. Keys must strictly increase in internal order.
func (w *Writer) Add(key base.InternalKey, value []byte) error {
	if w.err != nil {
		return w.err
	}
	// The prefix the key shares with the last one answers, at once, the
	// order check, whether it is another version of the same user key,
	// and whether it shortens the data block's common prefix.
	shared := block.SharedPrefixLen(w.lastKey, key.UserKey)
	sameUserKey := shared == len(key.UserKey) && shared == len(w.lastKey)
	if w.props.Entries > 0 && !increases(w.lastKey, w.lastTr, key.UserKey, key.Trailer, shared) {
		w.err = errors.AssertionFailedf("sstable: %s: key %q#%d added after %q#%d", w.name, key.UserKey, key.Trailer, w.lastKey, w.lastTr)
		return w.err
	}
	if w.alignsBlockToPrefix(shared) {
		if err := w.finishDataBlock(); err != nil {
			return err
		}
	}
	if w.pendingIndex {
		w.separator = appendSeparator(w.separator[:0], w.lastKey, key.UserKey)
		tr := w.lastTr
		if !bytes.Equal(w.separator, w.lastKey) {
			tr = 0 // a shortened separator is above lastKey whatever its trailer
		}
		w.addIndexEntry(w.separator, tr)
	}
	if w.filtersEnabled() && !(w.filterHasLast && sameUserKey) {
		if w.opts.Layout == LayoutPartitioned && len(w.filterKeys) >= w.keysPerFilter {
			w.cutFilter(appendSeparator(nil, w.lastKey, key.UserKey))
		}
		w.filterKeys = append(w.filterKeys, bloom.Hash(key.UserKey))
		w.props.FilterEntries++
		w.filterHasLast = true
	}
	if w.props.Entries == 0 {
		w.props.Smallest = key.Clone()
		w.props.SmallestSeqNum = uint64(key.SeqNum())
	}
	w.lastKey = append(w.lastKey[:0], key.UserKey...)
	w.lastTr = key.Trailer
	w.noteSeqNum(key.SeqNum())
	w.props.Entries++
	w.props.RawKeyBytes += uint64(len(key.UserKey))
	w.props.RawValueBytes += uint64(len(value))
	// The data block's last key is w.lastKey's previous value whenever
	// the block holds an entry.
	w.data.AddShared(key.UserKey, shared, key.Trailer, value)
	if w.data.EncodedSize() >= w.opts.BlockSize {
		return w.finishDataBlock()
	}
	return nil
}

// increases reports whether (key, tr) sorts strictly after (last, lastTr)
// in internal order, given the length of the user keys' shared prefix.
func increases(last []byte, lastTr base.Trailer, key []byte, tr base.Trailer, shared int) bool {
	switch {
	case shared < len(last) && shared < len(key):
		return key[shared] > last[shared]
	case len(key) != len(last):
		return len(key) > len(last) // one is a prefix of the other
	default:
		return tr < lastTr // the same user key: newer versions first
	}
}

func (w *Writer) noteSeqNum(s base.SeqNum) {
	if uint64(s) < w.props.SmallestSeqNum || w.props.Entries+w.props.RangeDeletions == 0 {
		w.props.SmallestSeqNum = uint64(s)
	}
	if uint64(s) > w.props.LargestSeqNum {
		w.props.LargestSeqNum = uint64(s)
	}
}

// AddRangeDeletion records that user keys in [start, end) older than seq are
// deleted. Tombstones must come in increasing (start, seq descending) order;
// the engine fragments them so that they do not overlap.
func (w *Writer) AddRangeDeletion(start, end []byte, seq base.SeqNum) error {
	if w.err != nil {
		return w.err
	}
	if string(start) >= string(end) {
		w.err = errors.AssertionFailedf("sstable: %s: empty range deletion [%q, %q)", w.name, start, end)
		return w.err
	}
	w.noteSeqNum(seq)
	w.props.RangeDeletions++
	w.rangeDels.Add(start, base.MakeTrailer(seq, base.KindRangeDelete), end)
	return nil
}

// prefixCutFraction: a data block at least 1/prefixCutFraction full ends
// before a key that would shorten its common prefix.
const prefixCutFraction = 2

// alignsBlockToPrefix reports whether the current data block should end
// before a key that shares shared bytes with the last key added. With the common prefix on, a block already half full
// ends where its keys' common prefix would shrink — for entry-location keys,
// at a ledger boundary — so that blocks hold one ledger and store its
// 14-byte prefix once, and the index separator between them is short
// (measured in docs/design.md). A smaller fraction cuts more blocks: with
// compact entries a ledger of 5,000 entries is a third of a 64 KiB block,
// and cutting every ledger made 2.5 times as many index entries as
// without the prefix.
func (w *Writer) alignsBlockToPrefix(shared int) bool {
	if w.opts.DisableCommonPrefix || w.data.Empty() || w.data.EncodedSize() < w.opts.BlockSize/prefixCutFraction {
		return false
	}
	// The keys are sorted: the key would shorten the block's prefix iff it
	// shares less of it with the last key.
	return shared < w.data.PrefixLen()
}

// Data blocks that do not compress: after incompressibleRun data blocks
// in a row that compression did not shrink by an eighth (so they were
// stored raw), only every probeInterval-th block is compressed, until one
// shrinks again. Entry-location blocks at the bottom of the tree (compact
// entries: a few bytes of fresh key and value each) never shrink, and
// trying cost a fifth of the writer's CPU (BenchmarkWriterAdd/bottom);
// blocks of a flush (a sequence number each) shrink to 63%, and are
// always compressed.
const (
	incompressibleRun = 4
	probeInterval     = 16
)

// dataCompression is the compression to try on the next data block.
func (w *Writer) dataCompression() Compression {
	if w.opts.Compression == CompressionNone || w.incompressible < incompressibleRun {
		return w.opts.Compression
	}
	if w.incompressible%probeInterval == 0 {
		return w.opts.Compression // a probe
	}
	return CompressionNone
}

// finishDataBlock writes the current data block; its index entry waits
// for the next key (or Close).
func (w *Writer) finishDataBlock() error {
	raw := w.data.Finish()
	w.props.DataBlocks++
	w.props.DataBytes += uint64(len(raw))
	h, err := w.writeBlock(raw, w.dataCompression())
	if err != nil {
		return err
	}
	if h.Length < uint64(len(raw)) {
		w.incompressible = 0
	} else {
		w.incompressible++
	}
	w.props.DataStoredBytes += h.Length + blockTrailerSize
	w.data.Reset()
	w.pendingIndex, w.pendingHandle = true, h
	return nil
}

// addIndexEntry indexes the last finished data block under key and, when
// the partition is full, closes it.
func (w *Writer) addIndexEntry(key []byte, trailer base.Trailer) {
	w.scratch = w.pendingHandle.AppendTo(w.scratch[:0])
	w.index.Add(key, trailer, w.scratch)
	w.pendingIndex = false
	w.lastIndexKey = append(w.lastIndexKey[:0], key...)
	w.lastIndexTrailer = trailer
	if w.opts.Layout == LayoutPartitioned && w.index.EstimatedSize() >= w.opts.MetadataBlockSize {
		w.cutPartition()
	}
}

// cutFilter closes the current filter partition under key.
func (w *Writer) cutFilter(key []byte) {
	w.filters = append(w.filters, pendingFilter{key: key, filter: bloom.Build(nil, w.filterKeys, w.opts.BloomBitsPerKey)})
	w.filterKeys = w.filterKeys[:0]
	w.filterHasLast = false
}

// cutPartition closes the current index partition.
func (w *Writer) cutPartition() {
	if w.index.Empty() {
		return
	}
	p := pendingPartition{
		lastKey:     append([]byte(nil), w.lastIndexKey...),
		lastTrailer: w.lastIndexTrailer,
		index:       append([]byte(nil), w.index.Finish()...),
	}
	w.partitions = append(w.partitions, p)
	w.index.Reset()
}

// writeBlock writes a block with its trailer and returns its handle.
func (w *Writer) writeBlock(raw []byte, c Compression) (BlockHandle, error) {
	stored, blockType := compressBlock(&w.lz4, c, raw, w.scratch)
	if blockType == blockTypeLZ4 {
		w.scratch = stored[:0]
	}
	var trailer [blockTrailerSize]byte
	trailer[0] = blockType
	sum := crc.Extend(crc.Extend(0, stored), trailer[:1])
	binary.LittleEndian.PutUint32(trailer[1:], crc.Mask(sum))
	h := BlockHandle{Offset: w.offset, Length: uint64(len(stored))}
	if err := w.write(stored); err != nil {
		return h, err
	}
	return h, w.write(trailer[:])
}

func (w *Writer) write(p []byte) error {
	if _, err := w.f.Write(p); err != nil {
		w.err = errors.Wrapf(err, "sstable: writing %s", w.name)
		return w.err
	}
	w.offset += uint64(len(p))
	return nil
}

// Close finishes the table, syncs and closes the file, and returns the
// table's properties.
func (w *Writer) Close() (*Properties, error) {
	if w.err != nil {
		_ = w.f.Close()
		return nil, w.err
	}
	if err := w.finish(); err != nil {
		_ = w.f.Close()
		return nil, err
	}
	if err := w.f.Sync(); err != nil {
		_ = w.f.Close()
		return nil, errors.Wrapf(err, "sstable: syncing %s", w.name)
	}
	if err := w.f.Close(); err != nil {
		return nil, errors.Wrapf(err, "sstable: closing %s", w.name)
	}
	w.err = errors.Newf("sstable: %s is closed", w.name)
	props := w.props
	return &props, nil
}

// Abort closes the file without finishing the table; the caller removes it.
func (w *Writer) Abort() {
	if w.err == nil {
		w.err = errors.Newf("sstable: %s was aborted", w.name)
	}
	_ = w.f.Close()
}

func (w *Writer) finish() error {
	if !w.data.Empty() {
		if err := w.finishDataBlock(); err != nil {
			return err
		}
	}
	if w.pendingIndex {
		// The table's last block is indexed under its full last key: a
		// tight upper bound of the table.
		w.addIndexEntry(w.lastKey, w.lastTr)
	}
	w.cutPartition()
	if w.props.Entries > 0 {
		w.props.Largest = base.InternalKey{UserKey: append([]byte(nil), w.lastKey...), Trailer: w.lastTr}
	}
	w.props.IndexPartitions = uint64(len(w.partitions))
	var ft footer
	commonPrefix := !w.opts.DisableCommonPrefix

	// Filter partitions (or the full filter), then the top-level filter index.
	if w.filtersEnabled() {
		if len(w.filterKeys) > 0 || len(w.filters) == 0 {
			// The last partition, or an empty table's (matching-nothing) filter.
			w.cutFilter(append([]byte(nil), w.lastKey...))
		}
		topFilter := block.NewBuilder(w.opts.IndexRestartInterval, commonPrefix)
		for _, p := range w.filters {
			h, err := w.writeBlock(p.filter, CompressionNone)
			if err != nil {
				return err
			}
			w.props.FilterBytes += uint64(len(p.filter))
			w.props.FilterPartitions++
			w.props.MaxFilterBlockSize = max(w.props.MaxFilterBlockSize, uint64(len(p.filter)))
			if w.opts.Layout == LayoutFull {
				ft.filter = h
			} else {
				topFilter.Add(p.key, 0, h.AppendTo(nil))
			}
		}
		if w.opts.Layout == LayoutPartitioned {
			raw := topFilter.Finish()
			w.props.TopFilterBytes = uint64(len(raw))
			h, err := w.writeBlock(raw, CompressionNone)
			if err != nil {
				return err
			}
			ft.filter = h
			ft.flags |= flagPartitionedFilter
		}
	}

	// Index partitions, then the top-level index; the full layout writes
	// its single index block (empty for an empty table).
	if w.opts.Layout == LayoutFull {
		raw := w.index.Finish()
		if len(w.partitions) > 0 {
			raw = w.partitions[0].index
		}
		w.props.IndexBytes = uint64(len(raw))
		w.props.MaxIndexBlockSize = uint64(len(raw))
		w.props.IndexPartitions = 1
		h, err := w.writeBlock(raw, w.opts.Compression)
		if err != nil {
			return err
		}
		ft.index = h
	} else {
		top := block.NewBuilder(w.opts.IndexRestartInterval, commonPrefix)
		for _, p := range w.partitions {
			h, err := w.writeBlock(p.index, w.opts.Compression)
			if err != nil {
				return err
			}
			w.props.IndexBytes += uint64(len(p.index))
			w.props.MaxIndexBlockSize = max(w.props.MaxIndexBlockSize, uint64(len(p.index)))
			top.Add(p.lastKey, p.lastTrailer, h.AppendTo(nil))
		}
		raw := top.Finish()
		w.props.TopIndexBytes = uint64(len(raw))
		h, err := w.writeBlock(raw, CompressionNone)
		if err != nil {
			return err
		}
		ft.index = h
		ft.flags |= flagPartitionedIndex
	}

	h, err := w.writeBlock(w.rangeDels.Finish(), CompressionNone)
	if err != nil {
		return err
	}
	ft.rangeDel = h
	h, err = w.writeBlock(w.props.encode(), CompressionNone)
	if err != nil {
		return err
	}
	ft.properties = h
	if !commonPrefix {
		ft.flags |= flagNoCommonPrefix
	}
	ft.version = FormatVersion
	return w.write(ft.encode())
}

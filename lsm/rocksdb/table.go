package rocksdb

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Meta block and property names this reader uses.
const (
	metaProperties       = "rocksdb.properties"
	metaPropertiesLegacy = "rocksdb.stats"
	metaRangeDel         = "rocksdb.range_del"
	metaCompressionDict  = "rocksdb.compression_dict"
	metaIndex            = "rocksdb.index" // format_version >= 6: the index's handle

	propNumEntries        = "rocksdb.num.entries"
	propNumRangeDels      = "rocksdb.num.range-deletions"
	propCompression       = "rocksdb.compression"
	propComparator        = "rocksdb.comparator"
	propMergeOperator     = "rocksdb.merge.operator"
	propIndexKeyIsUserKey = "rocksdb.index.key.is.user.key"
	propIndexValueIsDelta = "rocksdb.index.value.is.delta.encoded"
	propIndexType         = "rocksdb.block.based.table.index.type"
	propGlobalSeqno       = "rocksdb.external_sst_file.global_seqno"
	propExternalVersion   = "rocksdb.external_sst_file.version"
)

// Index types (BlockBasedTableOptions::IndexType).
const (
	indexBinarySearch   = 0
	indexHashSearch     = 1
	indexTwoLevel       = 2
	indexBinaryFirstKey = 3
)

// TableProps are the properties of one table that this reader uses or
// reports.
type TableProps struct {
	FileNumber      uint64
	Level           int
	Size            uint64
	FormatVersion   uint32
	Checksum        string
	Compression     string
	MergeOperator   string // the merge operator configured when it was written ("" or "nullptr": none)
	Entries         uint64 // point entries (puts and deletions)
	RangeDeletions  uint64
	IndexType       string
	IndexPartitions int // the partitioned index's partitions; 0 for a one-level index
	DataBlocks      int
}

// table is an open block-based table: its footer, properties, every index
// entry (partitions flattened) and its range tombstones.
type table struct {
	name   string
	f      vfs.File
	size   int64
	meta   *fileMeta
	footer footer
	props  TableProps

	indexKeyIsUserKey bool
	valueIsDelta      bool
	globalSeqno       uint64
	index             []blockEntry // one per data block, in key order
	rangeDels         []tombstone
	// lastBlock is the data block read last, so that lookups of nearby
	// keys (a migration's verification walks keys in order) reuse it.
	lastBlock atomic.Pointer[decodedBlock]
}

// openTable opens and checks the table at path, which the MANIFEST describes
// as meta (nil: no MANIFEST to check against).
func openTable(fs vfs.FS, path string, meta *fileMeta) (*table, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "rocksdb: open table")
	}
	t, err := openTableFile(path, f, meta)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// openTableFile reads a table's footer, meta blocks and index from f.
func openTableFile(name string, f vfs.File, meta *fileMeta) (*table, error) {
	t := &table{name: name, f: f, meta: meta}
	size, err := f.Size()
	if err != nil {
		return nil, errors.Wrapf(err, "rocksdb: %s", name)
	}
	t.size = size
	if meta != nil && uint64(size) != meta.size {
		return nil, corruptf("%s: file is %d bytes, the MANIFEST says %d", name, size, meta.size)
	}
	n := int64(footerSize)
	if size < n {
		n = size
	}
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil {
		return nil, errors.Wrapf(err, "rocksdb: %s: read footer", name)
	}
	if t.footer, err = decodeFooter(name, tail, size-n); err != nil {
		return nil, err
	}
	if err := t.readMeta(); err != nil {
		return nil, err
	}
	if err := t.readIndex(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *table) Close() error { return t.f.Close() }

// decodeBlockAt reads and decodes the block at h, naming it in errors.
func (t *table) decodeBlockAt(h blockHandle, what string, kind blockKind) ([]blockEntry, error) {
	b, err := t.readBlock(h, what)
	if err != nil {
		return nil, err
	}
	entries, err := decodeBlock(b, kind)
	if err != nil {
		return nil, corruptf("%s: %s %s: %s", t.name, what, h, err)
	}
	return entries, nil
}

// readMeta reads the metaindex, the properties and the range deletions.
func (t *table) readMeta() error {
	metas, err := t.decodeBlockAt(t.footer.metaindex, "metaindex", dataBlock)
	if err != nil {
		return err
	}
	handles := map[string]blockHandle{}
	for _, e := range metas {
		d := decoder{b: e.value}
		h := decodeHandle(&d)
		if !d.ok() {
			return corruptf("%s: metaindex %s: entry at offset %d: bad handle for %q", t.name, t.footer.metaindex, e.offset, e.key)
		}
		handles[string(e.key)] = h
	}
	if _, ok := handles[metaCompressionDict]; ok {
		return unsupportedf("%s: compression dictionary", t.name)
	}
	if t.footer.formatVersion >= 6 {
		h, ok := handles[metaIndex]
		if !ok {
			return corruptf("%s: metaindex %s: no %s entry (format_version %d keeps the index handle there)", t.name, t.footer.metaindex, metaIndex, t.footer.formatVersion)
		}
		t.footer.index = h
	}
	ph, ok := handles[metaProperties]
	if !ok {
		ph, ok = handles[metaPropertiesLegacy]
	}
	if !ok {
		return corruptf("%s: no properties block", t.name)
	}
	props, err := t.decodeBlockAt(ph, "properties", dataBlock)
	if err != nil {
		return err
	}
	t.props = TableProps{FormatVersion: t.footer.formatVersion, Checksum: checksumName(t.footer.checksum), IndexType: "binary search"}
	if t.meta != nil {
		t.props.FileNumber, t.props.Level, t.props.Size = t.meta.num, t.meta.level, t.meta.size
	}
	indexType := uint32(indexBinarySearch)
	for _, e := range props {
		u := func() (uint64, error) {
			v, n := binary.Uvarint(e.value)
			if n <= 0 {
				return 0, corruptf("%s: properties %s: bad value of %s", t.name, ph, e.key)
			}
			return v, nil
		}
		var err error
		switch string(e.key) {
		case propNumEntries:
			t.props.Entries, err = u()
		case propNumRangeDels:
			t.props.RangeDeletions, err = u()
		case propCompression:
			t.props.Compression = string(e.value)
			err = t.checkCompressionName(ph, string(e.value))
		case propComparator:
			if string(e.value) != bytewiseComparator {
				return unsupportedf("%s: comparator %q (only %s)", t.name, e.value, bytewiseComparator)
			}
		case propMergeOperator:
			// The merge operator configured when the table was written
			// (ldb names StringAppendOperator in every table it
			// rewrites). Only merge records in the data are refused, by
			// key, where they are read.
			t.props.MergeOperator = string(e.value)
		case propIndexKeyIsUserKey:
			var v uint64
			v, err = u()
			t.indexKeyIsUserKey = v != 0
		case propIndexValueIsDelta:
			var v uint64
			v, err = u()
			t.valueIsDelta = v != 0
		case propIndexType:
			if len(e.value) != 4 {
				return corruptf("%s: properties %s: bad value of %s", t.name, ph, e.key)
			}
			indexType = binary.LittleEndian.Uint32(e.value)
		case propGlobalSeqno:
			if len(e.value) != 8 {
				return corruptf("%s: properties %s: bad value of %s", t.name, ph, e.key)
			}
			t.globalSeqno = binary.LittleEndian.Uint64(e.value)
		}
		if err != nil {
			return err
		}
	}
	switch indexType {
	case indexBinarySearch, indexHashSearch:
		// A hash index adds prefix meta blocks; its index block is the same.
	case indexTwoLevel:
		t.props.IndexType = "two-level"
	default:
		name := "unknown"
		if indexType == indexBinaryFirstKey {
			name = "kBinarySearchWithFirstKey"
		}
		return unsupportedf("%s: properties %s: index type %d (%s)", t.name, ph, indexType, name)
	}
	if h, ok := handles[metaRangeDel]; ok {
		entries, err := t.decodeBlockAt(h, "range deletions", dataBlock)
		if err != nil {
			return err
		}
		for _, e := range entries {
			ik, ok := parseInternalKey(e.key)
			if !ok || ik.kind != typeRangeDeletion {
				return corruptf("%s: range deletions %s: entry at offset %d: bad key", t.name, h, e.offset)
			}
			seq := ik.seq
			if t.globalSeqno != 0 {
				seq = t.globalSeqno
			}
			t.rangeDels = append(t.rangeDels, tombstone{start: ik.user, end: e.value, seq: seq})
		}
	}
	return nil
}

// checkCompressionName checks the rocksdb.compression property. From
// format_version 7 it is "<compression manager>;<types used, two hex digits
// each>;" (RocksDB's built-in manager is "BuiltinV2"; empty when compression
// is off): another manager may give the trailer's type bytes meanings of its
// own, so it is refused. Before, it names one compression type, and the
// block trailers decide.
func (t *table) checkCompressionName(ph blockHandle, v string) error {
	if t.footer.formatVersion < 7 {
		return nil
	}
	fields := strings.Split(v, ";")
	if len(fields) < 3 || len(fields[1])%2 != 0 {
		return corruptf("%s: properties %s: %s %q is not <manager>;<types>;", t.name, ph, propCompression, v)
	}
	if m := fields[0]; m != "" && m != "BuiltinV2" {
		return unsupportedf("%s: properties %s: compression manager %q (only RocksDB's built-in BuiltinV2)", t.name, ph, m)
	}
	var names []string
	for i := 0; i < len(fields[1]); i += 2 {
		typ, err := strconv.ParseUint(fields[1][i:i+2], 16, 8)
		if err != nil {
			return corruptf("%s: properties %s: %s %q: bad compression type", t.name, ph, propCompression, v)
		}
		names = append(names, compressionName(byte(typ)))
	}
	if len(names) == 0 {
		names = []string{compressionName(compressionNone)}
	}
	t.props.Compression = strings.Join(names, "+")
	return nil
}

func (t *table) indexKind() blockKind {
	if t.valueIsDelta {
		return deltaIndexBlock
	}
	return indexBlock
}

// readIndex reads the index, and for a partitioned index every partition,
// into t.index.
func (t *table) readIndex() error {
	top, err := t.decodeBlockAt(t.footer.index, "index", t.indexKind())
	if err != nil {
		return err
	}
	if t.props.IndexType != "two-level" {
		t.index = top
	} else {
		t.props.IndexPartitions = len(top)
		for _, p := range top {
			part, err := t.decodeBlockAt(p.handle, "index partition", t.indexKind())
			if err != nil {
				return err
			}
			t.index = append(t.index, part...)
			if int64(len(t.index)) > t.size/blockTrailerSize {
				return corruptf("%s: index partition %s: index names more data blocks than the file can hold", t.name, p.handle)
			}
		}
	}
	t.props.DataBlocks = len(t.index)
	if int64(len(t.index)) > t.size/blockTrailerSize {
		// Every data block needs at least its trailer's bytes of the file.
		return corruptf("%s: index names %d data blocks, more than the file can hold", t.name, len(t.index))
	}
	for i, e := range t.index {
		if !t.indexKeyIsUserKey {
			ik, ok := parseInternalKey(e.key)
			if !ok {
				return corruptf("%s: index entry %d: key shorter than its 8-byte trailer", t.name, i)
			}
			t.index[i].key = ik.user
		}
		if i > 0 && bytes.Compare(t.index[i-1].key, t.index[i].key) > 0 {
			return corruptf("%s: index entry %d (%s): keys out of order", t.name, i, e.handle)
		}
	}
	return nil
}

// seekBlock returns the index of the first data block that may hold a user
// key >= key: index keys separate blocks (each >= its block's last key).
func (t *table) seekBlock(key []byte) int {
	return sort.Search(len(t.index), func(i int) bool { return bytes.Compare(t.index[i].key, key) >= 0 })
}

// mayContain reports whether key lies within the table's bounds.
func (t *table) mayContain(key []byte) bool {
	if t.meta == nil {
		return true
	}
	small, _ := parseInternalKey(t.meta.smallest)
	large, _ := parseInternalKey(t.meta.largest)
	return bytes.Compare(small.user, key) <= 0 && bytes.Compare(key, large.user) <= 0
}

// get returns the table's newest entry for key, if it has one.
func (t *table) get(key []byte) (internalKey, []byte, bool, error) {
	// The first block whose separator is >= key holds key's newest
	// version if any block does; when key falls between that block's last
	// key and its separator, the next block's first key settles it.
	for i := t.seekBlock(key); i < len(t.index) && i <= t.seekBlock(key)+1; i++ {
		h := t.index[i].handle
		b, err := t.readBlock(h, "data")
		if err != nil {
			return internalKey{}, nil, false, err
		}
		ik, v, off, ok, err := seekDataBlock(b, key)
		if err != nil {
			return internalKey{}, nil, false, corruptf("%s: data %s: %s", t.name, h, err)
		}
		if !ok {
			continue
		}
		if !bytes.Equal(ik.user, key) {
			return internalKey{}, nil, false, nil
		}
		switch ik.kind {
		case typeValue, typeDeletion, typeSingleDeletion:
		case typeMerge:
			return internalKey{}, nil, false, mergeRecordError(t.name, h, off, ik.user)
		default:
			return internalKey{}, nil, false, unsupportedf("%s: data %s: entry at offset %d: value type %#x", t.name, h, off, ik.kind)
		}
		if t.globalSeqno != 0 {
			ik.seq = t.globalSeqno
		}
		return ik, v, true, nil
	}
	return internalKey{}, nil, false, nil
}

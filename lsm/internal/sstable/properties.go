package sstable

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/block"
)

// Properties describe a table. They are stored in the properties block as
// name → value entries (names sorted, numbers as uvarints, keys as user key
// followed by an 8-byte little-endian trailer). Readers ignore names they do
// not know, so properties can be added without a format change. Names are
// persisted: do not change them.
type Properties struct {
	Entries         uint64 // point entries (sets and deletes)
	RangeDeletions  uint64
	RawKeyBytes     uint64 // sum of user key lengths of point entries
	RawValueBytes   uint64
	DataBlocks      uint64
	IndexPartitions uint64 // 1 for the full layout's single index block
	FilterEntries   uint64 // distinct user keys hashed into filters

	// Uncompressed bytes per tier (block contents without trailers).
	DataBytes      uint64
	IndexBytes     uint64 // index partitions, or the single index block
	TopIndexBytes  uint64 // top-level index (partitioned layout)
	FilterBytes    uint64 // filter partitions, or the full filter
	TopFilterBytes uint64 // top-level filter index (partitioned layout)
	// Stored bytes (compressed, with trailers) of data blocks.
	DataStoredBytes uint64

	FilterPartitions   uint64
	MaxFilterBlockSize uint64
	MaxIndexBlockSize  uint64

	SmallestSeqNum uint64
	LargestSeqNum  uint64
	// Smallest and largest point keys (absent when Entries is 0).
	Smallest, Largest base.InternalKey

	Layout               Layout
	Compression          Compression
	CommonPrefix         bool
	BlockSize            uint64
	RestartInterval      uint64
	IndexRestartInterval uint64
	MetadataBlockSize    uint64
	BloomBitsPerKey      int64
	FormatVersion        uint64
}

// propertyFields maps stored names to the numeric fields.
func (p *Properties) numericFields() map[string]*uint64 {
	return map[string]*uint64{
		"bookie.entries":                &p.Entries,
		"bookie.range-deletions":        &p.RangeDeletions,
		"bookie.raw-key-bytes":          &p.RawKeyBytes,
		"bookie.raw-value-bytes":        &p.RawValueBytes,
		"bookie.data-blocks":            &p.DataBlocks,
		"bookie.index-partitions":       &p.IndexPartitions,
		"bookie.filter-entries":         &p.FilterEntries,
		"bookie.data-bytes":             &p.DataBytes,
		"bookie.index-bytes":            &p.IndexBytes,
		"bookie.top-index-bytes":        &p.TopIndexBytes,
		"bookie.filter-bytes":           &p.FilterBytes,
		"bookie.top-filter-bytes":       &p.TopFilterBytes,
		"bookie.data-stored-bytes":      &p.DataStoredBytes,
		"bookie.filter-partitions":      &p.FilterPartitions,
		"bookie.max-filter-block-bytes": &p.MaxFilterBlockSize,
		"bookie.max-index-block-bytes":  &p.MaxIndexBlockSize,
		"bookie.smallest-seqnum":        &p.SmallestSeqNum,
		"bookie.largest-seqnum":         &p.LargestSeqNum,
		"bookie.block-size":             &p.BlockSize,
		"bookie.restart-interval":       &p.RestartInterval,
		"bookie.index-restart-interval": &p.IndexRestartInterval,
		"bookie.metadata-block-size":    &p.MetadataBlockSize,
		"bookie.format-version":         &p.FormatVersion,
	}
}

func appendKey(dst []byte, k base.InternalKey) []byte {
	dst = append(dst, k.UserKey...)
	return binary.LittleEndian.AppendUint64(dst, uint64(k.Trailer))
}

func decodeKey(b []byte) (base.InternalKey, error) {
	if len(b) < 8 {
		return base.InternalKey{}, base.CorruptionErrorf("sstable: malformed key property")
	}
	n := len(b) - 8
	return base.InternalKey{UserKey: append([]byte(nil), b[:n]...), Trailer: base.Trailer(binary.LittleEndian.Uint64(b[n:]))}, nil
}

func boolByte(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// encode writes the properties as a block.
func (p *Properties) encode() []byte {
	values := map[string][]byte{}
	for name, v := range p.numericFields() {
		values[name] = binary.AppendUvarint(nil, *v)
	}
	values["bookie.layout"] = []byte(p.Layout.String())
	values["bookie.compression"] = []byte(p.Compression.String())
	values["bookie.common-prefix"] = binary.AppendUvarint(nil, boolByte(p.CommonPrefix))
	values["bookie.bloom-bits-per-key"] = binary.AppendVarint(nil, p.BloomBitsPerKey)
	if p.Entries > 0 {
		values["bookie.smallest-key"] = appendKey(nil, p.Smallest)
		values["bookie.largest-key"] = appendKey(nil, p.Largest)
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	b := block.NewBuilder(1, false)
	for _, n := range names {
		b.Add([]byte(n), 0, values[n])
	}
	return append([]byte(nil), b.Finish()...)
}

func decodeProperties(data []byte) (Properties, error) {
	var p Properties
	var it block.Iter
	if err := it.Init(data); err != nil {
		return p, err
	}
	fields := p.numericFields()
	for ok := it.First(); ok; ok = it.Next() {
		name, v := string(it.UserKey()), it.Value()
		if f, ok := fields[name]; ok {
			x, n := binary.Uvarint(v)
			if n <= 0 || n != len(v) {
				return p, base.CorruptionErrorf("sstable: malformed property %s", name)
			}
			*f = x
			continue
		}
		var err error
		switch name {
		case "bookie.layout":
			p.Layout, err = ParseLayout(string(v))
		case "bookie.compression":
			p.Compression, err = ParseCompression(string(v))
		case "bookie.common-prefix":
			p.CommonPrefix = len(v) == 1 && v[0] == 1
		case "bookie.bloom-bits-per-key":
			x, n := binary.Varint(v)
			if n <= 0 {
				err = fmt.Errorf("malformed")
			}
			p.BloomBitsPerKey = x
		case "bookie.smallest-key":
			p.Smallest, err = decodeKey(v)
		case "bookie.largest-key":
			p.Largest, err = decodeKey(v)
		}
		if err != nil {
			return p, base.CorruptionErrorf("sstable: malformed property %s: %v", name, err)
		}
	}
	if err := it.Error(); err != nil {
		return p, err
	}
	return p, nil
}

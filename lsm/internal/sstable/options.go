package sstable

import (
	"fmt"

	"github.com/cockroachdb/errors"
)

// Layout chooses how a table's index and filter are organized.
type Layout uint8

const (
	// LayoutPartitioned splits the index and the Bloom filter into
	// partitions of about MetadataBlockSize bytes, one filter partition per
	// index partition, found through a top-level index and a top-level
	// filter index that the reader pins for the table's life. A lookup
	// touches a few KiB of metadata however large the table is.
	LayoutPartitioned Layout = 0
	// LayoutFull writes one index block and one Bloom filter for the whole
	// table, as RocksDB's default block-based table does.
	LayoutFull Layout = 1
)

// String names the layout as the configuration and tools spell it.
func (l Layout) String() string {
	switch l {
	case LayoutPartitioned:
		return "partitioned"
	case LayoutFull:
		return "full"
	}
	return fmt.Sprintf("layout(%d)", uint8(l))
}

// ParseLayout parses "partitioned" or "full".
func ParseLayout(s string) (Layout, error) {
	switch s {
	case "partitioned":
		return LayoutPartitioned, nil
	case "full":
		return LayoutFull, nil
	}
	return 0, errors.Newf("unknown table layout %q (accepted: partitioned, full)", s)
}

// Compression chooses the block compression codec. (The codes stored in
// block trailers are separate constants, see compression.go.)
type Compression uint8

const (
	// CompressionDefault is LZ4, BookKeeper's default.
	CompressionDefault Compression = iota
	// CompressionNone stores blocks as they are.
	CompressionNone
	// CompressionLZ4 compresses blocks with LZ4.
	CompressionLZ4
)

// String names the codec.
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionLZ4, CompressionDefault:
		return "lz4"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// ParseCompression parses "none" or "lz4".
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "none", "no":
		return CompressionNone, nil
	case "lz4":
		return CompressionLZ4, nil
	}
	return 0, errors.Newf("unknown compression %q (accepted: none, lz4)", s)
}

// WriterOptions configure a table writer. The zero value of a field means
// its default; call EnsureDefaults to fill them in.
type WriterOptions struct {
	// BlockSize is the target uncompressed size of a data block.
	// Default 65536 (BookKeeper's dbStorage_rocksDB_blockSize).
	BlockSize int
	// RestartInterval is the number of entries between restart points in
	// data blocks. Default 24 (RocksDB: 16): a restart entry is stored whole
	// (~17 bytes with its offset) where a compact entry takes ~4, so on the
	// 50M-key bench 16/24/32 give 6.10/5.83/5.72 bytes per key on disk, for
	// 219/301/349 ns per in-block seek (BenchmarkSeekGE/compact).
	RestartInterval int
	// IndexRestartInterval is the restart interval of index blocks.
	// Default 1: every index entry is a restart point, binary-searchable.
	IndexRestartInterval int
	// MetadataBlockSize is the target size of an index partition; filter
	// partitions cover the same data blocks. Default 4096.
	MetadataBlockSize int
	// Layout chooses partitioned (default) or full index and filter.
	Layout Layout
	// BloomBitsPerKey is the Bloom filter's bits per key. Default 10;
	// negative disables filters.
	BloomBitsPerKey int
	// Compression of data and index blocks. Default LZ4.
	Compression Compression
	// DisableCommonPrefix turns off storing each block's common key prefix
	// once (the prefix is on by default).
	DisableCommonPrefix bool
	// DisableValuePrefixes turns off storing, in data blocks, each value's
	// prefix shared with the previous value once (on by default).
	DisableValuePrefixes bool
	// DisableCompactEntries turns off compact data-block entries (an entry
	// differing from its predecessor only in a few trailing key and value
	// bytes stored as one header byte plus those bytes; see
	// docs/format.md). They need value prefixes. For comparisons.
	DisableCompactEntries bool
}

// Defaults of WriterOptions.
const (
	DefaultBlockSize            = 64 << 10
	DefaultRestartInterval      = 24
	DefaultIndexRestartInterval = 1
	DefaultMetadataBlockSize    = 4 << 10
	DefaultBloomBitsPerKey      = 10
)

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o WriterOptions) EnsureDefaults() WriterOptions {
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.RestartInterval <= 0 {
		o.RestartInterval = DefaultRestartInterval
	}
	if o.IndexRestartInterval <= 0 {
		o.IndexRestartInterval = DefaultIndexRestartInterval
	}
	if o.MetadataBlockSize <= 0 {
		o.MetadataBlockSize = DefaultMetadataBlockSize
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = DefaultBloomBitsPerKey
	}
	if o.Compression == CompressionDefault {
		o.Compression = CompressionLZ4
	}
	return o
}

// Validate reports the first option out of range, naming it.
func (o WriterOptions) Validate() error {
	switch {
	case o.BlockSize < 256 || o.BlockSize > 64<<20:
		return errors.Newf("BlockSize %d is out of range [256, 64 MiB]", o.BlockSize)
	case o.RestartInterval < 1 || o.RestartInterval > 1<<16:
		return errors.Newf("RestartInterval %d is out of range [1, 65536]", o.RestartInterval)
	case o.IndexRestartInterval < 1 || o.IndexRestartInterval > 1<<16:
		return errors.Newf("IndexRestartInterval %d is out of range [1, 65536]", o.IndexRestartInterval)
	case o.MetadataBlockSize < 64 || o.MetadataBlockSize > 64<<20:
		return errors.Newf("MetadataBlockSize %d is out of range [64, 64 MiB]", o.MetadataBlockSize)
	case o.BloomBitsPerKey > 64:
		return errors.Newf("BloomBitsPerKey %d is out of range [<=0 disables, 1..64]", o.BloomBitsPerKey)
	case o.Layout != LayoutPartitioned && o.Layout != LayoutFull:
		return errors.Newf("unknown Layout %d", o.Layout)
	case o.Compression > CompressionLZ4:
		return errors.Newf("unknown Compression %d", o.Compression)
	}
	return nil
}

package lsm

import (
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// ErrCorruption marks errors caused by damaged files; test with errors.Is.
var ErrCorruption = base.ErrCorruption

// TableLayout chooses partitioned (default) or full index and filter.
type TableLayout = sstable.Layout

// Table layouts.
const (
	TableLayoutPartitioned = sstable.LayoutPartitioned
	TableLayoutFull        = sstable.LayoutFull
)

// ParseTableLayout parses "partitioned" or "full".
func ParseTableLayout(s string) (TableLayout, error) { return sstable.ParseLayout(s) }

// Compression is a block compression codec.
type Compression = sstable.Compression

// Compression codecs.
const (
	DefaultCompression = sstable.CompressionDefault // LZ4
	NoCompression      = sstable.CompressionNone
	LZ4Compression     = sstable.CompressionLZ4
)

// ParseCompression parses "none" or "lz4".
func ParseCompression(s string) (Compression, error) { return sstable.ParseCompression(s) }

// TableOptions configure standalone tables (CreateTable); the engine's
// Options carry the same settings for the tables it writes.
type TableOptions = sstable.WriterOptions

// TableProperties describe a table: entry counts, bytes per tier, options.
type TableProperties = sstable.Properties

// TableBlockError names the first bad block Table.Verify found: its kind
// and offset (errors.As target).
type TableBlockError = sstable.BlockError

// TableWriter writes a standalone table of sorted keys, for tools, tests
// and index rebuilds.
type TableWriter struct {
	w   *sstable.Writer
	seq base.SeqNum
}

// CreateTable creates the table file at path on fs (vfs.Default for the
// operating system's).
func CreateTable(fs vfs.FS, path string, opts TableOptions) (*TableWriter, error) {
	f, err := fs.Create(path)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: creating table %s", path)
	}
	w, err := sstable.NewWriter(f, path, opts)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &TableWriter{w: w}, nil
}

// Set adds a key. Keys must be added in strictly increasing order.
func (t *TableWriter) Set(key, value []byte) error {
	return t.w.Add(base.MakeInternalKey(key, t.seq, base.KindSet), value)
}

// EstimatedSize is the table's size so far.
func (t *TableWriter) EstimatedSize() uint64 { return t.w.EstimatedSize() }

// Close finishes, syncs and closes the table.
func (t *TableWriter) Close() (*TableProperties, error) { return t.w.Close() }

// Table is a table opened for inspection.
type Table struct {
	r *sstable.Reader
}

// OpenTable opens the table at path on fs for reading, without a block
// cache.
func OpenTable(fs vfs.FS, path string) (*Table, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: opening table %s", path)
	}
	r, err := sstable.Open(f, path, sstable.ReaderOptions{})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &Table{r: r}, nil
}

// Properties returns the table's properties.
func (t *Table) Properties() *TableProperties { return t.r.Properties() }

// FileSize returns the table's size in bytes.
func (t *Table) FileSize() uint64 { return t.r.FileSize() }

// Verify reads and checks every block; the error wraps a *TableBlockError
// naming the first bad block.
func (t *Table) Verify() error { return t.r.Verify() }

// TableEntry is one entry of a table as Scan reports it.
type TableEntry struct {
	Key     []byte
	SeqNum  uint64
	Kind    string // SET, DEL
	Value   []byte
	Deleted bool // a point tombstone
}

// Scan calls fn for every point entry in order. The entry's slices are
// valid only during the call.
func (t *Table) Scan(fn func(e TableEntry) error) error {
	it := t.r.NewIter(sstable.IterOptions{})
	for ok := it.First(); ok; ok = it.Next() {
		tr := it.Trailer()
		e := TableEntry{Key: it.UserKey(), SeqNum: uint64(tr.SeqNum()), Kind: tr.Kind().String(), Value: it.Value(), Deleted: tr.Kind() == base.KindDelete}
		if err := fn(e); err != nil {
			_ = it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		_ = it.Close()
		return err
	}
	_ = it.Close()
	return nil
}

// TableBlock locates one block of a table.
type TableBlock = sstable.BlockInfo

// Blocks lists the table's blocks in file order.
func (t *Table) Blocks() ([]TableBlock, error) { return t.r.Layout() }

// Close closes the table.
func (t *Table) Close() error { return t.r.Close() }

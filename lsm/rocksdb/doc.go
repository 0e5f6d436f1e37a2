// Package rocksdb reads RocksDB databases as BookKeeper writes them (its
// entry-location and ledger-metadata indexes), read-only and without cgo, so
// that a bookie's data can be migrated and checked.
//
// Open replays CURRENT, the MANIFEST's version edits and the WALs that hold
// unflushed writes, and opens every live block-based table of the default
// column family. NewIter, Get and Scan then yield the database's visible
// keys and values exactly as a RocksDB read at the newest sequence number
// would: for each key its newest version across the WAL and all levels,
// hidden by a newer deletion, single deletion or covering range deletion.
// Props describes the files per level, entries and sequence numbers.
//
// What is read (see docs/format.md): the LevelDB/RocksDB log format with
// legacy and recyclable headers; WriteBatch Put, Delete, SingleDelete and
// DeleteRange; block-based tables of format_version 0 to 7 (6 and 7: the
// checksummed footer and context-dependent block checksums of RocksDB 8.6
// and later) with one-level or partitioned (two-level) indexes,
// delta-encoded index values, range deletion blocks, no compression, Snappy
// or LZ4, and CRC-32C, XXH32, XXH64 or XXH3 block checksums, all verified.
// Filters are ignored; so is the merge operator a table's properties name
// (ldb names one in every table it writes). Anything else RocksDB can write
// (other comparators or column families holding data, merge records, blob
// files, other compressions or checksums, newer format versions) is refused
// with an error matching ErrUnsupported, naming the checksum type, format
// version or compression by number and name, or the merge record's key;
// bytes that do not decode give an error matching ErrCorruption. Every
// error names the file, and the block handle and offset where it has one;
// no input makes the reader panic.
//
// The reader never writes to the directory. A DB is immutable once open:
// iterators may run concurrently; each iterator is for one goroutine.
package rocksdb

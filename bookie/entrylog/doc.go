// Package entrylog is the bookie's entry logs: append-only files that hold
// the entries' payloads, named by the location index.
//
// A ledger directory's entry logs live in <ledgerDir>/current, one file per
// log, named after the log's id in lower-case hexadecimal ("1f.log"), as
// upstream BookKeeper names them. Ids start at 0 and only grow: a new log
// (at startup, after the current one reaches Options.LogSizeLimit, or after
// a write failure) takes the next id after every log in the directory and
// after the id recorded in the "lastId" file, so that ids of removed logs
// are not reused.
//
// # Format
//
// Every log starts with a 1 KiB header; records follow back to back (all
// integers big-endian; persisted layout, do not change):
//
//	header (1024 bytes):
//	+-------------+----------------+----------------+--------------+-----------------+
//	| magic "BIEL"| version (u32)  | log id (u64)   | CRC-32C (u32)| zeros (1004)    |
//	+-------------+----------------+----------------+--------------+-----------------+
//	0             4                8                16             20             1024
//
//	record:
//	+-------------+-------------------+------------------+-------------+---------------+
//	| size (u32)  | ledger id (i64)   | entry id (i64)   | CRC-32C(u32)| payload       |
//	+-------------+-------------------+------------------+-------------+---------------+
//	^ location - 4 ^ location
//
// The header's CRC covers its first 16 bytes. A record's size counts the
// bytes after the size field (20 + payload); its CRC-32C (Castagnoli)
// covers the size, the ledger id, the entry id and the payload, so that a
// damaged size, a record read at a wrong location and a torn write are all
// detected. Upstream stores the ledger and entry ids as the first 16 bytes
// of the payload (the client's entry format); here they are part of the
// record, and the payload is opaque.
//
// A location is logId<<32 | offset, where offset is the position of the
// record's ledger id, just past its size field, as upstream: offset 0 is
// never valid (the header is there), so location 0 means "absent" to the
// location index. Log ids are below 2^31, so that a location is a positive
// int64, and offsets below 2^32 (LogSizeLimit is at most 1 GiB).
//
// # BookKeeper's logs
//
// The logs of upstream's DefaultEntryLogger ("BKLO" magic: a 1 KiB header
// with a version, the ledgers map's offset and count; records
// [i32 size][entry] whose entry starts with its ledger and entry ids;
// at the end of a rotated log, the ledgers map as records of ledger -1,
// entry -2), and those of its DirectEntryLogger (the same in 4 KiB-aligned
// blocks: a filler record of ledger -1 after the header, 0xF0 padding
// after each flush, a preallocated end of zeros, all skipped as its own
// scanner skips them), are read side by side with ours: each log's
// format is told by its header's magic when it is first read (Format,
// DetectFormat), and a record iterator per format serves ReadAfter and
// Scan. Locations are the
// same for both (the position just past the size field). Such logs are
// never written: new logs are ours, numbered after every log and after
// lastId, which upstream keeps the same way. A read of a BookKeeper entry
// (ReadEntry, ReadAfter, Scan) gives the bytes after its 16-byte
// ledger/entry header (BKEntryHeaderSize), the shape of a payload of ours.
// BookKeeper records carry no checksum (the client's digest is inside the
// entry): reads check the size's bounds, that the record lies in the log
// and that its ids are those asked for. ReadBKLedgersMap reads the ledgers
// map of a rotated log; a log without one (ErrNoLedgersMap) is scanned.
//
// # Durability
//
// Records are buffered; Flush writes them out and fsyncs the current log,
// and the directory when a log was created since the last Flush. A log is
// synced and closed for writing when it rotates. The bookie calls Flush at
// each checkpoint before it writes the locations of the flushed entries to
// the index, so the index never names bytes that a crash could lose. After
// a write or sync failure the current log is abandoned: the next record
// starts a new log, and the records of the failed checkpoint are written
// again there.
//
// A crash can leave a torn record at the end of the log that was current:
// Scan stops there and reports it; reads never reach it, since no index
// entry names it.
//
// # Ledgers maps
//
// The Logger counts the bytes of each ledger's records in the log it
// writes. When the log rotates that count is kept (Metadata hands it to
// the garbage collector and writes it next to the log as "1f.ledgers",
// atomically; Close writes the ones not handed out). A log without a map,
// or with one that does not decode, is scanned to rebuild it. RemoveLog
// removes a log and its map once the bookie has moved or dropped its
// entries; reads of a removed log fail with ErrBadLocation. The format is
// in docs/format.md.
//
// # Files
//
// Every file operation goes through a vfs.FS (Options.FS; the operating
// system's by default), the file system the engine uses too, so that the
// bookie keeps its logs and its indexes on one FS: tests crash both at the
// same instant on vfs.NewMem and fail chosen operations with
// vfs.NewErrorFS. A log is created with CreateExclusive, so it is never
// overwritten; lastId is replaced by a synced temporary file renamed over
// it.
//
// # Concurrency
//
// A Logger is safe for concurrent use: writes are serialized, reads run in
// parallel with each other and with writes.
package entrylog

// Package record implements the chunked log format shared by the WAL and the
// MANIFEST: a file of 32 KiB blocks holding records of any length, each
// split into checksummed chunks that never cross a block boundary.
//
// # Format
//
// The file is a sequence of blocks of BlockSize (32 KiB) bytes; only the last
// block may be short. A block holds chunks back to back:
//
//	byte 0            4                 6         7                  7+length
//	+-----------------+-----------------+---------+-------------------+
//	| checksum (4B)   | length (2B)     | type 1B | payload (length)  |
//	| uint32 LE       | uint16 LE       |         |                   |
//	+-----------------+-----------------+---------+-------------------+
//
// Fields:
//
//   - checksum is the masked CRC-32C (Castagnoli) of the type byte followed
//     by the payload. Masking (rotate right by 15 bits, add 0xa282ead8) keeps
//     the checksum strong when the payload itself holds checksums, as a WAL
//     record of a MANIFEST edit or a log inside a log would.
//   - length is the number of payload bytes in this chunk; a chunk never
//     extends past the end of its block, so length <= BlockSize-7.
//   - type says which part of a record the chunk is:
//     1 full (the whole record), 2 first, 3 middle, 4 last. A record is
//     either one full chunk or first, zero or more middles, and last.
//     Type 0 is never written, so a zero-filled region never decodes as a
//     chunk.
//
// When fewer than 7 bytes (a header) remain in a block, the writer fills
// them with zeros and continues at the next block. When exactly 7 bytes
// remain, a record starts there with an empty first chunk (or, if the record
// is empty, a full chunk). A zero-length record is one full chunk with
// length 0.
//
//	block 0                            block 1                 block 2
//	+-------+-------+----------------+ +---------------------+ +-------+-------+--+
//	| FULL  | FULL  | FIRST          | | MIDDLE              | | LAST  | FULL  |00|
//	| rec A | rec B | rec C          | | rec C               | | rec C | rec D |  |
//	+-------+-------+----------------+ +---------------------+ +-------+-------+--+
//	                                                   zero trailer (< 7 bytes) ^
//
// The constants of this format are persisted: do not change them.
//
// # Reading and torn tails
//
// A crash during an unsynced write leaves a torn tail: after the last fully
// written record there may be a partial chunk, a chunk with a bad checksum,
// garbage or zeros. Such a tail is not corruption: those records were never
// reported durable. The Reader tells the two apart by looking at the rest of
// the stream when it meets a bad or incomplete chunk: if no valid chunk
// follows anywhere, the log ends there (io.EOF, with TornTail reporting
// whether anything other than zeros was dropped); if a valid chunk follows,
// records after the damage would be lost, and the Reader returns an error
// marked base.ErrCorruption that names the offset and the problem.
//
// The rule is conservative. If the kernel wrote an unsynced tail back out of
// order (a later page on disk, an earlier one not), the valid later chunk
// makes the damage look like corruption and recovery stops instead of
// silently dropping it. For the same reason a log file must not be recycled
// (overwritten in place without truncation): stale chunks of the old log
// after a torn tail would read as corruption.
//
// Whether a log's bad tail is torn or corrupt is not for the Reader alone to
// say: a record covered by a completed fsync cannot be torn. Its writers
// record the synced length in a separate file (SyncedLengthWriter, read by
// ReadSyncedLength); the WAL and manifest recovery compare it with Offset
// or TornTailOffset and report damage below it as corruption.
//
// # Thread safety
//
// Writer and Reader are not safe for concurrent use; the wal package adds
// the locking and group commit the WAL needs.
package record

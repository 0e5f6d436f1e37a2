// Package batch encodes write batches: ordered lists of Set, Delete,
// DeleteRange and Merge operations that the engine applies atomically. The encoding a
// Batch builds (its Repr) is written unchanged as the payload of one WAL
// record, so it is a persisted format.
//
// # Format
//
// A batch is a 12-byte header followed by count operations (persisted, do
// not change):
//
//	0                    8                   12
//	+--------------------+-------------------+------+------+-----+--------+
//	| seqnum (uint64 LE) | count (uint32 LE) | op 0 | op 1 | ... | op n-1 |
//	+--------------------+-------------------+------+------+-----+--------+
//
// seqnum is the sequence number of the first operation, assigned at commit
// (0 before). Operation i is applied at sequence number seqnum+i, so a batch
// occupies the range [seqnum, seqnum+count).
//
// Each operation:
//
//	+-----------+------------------+-----------+--------------------+-------------+
//	| kind (1B) | keyLen (uvarint) | key       | valueLen (uvarint) | value       |
//	+-----------+------------------+-----------+--------------------+-------------+
//	                                           |<- Set, RangeDelete, Merge only ->|
//
// kind is a base.Kind byte: base.KindDelete (0), base.KindSet (1),
// base.KindRangeDelete (2) or base.KindMerge (3). A Delete has no value. The
// value of a RangeDelete is the exclusive end of the deleted user-key range;
// its key is the inclusive start. The value of a Merge is the operand. Kind 3
// was added after the first release; batches without it decode as before.
//
// # Validation
//
// Decode checks the header and every operation before it returns, so a
// damaged WAL record is rejected as a whole instead of being half applied.
// The rules are:
//
//   - the header is complete and seqnum+count-1 <= base.SeqNumMax;
//   - every kind byte is one of the four kinds above;
//   - every length is a minimal uvarint (no redundant 0x80 continuation
//     bytes), so every valid batch has exactly one encoding;
//   - keys (and RangeDelete ends) are at most MaxKeySize bytes, Set values and
//     Merge operands at most MaxValueSize bytes, and no length runs past the end of the input;
//   - a RangeDelete's start is strictly less than its end (bytewise);
//   - exactly count operations fill the input, with no bytes left over.
//
// Violations are errors marked base.ErrCorruption naming the operation index,
// its offset and what is wrong. The same rules bind the Batch methods: an
// operation that breaks them is not recorded and the batch keeps the error
// (see Batch.Err), so a Batch never produces bytes that Decode rejects. An
// empty range deletion (start == end) is not an error there: it deletes
// nothing, so Batch.DeleteRange does not record it.
// MaxKeySize and MaxValueSize may be raised later but never lowered: a lower
// limit would turn WALs written today into corruption.
//
// # Thread safety
//
// A Batch and a Reader are not safe for concurrent use.
package batch

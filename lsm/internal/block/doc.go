// Package block encodes and reads the sorted key/value blocks that tables are
// made of: data blocks and every index tier (index partitions, the top-level
// index, the top-level filter index) use this one format.
//
// Block layout (persisted, do not change):
//
//	+---------------------+---------+-----+-----------+---------------------+-------------+
//	| common prefix P     | entry 0 | ... | entry n-1 | restart[0..r) u32LE | r uint32 LE |
//	+---------------------+---------+-----+-----------+---------------------+-------------+
//	^ offset 0            ^ offset len(P) = restart[0]
//
// The block's keys are internal keys (user key + trailer). The longest prefix
// shared by the user keys of all entries is stored once, at offset 0, and
// restart[0] (the offset of the first entry) is its length; restart[0] = 0
// means no prefix, so one reader reads blocks written with and without it.
// An empty block is just r = 0.
//
// Entry layout:
//
//	+-----------------+-------------------+-------------------+------------------+------------------+-------+
//	| shared (uvarint)| unshared (uvarint)| valueLen (uvarint)| trailer (uvarint)| key bytes        | value |
//	+-----------------+-------------------+-------------------+------------------+------------------+-------+
//
// At a restart point shared = 0 and the key bytes are the user key without
// the common prefix. Elsewhere shared counts the leading bytes of the user
// key equal to the previous entry's user key (always >= len(P)) and the key
// bytes are the rest. Since every non-restart entry of a block with a prefix
// has shared >= len(P) > 0, shared = 0 identifies a restart entry. The
// trailer (seqnum<<8 | kind) is a varint: seqnums are zeroed at the bottom of
// the tree, where it costs one byte.
//
// Seeks strip the target's prefix once: a target that does not start with P
// is before or after every key, decided by one comparison; otherwise binary
// search over restart points and the scan after it compare suffixes only.
package block

// Package block encodes and reads the sorted key/value blocks that tables are
// made of: data blocks and every index tier (index partitions, the top-level
// index, the top-level filter index) use this one format.
//
// Block layout (persisted, do not change):
//
//	+-----------------+---------+-----+-----------+-----------------------------+----------------+
//	| common prefix P | entry 0 | ... | entry n-1 | restart[0..r) u16 or u32 LE | count u32 LE   |
//	+-----------------+---------+-----+-----------+-----------------------------+----------------+
//	^ offset 0        ^ offset len(P) = restart[0]
//
//	count: bits 0-28 r, the number of restart points
//	       bit 29  compact entries may appear (only with bit 31)
//	       bit 30  restart offsets are u16 (the entries end below 64 KiB), else u32
//	       bit 31  entries share value prefixes (data blocks)
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
// With bit 31, an entry's valueLen is two fields, valueShared and
// valueUnshared, and only the value's bytes not shared with the previous
// value are stored; with bit 29 also set, an entry differing from the
// previous one only in its last few key and value bytes is one header byte
// 1vvvvkkk and those bytes (see Builder.CompactEntries). docs/format.md
// gives every form byte by byte; testdata/block_format pins them.
//
// Seeks strip the target's prefix once: a target that does not start with P
// is before or after every key, decided by one comparison; otherwise binary
// search over restart points and the scan after it compare suffixes only.
package block

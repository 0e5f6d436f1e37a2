// Package memtable is the engine's in-memory write buffer: a skiplist of
// internal keys (user key + base.Trailer) with their values, stored in one
// fixed-size arena, written by one goroutine at a time and read by any number
// of goroutines without locks.
//
// # Order
//
// Entries are ordered by base.CompareInternal: user key ascending (bytewise),
// then trailer descending, so the newest version of a user key comes first.
// An (user key, trailer) pair appears at most once.
//
// # Arena
//
// All nodes, keys and values live in a single []byte allocated up front and
// are addressed by uint32 offsets, so the Go garbage collector sees one
// pointer-free object however many entries the list holds. Offset 0 is never
// a node and means "nil". The arena only grows (a bump allocator); nothing is
// freed before the whole skiplist is dropped, which is what makes lock-free
// reads simple: a node a reader has reached stays valid for the list's life.
// Once nothing can reach a memtable any more, Recycle builds the next one
// in its arena, whose pages are then resident already.
// Because offsets are uint32, an arena holds at most 4 GiB.
//
// Each entry is one arena allocation, aligned to 8 bytes (h is the node's
// height, k and v the key and value lengths):
//
//	offset 0       8          12           16        20                 20+4h  20+4h+k
//	+--------------+----------+------------+---------+------------------+------+-------+
//	| trailer (8B) | k (4B)   | v (4B)     | h (4B)  | next[0..h) (4B)  | key  | value |
//	+--------------+----------+------------+---------+------------------+------+-------+
//
// The tower of next offsets is truncated to the node's height (1..20), so an
// average node costs 20 + 4*4/3 ≈ 25 bytes of overhead plus its key and value
// (with a 16-byte key and 8-byte value, 48 bytes for three nodes in four and
// 50 bytes on average). Keeping the tower in the arena next to the key,
// rather than in a separate slab of atomic integers, costs one allocation per
// entry, keeps a node's tower and key on the same cache lines, and needs no
// second capacity to tune. The price is that tower slots are read and
// written with sync/atomic through an unsafe.Pointer into the arena; every
// slot is 4-byte aligned because nodes are 8-byte aligned, the tower starts
// at byte 20 and the arena itself is allocated as []uint64.
//
// The head node has the maximum height and no key; it is never compared.
//
// # Concurrency
//
// Writes require external synchronization: exactly one goroutine may call Add
// at a time (the engine serializes writers). Readers (iterators, Get, Size,
// Count) need no synchronization with the writer or with each other.
//
// A node is published in two steps. First the writer fills in the whole
// node — header, key, value and every tower slot — while no other goroutine
// can reach it. Then it links the node into its predecessors' towers
// bottom-up, one atomic store per level. A reader reaches a node only through
// an atomic load of a tower slot, which orders the node's earlier plain writes
// before the reader's plain reads, so a reader never sees a partly written
// node. Linking bottom-up means that a node reachable at level i is already
// reachable at every level below it, so a search that descends never skips
// it once it has been seen.
//
// # Invariants
//
//  1. Nodes are never removed or modified after publication, except for their
//     tower slots, which only change from "next = n" to "next = x" where x is
//     a newly inserted node between the node and n.
//  2. At every level the list is sorted by internal key and free of
//     duplicates.
//  3. The list height (the highest level in use) only grows; head tower
//     slots above it are nil.
//
// # Sequential inserts
//
// BookKeeper writes entry ids in ascending order within each ledger. The
// writer keeps the splice of its previous insert (the predecessor and
// successor at every level) and, when the next key falls between the last
// inserted key and its successor, links the new node without searching from
// the head; see findSplice.
//
// # Memtable
//
// Memtable puts two skiplists in one arena: point entries (Set, Delete) and
// range tombstones (RangeDelete, whose value is the exclusive end key). They
// share one memory budget, so the flush decision sees a single size and range
// tombstones need no separate sizing.
package memtable

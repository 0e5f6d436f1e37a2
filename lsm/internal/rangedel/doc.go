// Package rangedel fragments range tombstones and answers "is this point
// entry deleted?" against them. The memtable read path, the table readers and
// the table writers (flush and compaction) share it.
//
// # Semantics
//
// A range tombstone (base.KindRangeDelete) written at sequence number T over
// the user-key range [start, end) deletes every point entry whose user key k
// satisfies start <= k < end (bytewise) and whose sequence number is below T.
// A reader at sequence number R sees only tombstones with T <= R, so a point
// entry at sequence number S is deleted for that reader exactly when some
// tombstone covering its user key has S < T <= R. A tombstone with
// start >= end deletes nothing and is dropped everywhere in this package.
//
// # Fragments
//
// Tombstones as written overlap arbitrarily. FragmentTombstones cuts them at
// every start and end key into fragments that never overlap; each fragment
// carries the sequence numbers of every tombstone that covers it, newest
// first and without duplicates:
//
//	tombstones    a------------e #9
//	                     c-----------g #5
//	                     c--d #5
//	fragments     [a,c){9} [c,e){9,5} [e,g){5}
//
// Fragments are sorted by start key, and a fragment's end is at or before the
// next fragment's start. Touching fragments with equal sequence numbers are
// merged into one, so the fragments of a given coverage are unique: "c--d #5"
// above adds nothing and leaves no trace.
//
// Because fragments are disjoint, the fragment containing a user key is found
// by one binary search, and within it the newest tombstone visible at R is
// the first sequence number <= R. Set answers Covers and MaxCoveringSeq this
// way in O(log n) without allocating; Iter walks the fragments in either
// direction.
//
// # Writing tables
//
// A table stores its tombstones already fragmented, as (start, end, seq)
// triples in (start ascending, seq descending) order: Flatten produces that
// order. A flush or compaction builds its output tombstones as
//
//	FragmentTombstones(inputs) → Elide(snapshots) → Truncate(table bounds) → Flatten
//
// Elide drops sequence numbers that no reader can tell apart. With live
// snapshots s1 < s2 < ... < sn, the sequence numbers fall into stripes
// (0, s1], (s1, s2], ..., (sn, ∞): a reader at a snapshot (or at the latest
// sequence number, above every snapshot) sees either every tombstone of a
// stripe or none of it, and within a stripe the newest tombstone deletes
// everything the older ones delete. Keeping only the newest sequence number
// per stripe therefore changes no answer for any live reader. Readers at
// other sequence numbers (which cannot exist, since every reader either holds
// a snapshot or reads the latest state) could see a difference.
//
// Truncate clips fragments to an output table's user-key bounds so that a
// table's tombstones never reach outside the keys it is responsible for. It
// cuts at user keys: the compaction must not split the versions of one user
// key across two output tables, or the clipped tombstones would be wrong for
// the half that ends up in the next table.
//
// Dropping tombstones entirely (at the bottom level, where nothing older is
// left to delete) is the compaction's decision, not this package's.
//
// # Memory
//
// FragmentTombstones copies every key it keeps into one allocation, so the
// caller may reuse the tombstones' slices afterwards. Fragments are
// immutable: Set, Iter, Flatten, Truncate and Elide alias the keys and
// sequence-number slices of the fragments they are given, and callers must
// never modify them.
package rangedel

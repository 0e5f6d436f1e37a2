// Package manifest keeps the LSM's MANIFEST and its versions: which tables
// make up each level, the counters that must survive a restart (next file
// number, last sequence number, oldest live WAL), and which table files are
// still needed.
//
// The pieces, one per file:
//
//   - TableMeta (table_meta.go): one table's file number, size, key bounds
//     and sequence-number bounds.
//   - VersionEdit (version_edit.go): one change to the state, and its
//     encoding.
//   - Version (version.go): an immutable, reference-counted snapshot of the
//     levels, with the overlap queries compaction and reads need.
//   - VersionSet (version_set.go, manifest_file.go): the manifest on disk,
//     the current version, file-number allocation and obsolete-table
//     tracking.
//   - File names (filenames.go) of everything in a database directory.
//
// # Table bounds and range tombstones
//
// A table's Smallest and Largest bound its point keys and its range
// tombstones in internal-key order (user key ascending, trailer
// descending). A tombstone [s, e) at sequence number n contributes s#n,
// RANGEDEL to the lower bound and e#MAX,RANGEDEL (RangeDeleteSentinel) to
// the upper bound. That sentinel sorts before every real key of user key e,
// so the bound is exclusive: the table holds nothing at e, and a table of
// the same level may start at e. Compactions that cut a tombstone at a table
// boundary use the same sentinel for the cut. Overlaps and the L1+
// disjointness check treat a sentinel Largest as exclusive.
//
// Tables of L1 and below must be disjoint in user keys, not merely in
// internal keys: a compaction must not split the versions of one user key
// across two output tables, so that a point lookup reads at most one table
// per level and a compaction input never needs widening to keep a user key
// whole.
//
// # Version edit encoding
//
// An edit is a sequence of fields, each a uvarint tag followed by the
// field's bytes; a field may appear in any order and the edit ends where the
// record ends. Tags (persisted: do not change them):
//
//	tag  field            bytes after the tag
//	---  ---------------  -------------------------------------------------
//	 1   LogNumber        uvarint
//	 2   NextFileNum      uvarint
//	 3   LastSeqNum       uvarint (<= 2^56-1)
//	 4   CompactPointer   uvarint level, ikey
//	 5   DeletedTable     uvarint level, uvarint file number
//	 6   NewTable         uvarint level, uvarint file number, uvarint size,
//	                      ikey smallest, ikey largest,
//	                      uvarint smallest seqnum, uvarint largest seqnum,
//	                      uvarint entries, uvarint range deletions
//
//	ikey: +-----------------------+----------------+-----------------------+
//	      | uvarint len(user key) | user key bytes | trailer (8B, LE u64)  |
//	      +-----------------------+----------------+-----------------------+
//
// Example: an edit setting LogNumber 5 and adding table 7 to L0 with keys
// a#3,SET..b#4,SET, size 100, seqnums 3-4, 2 entries:
//
//	01 05                       LogNumber = 5
//	06 00 07 64                 NewTable, level 0, file 7, size 100
//	   01 61 01 03 00 00 00 00 00 00   smallest: "a", trailer 3<<8|1
//	   01 62 01 04 00 00 00 00 00 00   largest:  "b", trailer 4<<8|1
//	   03 04 02 00              seqnums 3-4, 2 entries, 0 range deletions
//
// LogNumber, NextFileNum and LastSeqNum may appear once per edit, and a
// zero or absent value leaves the counter unchanged. CompactPointer,
// DeletedTable and NewTable repeat. Decoding is strict: an unknown tag, a
// truncated field, a level >= NumLevels, a repeated counter or a new table
// with inverted bounds is an error marked base.ErrCorruption. A new kind of
// field gets a new tag; old binaries then refuse the manifest rather than
// misread it. NewTable's layout is fixed: a table property added later
// needs a new tag (a NewTable variant), not a longer NewTable.
//
// # The manifest and CURRENT
//
// A manifest (MANIFEST-NNNNNN) is a log in the format of package record;
// each record is one encoded edit. Its first edit is a snapshot: every
// table of every level plus all counters. CURRENT holds the name of the
// live manifest and a newline.
//
// LogAndApply appends one record and syncs the manifest, then appends the
// manifest's new length to its synced-length file N.synced (package record's
// SyncedLengthWriter) and syncs that, before it installs the new version:
// when it returns nil, the edit is durable and lies below the last mark.
// When the
// manifest has grown past Options.MaxManifestSize, and at every Recover, a
// new manifest is started instead:
//
//  1. allocate a file number N; write MANIFEST-N holding a snapshot of the
//     new state and N.synced marking its length; sync both; sync the
//     directory (so that the manifest's name is durable before anything
//     points at it);
//  2. write N.tmp holding "MANIFEST-N\n"; sync it; rename it over CURRENT;
//     sync the directory: the commit point;
//  3. close and remove the old manifest and its synced-length file.
//
// A crash before the rename in step 2 becomes durable leaves CURRENT
// naming the old manifest, which holds the previous state in full; a crash
// after leaves the new one. Either way no successful LogAndApply is lost.
// Leftover manifests and temp files are removed at the next Recover.
//
// Recover replays the manifest CURRENT names. Damage at an offset below the
// last synced-length mark, or followed by valid records, is corruption and
// fails Recover with an error naming the file and offset, writing nothing.
// Damage past the mark is a torn tail (a record whose LogAndApply never
// returned) and is dropped. With no readable mark (an older database, a
// lost or damaged N.synced) a damaged tail is dropped too, but the manifest
// does not prove itself complete (RecoveryInfo.Complete): then every table
// file no recovered version references is moved to lost/ (KeepInLost)
// before the rotation, because the new manifest's mark would otherwise
// vouch for a state that may have forgotten a table. With a complete
// manifest such orphans are garbage (a flush or compaction that never
// finished) and are left for the engine to delete. Recover marks every file
// number in the directory used, then rotates, so that nothing is ever
// appended behind a torn tail and no new file takes the number of a WAL
// the manifest does not know.
//
// A failure to write the manifest leaves the file's tail unknown, and
// after a failed fsync retrying could report success for lost data, so
// the file is never written again. A failure for lack of space (ENOSPC,
// EDQUOT) is recoverable: the error matches base.ErrNoSpace and the next
// LogAndApply rotates to a new manifest (steps 1-3 above, the snapshot
// taken from memory), which is how the engine recovers once space returns.
// Any other failure is sticky: every later LogAndApply fails and the
// engine must reopen.
//
// # Versions, references and obsolete files
//
// Readers and compactions take a reference to the version they use
// (VersionSet.Current, then Version.Unref when done). The VersionSet holds
// one reference to the current version. A table is live while any version
// that holds it has references; when the last reference of a version is
// dropped, the tables it alone held become obsolete: TakeObsoleteTables
// hands them out once so the engine can delete their files, and LiveTables
// lists what must be kept (at open, any other table file is garbage unless
// the engine is writing it).
//
// File numbers come from one counter (NextFileNum). The counter is recorded
// in every edit, so recovery never reuses a number the manifest knows; the
// engine must call MarkFileNumUsed for WAL files it finds at open, whose
// numbers may postdate the last edit.
//
// # Concurrency
//
// LogAndApply calls are serialized by the caller (the engine holds its
// mutex) and by the VersionSet's own lock, which is held across manifest
// I/O. Current, Ref and Unref, LiveTables, TakeObsoleteTables and the
// counters take a separate short lock or are atomic, so readers never wait
// for an fsync. A Version is immutable once built, except for each
// TableMeta's compacting flag, which is atomic.
package manifest

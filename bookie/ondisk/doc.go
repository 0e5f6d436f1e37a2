// Package ondisk is what a bookie's directories hold, as both the live
// storage (package bookie) and its offline tools (packages check, rebuild
// and migrate) read and write it:
//
//   - the ledgers index's records (LedgerInfo, ledger_record.go) and the
//     engine options the index is opened with (ledgers_index.go);
//   - the directory layout record, current/LAYOUT (Layout, layout.go);
//   - the garbage collector's compaction marker, current/compacting
//     (compaction_marker.go);
//   - the names of a migration's files and the guard that refuses a
//     directory a migration left half switched (migration.go), and the
//     check that refuses a BookKeeper bookie's unconverted data
//     (unconverted.go);
//   - the rule that one file system holds every file of a storage
//     (UseFS, fs.go), and the engine options the offline tools open a
//     locations index with (LocationsEngineOptions).
//
// docs/format.md gives the persisted formats byte by byte; the golden
// files under testdata pin them.
package ondisk

// Package rebuild rebuilds a ledger directory's entry location index from
// its entry logs, offline (upstream's LocationsIndexRebuildOp), on a
// stopped storage.
//
// LocationsIndex moves the old index aside, scans every log in ascending
// id, sorts the records of the ledgers that exist in bounded runs
// (spilled and merged when they do not fit in memory, the copy with the
// greatest location winning), writes them as disjoint tables with
// lsm.CreateTable and ingests them into an empty index with DB.Ingest: the
// tables land in the last level as they are. Runs, tables and the new
// index go through the same file system as the logs (Options.FS). A
// missing or unreadable ledgers index fails it before anything is moved,
// unless Options.RebuildLedgersIndex rebuilds that too; a new index with
// fewer entries than the old is reported (Result.FewerEntries).
package rebuild

// Package migrate converts a stopped BookKeeper bookie's RocksDB indexes of
// one directory (read with package lsm/rocksdb) into this storage's: the
// locations as they are (the same key and value encoding), the ledgers'
// LedgerData protobuf into ledger records (package ondisk), dropping the
// locations of ledgers the ledgers database no longer holds.
//
// FromRocksDB builds the new indexes beside the old ones (X.migrating),
// verifies them, writes a marker (migrate.READY) and renames: the RocksDB
// databases become X.rocksdb-backup. A crash before the marker leaves the
// old state, after it a rerun finishes the switch (docs/migration.md).
// The storage's Open refuses a directory a migration left half switched
// (ondisk.CheckNoMigrationInProgress).
package migrate

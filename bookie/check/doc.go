// Package check checks a ledger directory offline, on a closed storage.
//
// Directory takes the indexes' locks, so it refuses a directory a running
// storage holds. It scans every entry log to its end and verifies every
// location of the entry location index, reading the record it names (the
// entry's own, checksum intact) and checking it against the ledgers index
// (its ledger exists; it is not below the floor of the ledger's current
// life). It reports records that do not decode (file and offset),
// locations that name no record of their entry or a damaged one, and
// counts. Damage where the index names a record at or after it is a
// problem (the index names only synced bytes); a damaged tail nothing
// names is what a crash during a checkpoint leaves, and only a warning, as
// is a location of a ledger the ledgers index does not hold (no read
// reaches it).
//
// LedgersIndex reads every record of a ledgers index (upstream's
// check-db-ledgers-index).
package check

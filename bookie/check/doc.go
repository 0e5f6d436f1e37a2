// Package check checks a ledger directory offline, on a closed storage:
// everything the storage reads when it opens the directory and serves
// from it, so that a directory it passes is one the storage opens and
// reads without an error or a wrong answer.
//
// Directory takes the indexes' locks, so it refuses a directory a running
// storage holds. It runs the storage's own guards (a half-done migration,
// unconverted BookKeeper data), decodes every LAYOUT copy, lastId and the
// compaction marker, verifies both indexes as `db check` does (every
// table block, filters included; WALs; manifest), scans every entry log
// to its end and compares it with its ledgers map, and verifies every
// location of the entry location index, reading the record it names (the
// entry's own, checksum intact) and checking it against the ledgers index
// (its ledger exists; it is not below the floor of the ledger's current
// life). It reports what it finds with the file and offset (and the key or
// the entry), and counts.
//
// Damage in an entry log is a problem unless a crash explains it: the
// storage appends to one log at a time and never again to a log it left,
// so only a write cut short tears a log, at its end; a log whose ledgers
// map covers the damage was written whole, and a location at or after it
// names synced bytes. A torn tail nothing names is a warning, as are a
// location of a ledger the ledgers index does not hold (no read reaches
// it) and what a crash leaves in an index. The directory list as a whole
// is the storage's matter (bookie.CheckLayout).
//
// LedgersIndex reads every record of a ledgers index (upstream's
// check-db-ledgers-index).
package check

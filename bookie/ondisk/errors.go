package ondisk

import "github.com/cockroachdb/errors"

// ErrLedgersIndexMissing: an offline tool (a rebuild, a check of the
// ledgers index) found the ledgers index missing or unreadable, and was
// not told to rebuild it.
var ErrLedgersIndexMissing = errors.New("ledgers index missing or unreadable")

// ErrMigrationInProgress: a migration from BookKeeper's RocksDB indexes
// left the directory half switched (CheckNoMigrationInProgress); the
// storage refuses it until `bookie-index migrate` finishes.
var ErrMigrationInProgress = errors.New("migration in progress")

package ondisk

import "github.com/cockroachdb/errors"

// ErrLedgersIndexMissing: an offline tool (a rebuild, a check of the
// ledgers index) found the ledgers index missing or unreadable, and was
// not told to rebuild it.
var ErrLedgersIndexMissing = errors.New("ledgers index missing or unreadable")

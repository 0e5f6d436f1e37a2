package bookie

import (
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/cockroachdb/errors"
)

// Errors. The storage's errors wrap these sentinels (errors.Wrapf), so
// that the standard library's errors.Is and cockroachdb's both match
// them (docs/design.md, "Errors"). Errors from the entry logs match entrylog.ErrBadLocation or
// entrylog.ErrCorruption.
var (
	// ErrNoEntry: the entry is not stored (upstream's NoEntryException).
	// It is entrylocation.ErrNoEntry, so an index's "no entry" matches it
	// too.
	ErrNoEntry = entrylocation.ErrNoEntry
	// ErrNoLedger: the ledger does not exist, or was deleted (upstream's
	// NoLedgerException).
	ErrNoLedger = errors.New("no ledger")
	// ErrRejected: the write cache stayed full for the whole throttle time
	// (upstream's OperationRejectedException).
	ErrRejected = errors.New("write rejected: the write cache is full")
	// ErrWrongMasterKey: SetMasterKey with a key other than the ledger's.
	ErrWrongMasterKey = errors.New("wrong master key")
	// ErrInvalidArgument: a bad argument (a negative ledger id, an entry
	// too large). It is entrylocation.ErrInvalidArgument.
	ErrInvalidArgument = entrylocation.ErrInvalidArgument
	// ErrClosed: a call on a closed storage. It is entrylocation.ErrClosed
	// (and lsm.ErrClosed), so a call racing Close fails the same way
	// whichever layer notices.
	ErrClosed = entrylocation.ErrClosed
	// ErrUnconverted: Open found a BookKeeper bookie's data not yet
	// converted (its RocksDB indexes, or its entry logs without indexes).
	// It is ondisk.ErrUnconverted.
	ErrUnconverted = ondisk.ErrUnconverted
)

// LastEntry is the entry id that GetEntry reads as "the ledger's last
// entry" (upstream's BookieProtocol.LAST_ADD_CONFIRMED).
const LastEntry = -1

// checkLedgerID rejects negative ledger ids, which the index cannot store.
// Ledger ids are 0 to MaxInt64, both included.
func checkLedgerID(ledgerID int64) error {
	if ledgerID < 0 {
		return errors.Wrapf(ErrInvalidArgument, "bookie: ledger id %d is negative (ledger ids must be >= 0)", ledgerID)
	}
	return nil
}

// checkEntryID rejects the negative entry ids of a write. Entry ids are 0
// to MaxInt64, both included; a read also takes LastEntry.
func checkEntryID(ledgerID, entryID int64) error {
	if entryID < 0 {
		return errors.Wrapf(ErrInvalidArgument, "bookie: entry id %d of ledger %d is negative (entry ids must be >= 0)", entryID, ledgerID)
	}
	return nil
}

// noEntry returns upstream's "Entry <e> not found in <l>" error.
func noEntry(ledgerID, entryID int64) error {
	return errors.Wrapf(ErrNoEntry, "bookie: Entry %d not found in %d", entryID, ledgerID)
}

// noLedger returns upstream's "Ledger <l> not found" error.
func noLedger(ledgerID int64) error {
	return errors.Wrapf(ErrNoLedger, "bookie: Ledger %d not found", ledgerID)
}

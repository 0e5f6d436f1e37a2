package entrylocation

import (
	"encoding/binary"
	"math"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// Sizes of the persisted key and value (do not change).
const (
	keySize   = 16
	valueSize = 8
)

// ErrInvalidArgument is the errors.Is target of errors caused by a bad
// argument: a negative ledger id, a zero or negative location.
//
// Errors of this package wrap their sentinel (errors.Wrapf) rather than
// mark it (errors.Mark), so that the standard library's errors.Is and
// testify's ErrorIs recognize them too, not only cockroachdb's errors.Is.
var ErrInvalidArgument = errors.New("invalid argument")

// entryKey is an encoded (ledgerId, entryId) key.
type entryKey [keySize]byte

// makeEntryKey encodes (ledgerID, entryID) as two big-endian words.
// Negative entry ids become large unsigned words, sorting after MaxInt64.
func makeEntryKey(ledgerID, entryID int64) entryKey {
	var k entryKey
	k.set(ledgerID, entryID)
	return k
}

func (k *entryKey) set(ledgerID, entryID int64) {
	binary.BigEndian.PutUint64(k[0:8], uint64(ledgerID))
	binary.BigEndian.PutUint64(k[8:16], uint64(entryID))
}

// EncodeKey returns the persisted key of (ledgerID, entryID), for tools
// and bulk loaders (the bookie's rebuild, `bookie-index db`) that read or
// write an index's DB directly.
func EncodeKey(ledgerID, entryID int64) [keySize]byte {
	return makeEntryKey(ledgerID, entryID)
}

// EncodeLocation returns the persisted value of a location.
func EncodeLocation(location int64) [valueSize]byte {
	var v [valueSize]byte
	binary.BigEndian.PutUint64(v[:], uint64(location))
	return v
}

// ledgerBounds returns the keys (L, 0) and (L, MaxInt64): the range of a
// ledger's non-negative entry ids, end exclusive, as upstream's purge and
// last-entry probe use it.
func ledgerBounds(ledgerID int64) (first, end entryKey) {
	return makeEntryKey(ledgerID, 0), makeEntryKey(ledgerID, math.MaxInt64)
}

// decodeEntryID returns the entry id of an encoded key.
func decodeEntryID(key []byte) (int64, error) {
	if len(key) != keySize {
		return 0, errors.Wrapf(lsm.ErrCorruption, "entrylocation: key of %d bytes, want %d", len(key), keySize)
	}
	return int64(binary.BigEndian.Uint64(key[8:16])), nil
}

// decodeLocation returns the location of an encoded value.
func decodeLocation(value []byte) (int64, error) {
	if len(value) != valueSize {
		return 0, errors.Wrapf(lsm.ErrCorruption, "entrylocation: location value of %d bytes, want %d", len(value), valueSize)
	}
	return int64(binary.BigEndian.Uint64(value)), nil
}

// checkLedgerID rejects negative ledger ids: their keys would sort after
// every other ledger's, and BookKeeper never creates them.
func checkLedgerID(ledgerID int64) error {
	if ledgerID < 0 {
		return errors.Wrapf(ErrInvalidArgument, "entrylocation: ledger id %d is negative (ledger ids must be >= 0)", ledgerID)
	}
	return nil
}

// checkLocation rejects the locations a write may not store: 0 means
// "absent" to readers, and a location is an unsigned log id and offset
// that never sets the sign bit.
func checkLocation(ledgerID, entryID, location int64) error {
	switch {
	case location == 0:
		return errors.Wrapf(ErrInvalidArgument, "entrylocation: location 0 for entry %d of ledger %d (0 means absent)", entryID, ledgerID)
	case location < 0:
		return errors.Wrapf(ErrInvalidArgument, "entrylocation: negative location %d for entry %d of ledger %d", location, entryID, ledgerID)
	}
	return nil
}

// checkWrite validates the arguments of a location write.
func checkWrite(ledgerID, entryID, location int64) error {
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	return checkLocation(ledgerID, entryID, location)
}

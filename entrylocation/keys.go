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
// Errors of this package wrap their sentinel (errors.Wrapf), so that the
// standard library's errors.Is matches them as cockroachdb's does
// (docs/design.md, "Errors").
var ErrInvalidArgument = errors.New("invalid argument")

// entryKey is an encoded (ledgerId, entryId) key.
type entryKey [keySize]byte

// makeEntryKey encodes (ledgerID, entryID) as two big-endian words. Ledger
// ids are >= 0 (checked by the callers); an entry id is written as its
// unsigned word, so bytewise order is numeric order for entry ids >= 0 and
// a negative entry id sorts after MaxInt64 within its ledger, as upstream.
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

// entryRange returns the keys (L, 0) and the key just after
// (L, MaxInt64): the range of every entry id of a ledger, end exclusive,
// for the last-entry probe. The end is (L, MaxInt64) with one added to
// its entry word, which cannot overflow as an unsigned word.
//
// Upstream ends the range at (L, MaxInt64) itself, exclusive, so that an
// entry with id MaxInt64 is invisible to the probe and survives its
// ledger's purge; here the maxima are ordinary ids.
func entryRange(ledgerID int64) (first, end entryKey) {
	first = makeEntryKey(ledgerID, 0)
	binary.BigEndian.PutUint64(end[0:8], uint64(ledgerID))
	binary.BigEndian.PutUint64(end[8:16], uint64(math.MaxInt64)+1)
	return first, end
}

// ledgerRange returns the keys (L, 0) and (L+1, 0): everything the
// ledger holds, end exclusive, for its purge. L+1 is computed as an
// unsigned word, so the ledger MaxInt64 ends at 0x8000000000000000, after
// every key of a valid ledger. Unlike entryRange it also covers the keys
// with negative entry ids (they sort after MaxInt64 within their ledger):
// a deleted ledger leaves nothing behind.
func ledgerRange(ledgerID int64) (first, end entryKey) {
	first = makeEntryKey(ledgerID, 0)
	binary.BigEndian.PutUint64(end[0:8], uint64(ledgerID)+1)
	return first, end
}

// LedgerEntryRange returns the bounds [lower, upper) of the keys of
// ledgerID's entries 0 to MaxInt64 (both included), for tools that scan a
// ledger's locations in an index's DB directly.
func LedgerEntryRange(ledgerID int64) (lower, upper [keySize]byte) {
	return entryRange(ledgerID)
}

// DecodeKey returns the ledger and entry ids of a persisted key, for tools
// that read an index's DB directly. A key of the wrong size is an error
// matching lsm.ErrCorruption.
func DecodeKey(key []byte) (ledgerID, entryID int64, err error) {
	if len(key) != keySize {
		return 0, 0, errors.Wrapf(lsm.ErrCorruption, "entrylocation: key of %d bytes, want %d", len(key), keySize)
	}
	return int64(binary.BigEndian.Uint64(key[0:8])), int64(binary.BigEndian.Uint64(key[8:16])), nil
}

// DecodeLocation returns the location of a persisted value, for tools. A
// value of the wrong size is an error matching lsm.ErrCorruption.
func DecodeLocation(value []byte) (int64, error) { return decodeLocation(value) }

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

// checkWrite validates the arguments of a location write. Every entry id
// is taken, negative ones included, as upstream's index takes them: a
// negative entry id is stored under its unsigned word, after MaxInt64
// within its ledger, where the last-entry probe does not look (the
// storage, package bookie, refuses negative entry ids before they reach
// the index).
func checkWrite(ledgerID, entryID, location int64) error {
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	return checkLocation(ledgerID, entryID, location)
}

package journal

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/errors"
)

// Kind says what a record is.
type Kind uint8

// Record kinds. A record is the length of its bytes followed by the bytes,
// which start with a ledger id and an entry id; a negative entry id makes
// it a meta-entry.
const (
	// KindEntry is an entry as the client sent it: ledger id, entry id,
	// then the rest (the client's last-add-confirmed, length, digest and
	// data), which this package calls the payload.
	KindEntry Kind = iota + 1
	// KindMasterKey is a ledger's master key (MetaEntryMasterKey).
	KindMasterKey
	// KindFence says the ledger was fenced (MetaEntryFence).
	KindFence
	// KindExplicitLAC is a ledger's explicit LAC (MetaEntryExplicitLAC).
	KindExplicitLAC
	// KindUnknownMeta is a meta-entry id this version does not know, as a
	// newer writer might leave; upstream skips it with a warning.
	KindUnknownMeta
)

var kindNames = [...]string{"", "entry", "master-key", "fence", "explicit-lac", "unknown-meta"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Record is one record of a journal, as Replay delivers it.
type Record struct {
	Kind Kind
	// LedgerID is the record's ledger.
	LedgerID int64
	// EntryID is the entry's id, or the meta-entry id (negative).
	EntryID int64
	// Payload is, for an entry, the bytes after the ledger and entry ids
	// (what bookie.Storage.AddEntry stores); for a master key, the key;
	// for an explicit LAC, the LAC bytes as the client sent them; for a
	// fence, nil; for an unknown meta-entry, the bytes after the ids. It
	// is valid only until the callback returns.
	Payload []byte
	// Version is the format version of the record's file.
	Version int
	// Pos is the position of the record's length field, and End the
	// position just past the record.
	Pos, End LogMark
}

// recordSize returns the size of a record's bytes (without the length
// field) for an entry of the given payload.
func entryRecordSize(payload int) int { return recordIDsSize + payload }

// appendLength appends a record's length field.
func appendLength(dst []byte, n int) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

// appendID appends a ledger or entry id, a big-endian signed 64-bit word.
func appendID(dst []byte, id int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(id))
}

// appendEntryRecord appends an entry record: the length, the ledger id,
// the entry id, the payload.
func appendEntryRecord(dst []byte, ledgerID, entryID int64, payload []byte) []byte {
	dst = appendLength(dst, entryRecordSize(len(payload)))
	dst = appendID(dst, ledgerID)
	dst = appendID(dst, entryID)
	return append(dst, payload...)
}

// appendMetaBlobRecord appends a meta-entry that carries a length-prefixed
// blob: a master key or an explicit LAC.
func appendMetaBlobRecord(dst []byte, ledgerID, metaID int64, blob []byte) []byte {
	dst = appendLength(dst, recordIDsSize+4+len(blob))
	dst = appendID(dst, ledgerID)
	dst = appendID(dst, metaID)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(blob)))
	return append(dst, blob...)
}

// appendMasterKeyRecord appends a master-key meta-entry.
func appendMasterKeyRecord(dst []byte, ledgerID int64, key []byte) []byte {
	return appendMetaBlobRecord(dst, ledgerID, MetaEntryMasterKey, key)
}

// appendExplicitLACRecord appends an explicit-LAC meta-entry.
func appendExplicitLACRecord(dst []byte, ledgerID int64, lac []byte) []byte {
	return appendMetaBlobRecord(dst, ledgerID, MetaEntryExplicitLAC, lac)
}

// appendFenceRecord appends a fence meta-entry: the ids alone.
func appendFenceRecord(dst []byte, ledgerID int64) []byte {
	dst = appendLength(dst, recordIDsSize)
	dst = appendID(dst, ledgerID)
	return appendID(dst, MetaEntryFence)
}

// decodeRecord decodes a record's bytes (after the length field) from a
// file of the given version into rec's Kind, ids and Payload. Errors
// describe what is wrong; the caller adds the file and the offset.
//
// Upstream's rules: a master key needs V3, a fence V4, an explicit LAC V6,
// else the journal is invalid; an unknown negative entry id is skipped.
// Bytes after a meta-entry's blob are ignored, as upstream does.
func decodeRecord(b []byte, version int, rec *Record) error {
	if len(b) < recordIDsSize {
		return errors.Newf("a %d-byte record, shorter than its ledger and entry ids (16 bytes)", len(b))
	}
	rec.LedgerID = int64(binary.BigEndian.Uint64(b[0:8]))
	rec.EntryID = int64(binary.BigEndian.Uint64(b[8:16]))
	rest := b[recordIDsSize:]
	if rec.EntryID >= 0 {
		rec.Kind, rec.Payload = KindEntry, rest
		return nil
	}
	need := func(kind Kind, minVersion int) error {
		if version < minVersion {
			return errors.Newf("the %s meta-entry of ledger %d in a version-%d journal (it needs version %d)",
				kind, rec.LedgerID, version, minVersion)
		}
		return nil
	}
	blob := func(kind Kind) ([]byte, error) {
		if len(rest) < 4 {
			return nil, errors.Newf("the %s meta-entry of ledger %d without its length", kind, rec.LedgerID)
		}
		n := binary.BigEndian.Uint32(rest[:4])
		if int64(n) > int64(len(rest)-4) {
			return nil, errors.Newf("the %s meta-entry of ledger %d declares %d bytes, the record holds %d",
				kind, rec.LedgerID, int32(n), len(rest)-4)
		}
		return rest[4 : 4+n], nil
	}
	var err error
	switch rec.EntryID {
	case MetaEntryMasterKey:
		rec.Kind = KindMasterKey
		if err = need(KindMasterKey, V3); err == nil {
			rec.Payload, err = blob(KindMasterKey)
		}
	case MetaEntryFence:
		rec.Kind, rec.Payload = KindFence, nil
		err = need(KindFence, V4)
	case MetaEntryExplicitLAC:
		rec.Kind = KindExplicitLAC
		if err = need(KindExplicitLAC, V6); err == nil {
			rec.Payload, err = blob(KindExplicitLAC)
		}
	default:
		rec.Kind, rec.Payload = KindUnknownMeta, rest
	}
	return err
}

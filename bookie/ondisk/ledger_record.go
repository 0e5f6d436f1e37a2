package ondisk

import (
	"encoding/binary"
	"slices"

	"github.com/cockroachdb/errors"
)

// LedgerInfo is what the ledgers index records of a ledger (upstream's
// LedgerData, plus the state of its deletion).
type LedgerInfo struct {
	// Exists is false for a deleted ledger whose locations are not yet
	// purged; its record goes once they are.
	Exists bool
	// Fenced is set by the storage's SetFenced.
	Fenced bool
	// MasterKey is the ledger's master key; empty until SetMasterKey.
	MasterKey []byte
	// ExplicitLAC is the last explicit LAC the ledger received, opaque;
	// nil if none.
	ExplicitLAC []byte
	// PurgePending says the ledger was deleted and the index still holds
	// locations of its entries from before: they are purged at the next
	// purge. A ledger written again after it was deleted exists and has
	// PurgePending set until then.
	PurgePending bool
	// Floor is the entry-log position at which the ledger's current life
	// began: a ledger deleted and written again keeps older copies of its
	// entries in the entry logs, and a rebuild of the index ignores the
	// ones below Floor. 0 for a ledger never deleted.
	Floor int64
}

// Clone returns a copy of i that shares no bytes with it.
func (i *LedgerInfo) Clone() LedgerInfo {
	c := *i
	c.MasterKey = slices.Clone(i.MasterKey)
	c.ExplicitLAC = slices.Clone(i.ExplicitLAC)
	return c
}

// Record layout of the ledgers index (persisted, do not change):
//
//	key:   +--------------------+
//	       | ledgerId (BE int64)|
//	       +--------------------+
//	value: +---------+-------+--------------+-------------+-----------+--------------+-------------+
//	       | version | flags | floor (BE64) | keyLen      | masterKey | lacLen       | explicitLAC |
//	       | 1 byte  | 1 byte| 8 bytes      | uvarint     |           | uvarint      |             |
//	       +---------+-------+--------------+-------------+-----------+--------------+-------------+
//
// flags: bit 0 exists, bit 1 fenced, bit 2 purge pending, bit 3 has an
// explicit LAC (which may be empty). Upstream stores a protobuf
// LedgerData; the engine's blocks carry the checksums.
const (
	ledgerRecordVersion = 1
	flagExists          = 1 << 0
	flagFenced          = 1 << 1
	flagPurgePending    = 1 << 2
	flagHasLAC          = 1 << 3
	knownFlags          = flagExists | flagFenced | flagPurgePending | flagHasLAC
	// LedgerKeySize is the size of a ledgers index key.
	LedgerKeySize = 8
)

// LedgerKey returns the ledgers index key of a ledger.
func LedgerKey(ledgerID int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, LedgerKeySize), uint64(ledgerID))
}

// DecodeLedgerKey returns the ledger id of a ledgers index key.
func DecodeLedgerKey(k []byte) (int64, error) {
	if len(k) != LedgerKeySize {
		return 0, errors.Newf("bookie: ledgers index key of %d bytes, want %d", len(k), LedgerKeySize)
	}
	id := int64(binary.BigEndian.Uint64(k))
	if id < 0 {
		return 0, errors.Newf("bookie: ledgers index key holds negative ledger id %d", id)
	}
	return id, nil
}

// EncodeLedgerInfo returns the ledgers index value of a ledger's record.
func EncodeLedgerInfo(i *LedgerInfo) []byte {
	var flags byte
	if i.Exists {
		flags |= flagExists
	}
	if i.Fenced {
		flags |= flagFenced
	}
	if i.PurgePending {
		flags |= flagPurgePending
	}
	if i.ExplicitLAC != nil {
		flags |= flagHasLAC
	}
	b := make([]byte, 0, 10+2*binary.MaxVarintLen64+len(i.MasterKey)+len(i.ExplicitLAC))
	b = append(b, ledgerRecordVersion, flags)
	b = binary.BigEndian.AppendUint64(b, uint64(i.Floor))
	b = binary.AppendUvarint(b, uint64(len(i.MasterKey)))
	b = append(b, i.MasterKey...)
	b = binary.AppendUvarint(b, uint64(len(i.ExplicitLAC)))
	return append(b, i.ExplicitLAC...)
}

// DecodeLedgerInfo decodes a ledgers index value; its errors say what is
// wrong.
func DecodeLedgerInfo(b []byte) (LedgerInfo, error) {
	var i LedgerInfo
	if len(b) < 10 {
		return i, errors.Newf("bookie: ledger record of %d bytes, too short", len(b))
	}
	if b[0] != ledgerRecordVersion {
		return i, errors.Newf("bookie: ledger record version %d, this build reads %d", b[0], ledgerRecordVersion)
	}
	flags := b[1]
	if flags&^knownFlags != 0 {
		return i, errors.Newf("bookie: ledger record has unknown flags %#x", flags)
	}
	i.Exists = flags&flagExists != 0
	i.Fenced = flags&flagFenced != 0
	i.PurgePending = flags&flagPurgePending != 0
	i.Floor = int64(binary.BigEndian.Uint64(b[2:10]))
	rest := b[10:]
	field := func(name string) ([]byte, error) {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, errors.Newf("bookie: ledger record: bad %s length", name)
		}
		v := rest[k : k+int(n)]
		rest = rest[k+int(n):]
		return v, nil
	}
	key, err := field("master key")
	if err != nil {
		return i, err
	}
	lac, err := field("explicit LAC")
	if err != nil {
		return i, err
	}
	if len(rest) != 0 {
		return i, errors.Newf("bookie: ledger record: %d trailing bytes", len(rest))
	}
	if len(key) > 0 {
		i.MasterKey = slices.Clone(key)
	}
	if flags&flagHasLAC != 0 {
		i.ExplicitLAC = append([]byte{}, lac...)
	}
	return i, nil
}

package base

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// Kind says what an internal key records. The numeric values are persisted in
// WAL batches and tables: do not change them.
type Kind uint8

const (
	// KindDelete is a point tombstone.
	KindDelete Kind = 0
	// KindSet is a key with a value.
	KindSet Kind = 1
	// KindRangeDelete is a range tombstone: the key is the inclusive start,
	// the value the exclusive end of the deleted user-key range.
	KindRangeDelete Kind = 2
	// KindMerge is a merge operand: the value is combined with the older
	// versions of the key by the DB's merge operator when it is read.
	KindMerge Kind = 3

	// KindMax is the largest kind byte. A seek key built with KindMax sorts
	// before every entry of the same user key and sequence number.
	KindMax Kind = 0xFF
)

// String names the kind for tools and error messages.
func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "DEL"
	case KindSet:
		return "SET"
	case KindRangeDelete:
		return "RANGEDEL"
	case KindMerge:
		return "MERGE"
	}
	return "UNKNOWN"
}

// SeqNum orders writes: a larger sequence number is newer. Only the low 56
// bits are usable because the trailer packs the kind into the low byte.
type SeqNum uint64

// SeqNumMax is the largest sequence number; reading at SeqNumMax sees
// everything.
const SeqNumMax SeqNum = 1<<56 - 1

// Trailer packs a sequence number and a kind: seq<<8 | kind. Among entries of
// one user key, a larger trailer sorts first (newest first).
type Trailer uint64

// MakeTrailer packs seq and kind.
func MakeTrailer(seq SeqNum, kind Kind) Trailer { return Trailer(uint64(seq)<<8 | uint64(kind)) }

// SeqNum returns the sequence number of the trailer.
func (t Trailer) SeqNum() SeqNum { return SeqNum(t >> 8) }

// Kind returns the kind of the trailer.
func (t Trailer) Kind() Kind { return Kind(t & 0xFF) }

// ParseTrailer reads a trailer written KIND.seqnum ("SET.5", "DEL.0"), the
// way testdata scripts and tools spell one.
func ParseTrailer(s string) (Trailer, error) {
	kindName, seqText, ok := strings.Cut(s, ".")
	if !ok {
		return 0, errors.Newf("trailer %q: want KIND.seqnum", s)
	}
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if err != nil || seq > uint64(SeqNumMax) {
		return 0, errors.Newf("trailer %q: bad sequence number", s)
	}
	for _, k := range []Kind{KindDelete, KindSet, KindRangeDelete, KindMerge} {
		if k.String() == kindName {
			return MakeTrailer(SeqNum(seq), k), nil
		}
	}
	return 0, errors.Newf("trailer %q: unknown kind", s)
}

// SeekTrailer is the trailer of a seek key that positions at the newest
// entry of a user key visible at seq.
func SeekTrailer(seq SeqNum) Trailer { return MakeTrailer(seq, KindMax) }

// InternalKey is a user key with its trailer. Internal keys order by user key
// ascending (bytewise), then by trailer descending.
type InternalKey struct {
	UserKey []byte
	Trailer Trailer
}

// MakeInternalKey builds an internal key.
func MakeInternalKey(userKey []byte, seq SeqNum, kind Kind) InternalKey {
	return InternalKey{UserKey: userKey, Trailer: MakeTrailer(seq, kind)}
}

// SeqNum returns the key's sequence number.
func (k InternalKey) SeqNum() SeqNum { return k.Trailer.SeqNum() }

// Kind returns the key's kind.
func (k InternalKey) Kind() Kind { return k.Trailer.Kind() }

// Clone returns a copy that does not share the user key's memory.
func (k InternalKey) Clone() InternalKey {
	return InternalKey{UserKey: append([]byte(nil), k.UserKey...), Trailer: k.Trailer}
}

// CompareInternal orders internal keys given as parts: user key ascending,
// then trailer descending. It is the only internal-key order in the engine.
func CompareInternal(aUser []byte, aTrailer Trailer, bUser []byte, bTrailer Trailer) int {
	if c := bytes.Compare(aUser, bUser); c != 0 {
		return c
	}
	return CompareTrailers(aTrailer, bTrailer)
}

// CompareTrailers orders trailers of equal user keys: larger (newer) first.
func CompareTrailers(a, b Trailer) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Compare orders two internal keys.
func (k InternalKey) Compare(o InternalKey) int {
	return CompareInternal(k.UserKey, k.Trailer, o.UserKey, o.Trailer)
}

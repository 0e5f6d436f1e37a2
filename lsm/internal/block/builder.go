package block

import (
	"encoding/binary"
	"math/bits"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Builder accumulates entries, in increasing internal-key order, into one
// block. Calls must follow: (Add* Finish Reset)*.
type Builder struct {
	restartInterval int
	commonPrefix    bool
	// ShareValuePrefixes stores each value's leading bytes shared with the
	// previous entry's value once (set it before the first Add). Data
	// blocks of the entry-location workload hold increasing locations, whose
	// high bytes repeat.
	ShareValuePrefixes bool
	// CompactEntries (with ShareValuePrefixes) writes an entry that differs
	// from the previous one only in the last few bytes of its key and value
	// as a single header byte plus those bytes: same key and value lengths,
	// same trailer, at most 7 new key bytes and 15 new value bytes. A
	// bottom-level entry-location entry then takes 4–5 bytes instead of 8–9.
	CompactEntries bool
	lastValue      []byte
	lastTrailer    base.Trailer

	buf      []byte   // entries encoded without prefix stripping
	restarts []uint32 // offsets in buf of restart entries
	counter  int      // entries since the last restart
	firstKey []byte
	lastKey  []byte
	// prefixLen is the length of the user-key prefix every entry shares:
	// the keys are sorted, so it is the shortest prefix two consecutive
	// keys share, kept as entries are added.
	prefixLen int
	entries   int
	out       []byte // Finish's result, reused

	newRestarts []uint32 // Finish's scratch, reused
}

// NewBuilder returns a builder that puts a restart point every
// restartInterval entries (>= 1) and, when commonPrefix is set, stores the
// common user-key prefix of the block once.
func NewBuilder(restartInterval int, commonPrefix bool) *Builder {
	if restartInterval < 1 {
		restartInterval = 1
	}
	return &Builder{restartInterval: restartInterval, commonPrefix: commonPrefix}
}

// Reset empties the builder for the next block.
func (b *Builder) Reset() {
	b.buf = b.buf[:0]
	b.restarts = b.restarts[:0]
	b.counter = 0
	b.firstKey = b.firstKey[:0]
	b.lastKey = b.lastKey[:0]
	b.lastValue = b.lastValue[:0]
	b.prefixLen = 0
	b.entries = 0
}

// Empty reports whether no entry was added since the last Reset.
func (b *Builder) Empty() bool { return b.entries == 0 }

// Entries returns the number of entries added since the last Reset.
func (b *Builder) Entries() int { return b.entries }

// LastUserKey returns the user key of the last entry added.
func (b *Builder) LastUserKey() []byte { return b.lastKey }

// PrefixLen returns the length of the user-key prefix shared by every entry
// added so far (what Finish stores once when the common prefix is on).
func (b *Builder) PrefixLen() int { return b.prefixLen }

// PrefixLenWith returns what PrefixLen would become if userKey, which sorts
// after every key added, were added.
func (b *Builder) PrefixLenWith(userKey []byte) int {
	if b.entries == 0 {
		return len(userKey)
	}
	return min(b.prefixLen, sharedPrefixLen(b.lastKey, userKey))
}

// EstimatedSize is the size of the block if finished now, without prefix
// stripping (which only makes it smaller).
func (b *Builder) EstimatedSize() int {
	return len(b.buf) + 4*len(b.restarts) + 4
}

// EncodedSize is the block's size if finished now, with the common prefix
// stored once instead of at every restart point (up to a byte per restart
// of varint-length difference). Blocks are cut on this size, so a block
// whose keys share a long prefix holds more entries.
func (b *Builder) EncodedSize() int {
	size := b.EstimatedSize()
	if b.commonPrefix && b.entries > 0 {
		p := b.PrefixLen()
		size += p - p*len(b.restarts)
	}
	return size
}

// Add appends an entry. The caller guarantees increasing internal order.
func (b *Builder) Add(userKey []byte, trailer base.Trailer, value []byte) {
	b.AddShared(userKey, sharedPrefixLen(b.lastKey, userKey), trailer, value)
}

// AddShared is Add for a caller that knows the length of the prefix
// userKey shares with the last key added (SharedPrefixLen of the two; any
// value when the block is empty).
func (b *Builder) AddShared(userKey []byte, sharedWithLast int, trailer base.Trailer, value []byte) {
	if b.entries == 0 {
		b.prefixLen = len(userKey)
	} else {
		if base.InvariantsEnabled && sharedWithLast != sharedPrefixLen(b.lastKey, userKey) {
			panic(errors.AssertionFailedf("block: AddShared(%q) with %d shared bytes; the last key %q shares %d",
				userKey, sharedWithLast, b.lastKey, sharedPrefixLen(b.lastKey, userKey)))
		}
		b.prefixLen = min(b.prefixLen, sharedWithLast)
	}
	shared, vshared := 0, 0
	if b.counter < b.restartInterval && b.entries > 0 {
		shared = sharedWithLast
		if b.ShareValuePrefixes {
			vshared = sharedPrefixLen(b.lastValue, value)
		}
	} else {
		// A restart entry stands alone: nothing shared with the previous.
		b.restarts = append(b.restarts, uint32(len(b.buf)))
		b.counter = 0
	}
	if b.CompactEntries && b.ShareValuePrefixes {
		if b.counter > 0 && len(userKey) == len(b.lastKey) && len(value) == len(b.lastValue) && trailer == b.lastTrailer &&
			len(userKey)-shared <= maxCompactKeyBytes && len(value)-vshared <= maxCompactValueBytes {
			ku, vu := len(userKey)-shared, len(value)-vshared
			b.buf = append(b.buf, compactEntryBit|byte(vu)<<3|byte(ku))
			b.buf = append(b.buf, userKey[shared:]...)
			b.buf = append(b.buf, value[vshared:]...)
			b.finishAdd(userKey, trailer, value)
			return
		}
		// A full entry's first byte (the shared count's varint) must stay
		// below compactEntryBit: share at most 127 bytes.
		shared = min(shared, maxFullEntryShared)
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(userKey)-shared))
	if b.ShareValuePrefixes {
		b.buf = binary.AppendUvarint(b.buf, uint64(vshared))
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(len(value)-vshared))
	b.buf = binary.AppendUvarint(b.buf, uint64(trailer))
	b.buf = append(b.buf, userKey[shared:]...)
	b.buf = append(b.buf, value[vshared:]...)
	b.finishAdd(userKey, trailer, value)
}

// finishAdd records the entry just encoded as the previous entry.
func (b *Builder) finishAdd(userKey []byte, trailer base.Trailer, value []byte) {
	if b.ShareValuePrefixes {
		b.lastValue = append(b.lastValue[:0], value...)
	}
	b.lastTrailer = trailer
	if b.entries == 0 {
		b.firstKey = append(b.firstKey[:0], userKey...)
	}
	b.lastKey = append(b.lastKey[:0], userKey...)
	b.counter++
	b.entries++
}

// Finish returns the encoded block. The slice is owned by the builder and
// valid until the next Finish.
func (b *Builder) Finish() []byte {
	if b.entries == 0 {
		b.out = binary.LittleEndian.AppendUint32(b.out[:0], 0)
		return b.out
	}
	prefixLen := 0
	if b.commonPrefix {
		prefixLen = b.prefixLen
	}
	out := append(b.out[:0], b.firstKey[:prefixLen]...)
	newRestarts := b.newRestarts[:0]
	for i, start := range b.restarts {
		end := len(b.buf)
		if i+1 < len(b.restarts) {
			end = int(b.restarts[i+1])
		}
		newRestarts = append(newRestarts, uint32(len(out)))
		// Rewrite the restart entry with the prefix stripped; the entries
		// after it in its interval are copied verbatim (their shared counts
		// are relative to full keys and stay valid).
		off := int(start)
		_, n := binary.Uvarint(b.buf[off:]) // shared = 0
		off += n
		unshared, n := binary.Uvarint(b.buf[off:])
		off += n
		if b.ShareValuePrefixes {
			_, n = binary.Uvarint(b.buf[off:]) // value shared = 0
			off += n
		}
		valueLen, n := binary.Uvarint(b.buf[off:])
		off += n
		trailer, n := binary.Uvarint(b.buf[off:])
		off += n
		key := b.buf[off : off+int(unshared)]
		off += int(unshared)
		value := b.buf[off : off+int(valueLen)]
		off += int(valueLen)
		out = binary.AppendUvarint(out, 0)
		out = binary.AppendUvarint(out, uint64(len(key)-prefixLen))
		if b.ShareValuePrefixes {
			out = binary.AppendUvarint(out, 0)
		}
		out = binary.AppendUvarint(out, valueLen)
		out = binary.AppendUvarint(out, trailer)
		out = append(out, key[prefixLen:]...)
		out = append(out, value...)
		out = append(out, b.buf[off:end]...)
	}
	count := uint32(len(newRestarts))
	if len(out) <= 0xffff {
		// Every offset fits in 16 bits: half the restart array.
		for _, r := range newRestarts {
			out = binary.LittleEndian.AppendUint16(out, uint16(r))
		}
		count |= shortRestartsFlag
	} else {
		for _, r := range newRestarts {
			out = binary.LittleEndian.AppendUint32(out, r)
		}
	}
	if b.ShareValuePrefixes {
		count |= valuePrefixFlag
		if b.CompactEntries {
			count |= compactEntriesFlag
		}
	}
	out = binary.LittleEndian.AppendUint32(out, count)
	b.out = out
	b.newRestarts = newRestarts
	return out
}

// SharedPrefixLen returns the length of the longest common prefix of a and b.
func SharedPrefixLen(a, b []byte) int { return sharedPrefixLen(a, b) }

func sharedPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		// Little-endian loads: the first differing byte is the lowest
		// set byte of the XOR.
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

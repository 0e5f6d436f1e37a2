package block

import (
	"bytes"
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// Iter reads one block. The zero value is unusable; call Init. An Iter can
// be re-initialized on another block without allocating once its key buffer
// has grown. Positioning methods return whether the iterator is valid.
//
// Iter never panics on malformed input: a malformed entry makes it invalid
// and Error returns an error marked base.ErrCorruption.
type Iter struct {
	data        []byte
	restartsOff int // offset of the restart array, the end of the entries
	numRestarts int
	// shareValues: entries carry a shared-value-prefix field and values
	// are rebuilt in valueBuf (the block's restart count has the flag).
	shareValues bool
	// compact: the block may hold compact entries (compactEntriesFlag).
	compact  bool
	valueBuf []byte
	// restartWidth is 2 or 4: the size of a restart offset.
	restartWidth int
	prefixLen    int

	offset     int // offset of the current entry
	nextOffset int // offset of the entry after it
	valid      bool
	key        []byte // full user key of the current entry
	trailer    base.Trailer
	value      []byte
	err        error

	savedKey   []byte // SeekLT's and Last's scratch
	savedValue []byte

	// restartStride, when above zero, is the number of entries between
	// restart points, a hint for searchRestarts (see SetRestartStride).
	restartStride uint64
	// probes counts the restart keys searches read (for tests).
	probes int

	// prevSame says, right after SeekLT or Last, whether the entry before
	// the current one holds the same user key (see PrevKeyDiffers);
	// every decode resets it to prevUnknown.
	prevSame int8
}

// Values of Iter.prevSame.
const (
	prevUnknown int8 = iota
	prevSameKey
	prevOtherKey
)

// PrevKeyDiffers reports, right after SeekLT or Last, that the entry
// before the current one is in this block and holds another user key: the
// current entry is then the only version of its key up to here. False when
// that is not known (the current entry starts a restart interval, or the
// iterator moved since).
func (it *Iter) PrevKeyDiffers() bool { return it.valid && it.prevSame == prevOtherKey }

func sameKey(a, b []byte) int8 {
	if bytes.Equal(a, b) {
		return prevSameKey
	}
	return prevOtherKey
}

// Flags in the high bits of a block's restart count. Persisted: do not
// change.
const (
	// valuePrefixFlag: entries share value prefixes.
	valuePrefixFlag = 1 << 31
	// shortRestartsFlag: restart offsets are uint16 (the block's entries
	// end below 64 KiB).
	shortRestartsFlag = 1 << 30
	// compactEntriesFlag (only with valuePrefixFlag): an entry whose first
	// byte has compactEntryBit set is a compact entry (see Builder).
	compactEntriesFlag = 1 << 29
	restartFlags       = valuePrefixFlag | shortRestartsFlag | compactEntriesFlag
)

// Compact entries: one header byte 1vvvvkkk, then k key bytes and v value
// bytes replacing the last k bytes of the previous key and the last v bytes
// of the previous value; the trailer is the previous entry's. Full entries
// in such blocks share at most 127 key bytes, so their first byte (the
// shared count's varint) is below 0x80. Persisted: do not change.
const (
	compactEntryBit      = 0x80
	maxCompactKeyBytes   = 7
	maxCompactValueBytes = 15
	maxFullEntryShared   = 0x7f
)

// Init positions nothing; it checks the block's frame (restart count, the
// restart array's bounds and the common-prefix length) in O(1).
func (it *Iter) Init(data []byte) error {
	it.data = data
	it.valid = false
	it.err = nil
	it.numRestarts = 0
	it.restartsOff = 0
	it.prefixLen = 0
	it.shareValues = false
	it.compact = false
	it.restartStride = 0
	if len(data) < 4 {
		return it.fail("block of %d bytes is shorter than its restart count", len(data))
	}
	r := binary.LittleEndian.Uint32(data[len(data)-4:])
	it.shareValues = r&valuePrefixFlag != 0
	it.compact = it.shareValues && r&compactEntriesFlag != 0
	if r&compactEntriesFlag != 0 && !it.shareValues {
		return it.fail("block claims compact entries without shared value prefixes")
	}
	it.restartWidth = 4
	if r&shortRestartsFlag != 0 {
		it.restartWidth = 2
	}
	r &^= restartFlags
	if uint64(r) > uint64(len(data)-4)/uint64(it.restartWidth) {
		return it.fail("block of %d bytes claims %d restart points", len(data), r)
	}
	it.numRestarts = int(r)
	it.restartsOff = len(data) - 4 - it.restartWidth*int(r)
	if r == 0 {
		if it.restartsOff != 0 {
			return it.fail("block with no restart points holds %d bytes of entries", it.restartsOff)
		}
		return nil
	}
	p := it.restart(0)
	if p >= it.restartsOff {
		return it.fail("common prefix of %d bytes leaves no room for entries (%d bytes)", p, it.restartsOff)
	}
	it.prefixLen = p
	return nil
}

// Validate checks the whole block: its frame, that restart offsets increase,
// and that every entry decodes in increasing internal-key order. It is the
// slow, thorough check used by verification tools and fuzzing.
func Validate(data []byte) error {
	var it Iter
	if err := it.Init(data); err != nil {
		return err
	}
	prev := -1
	for i := 0; i < it.numRestarts; i++ {
		r := it.restart(i)
		if r <= prev || r >= it.restartsOff {
			return it.fail("restart point %d at offset %d is out of order or out of bounds", i, r)
		}
		prev = r
	}
	var prevKey []byte
	var prevTrailer base.Trailer
	n := 0
	ri := 0
	for ok := it.First(); ok; ok = it.Next() {
		if ri < it.numRestarts && it.offset == it.restart(ri) {
			if it.compact && it.data[it.offset]&compactEntryBit != 0 {
				return it.fail("restart point %d at offset %d holds a compact entry", ri, it.offset)
			}
			ri++
		} else if ri == 0 {
			return it.fail("first entry is not a restart point")
		}
		if n > 0 && base.CompareInternal(prevKey, prevTrailer, it.key, it.trailer) >= 0 {
			return it.fail("entry %d at offset %d is not after its predecessor", n, it.offset)
		}
		if len(it.key) < it.prefixLen || !bytes.Equal(it.key[:it.prefixLen], it.data[:it.prefixLen]) {
			return it.fail("entry %d does not carry the block's common prefix", n)
		}
		prevKey = append(prevKey[:0], it.key...)
		prevTrailer = it.trailer
		n++
	}
	if it.err != nil {
		return it.err
	}
	if ri != it.numRestarts {
		return it.fail("%d restart points do not start entries", it.numRestarts-ri)
	}
	return nil
}

// SetRestartStride tells the seeks of the block just Init-ed that its
// restart points are n entries apart (the writer's restart interval; 0:
// unknown). It is a hint: where a probed restart key and the target differ
// only in their last 8 bytes, read as a big-endian number — for
// entry-location keys, the same ledger — the search assumes those numbers
// count up by one per entry and jumps to the restart point that would
// hold the target. Keys that are not dense only cost extra probes.
func (it *Iter) SetRestartStride(n int) {
	if n > 0 {
		it.restartStride = uint64(n)
	}
}

func (it *Iter) fail(format string, args ...interface{}) error {
	it.valid = false
	it.err = base.CorruptionErrorf("block: "+format, args...)
	return it.err
}

func (it *Iter) restart(i int) int {
	if it.restartWidth == 2 {
		return int(binary.LittleEndian.Uint16(it.data[it.restartsOff+2*i:]))
	}
	return int(binary.LittleEndian.Uint32(it.data[it.restartsOff+4*i:]))
}

// Valid reports whether the iterator is at an entry.
func (it *Iter) Valid() bool { return it.valid }

// Error returns the corruption that stopped the iterator, if any.
func (it *Iter) Error() error { return it.err }

// UserKey returns the current user key; valid until the iterator moves.
func (it *Iter) UserKey() []byte { return it.key }

// Trailer returns the current entry's trailer.
func (it *Iter) Trailer() base.Trailer { return it.trailer }

// Value returns the current value, a slice of the block.
func (it *Iter) Value() []byte { return it.value }

// Offset returns the current entry's offset in the block (for tools).
func (it *Iter) Offset() int { return it.offset }

// CommonPrefix returns the block's stored common prefix.
func (it *Iter) CommonPrefix() []byte { return it.data[:it.prefixLen] }

// NumRestarts returns the number of restart points.
func (it *Iter) NumRestarts() int { return it.numRestarts }

// uvarint decodes a varint at data[off:]; n <= 0 means malformed. The
// one-byte case, nearly every header field, is small enough to inline.
func uvarint(data []byte, off int) (uint64, int) {
	if uint(off) < uint(len(data)) && data[off] < 0x80 {
		return uint64(data[off]), 1
	}
	return uvarintSlow(data, off)
}

func uvarintSlow(data []byte, off int) (uint64, int) {
	if off < 0 || off >= len(data) {
		return 0, 0
	}
	return binary.Uvarint(data[off:])
}

// header decodes an entry's four varint header fields at off: shared,
// unshared, valueLen, trailer; p is where the key bytes start. ok is false
// on malformed data. The common case, four one-byte varints, takes one
// bounds check and no calls.
func header(data []byte, off int) (shared, unshared, valueLen, trailer uint64, p int, ok bool) {
	if off >= 0 && off+4 <= len(data) {
		h := data[off : off+4]
		if (h[0]|h[1]|h[2]|h[3])&0x80 == 0 {
			return uint64(h[0]), uint64(h[1]), uint64(h[2]), uint64(h[3]), off + 4, true
		}
	}
	return headerSlow(data, off)
}

// header5 decodes the five header fields of an entry of a block whose
// values share prefixes: shared, unshared, valueShared, valueUnshared,
// trailer.
func header5(data []byte, off int) (shared, unshared, vshared, vlen, trailer uint64, p int, ok bool) {
	if off >= 0 && off+5 <= len(data) {
		h := data[off : off+5]
		if (h[0]|h[1]|h[2]|h[3]|h[4])&0x80 == 0 {
			return uint64(h[0]), uint64(h[1]), uint64(h[2]), uint64(h[3]), uint64(h[4]), off + 5, true
		}
	}
	var f [5]uint64
	p = off
	for i := range f {
		v, n := uvarint(data, p)
		if n <= 0 {
			return 0, 0, 0, 0, 0, 0, false
		}
		f[i] = v
		p += n
	}
	return f[0], f[1], f[2], f[3], f[4], p, true
}

func headerSlow(data []byte, off int) (shared, unshared, valueLen, trailer uint64, p int, ok bool) {
	var fields [4]uint64
	p = off
	for i := range fields {
		v, n := uvarint(data, p)
		if n <= 0 {
			return 0, 0, 0, 0, 0, false
		}
		fields[i] = v
		p += n
	}
	return fields[0], fields[1], fields[2], fields[3], p, true
}

// decodeAt reads the entry at off, building its key from the current key
// (and, in blocks whose values share prefixes, its value from the current
// value).
func (it *Iter) decodeAt(off int) bool {
	it.prevSame = prevUnknown
	data := it.data[:it.restartsOff]
	if it.compact && off < len(data) && data[off]&compactEntryBit != 0 {
		return it.decodeCompactAt(off)
	}
	var shared, unshared, vshared, vlen, trailer uint64
	var p int
	var ok bool
	if it.shareValues {
		shared, unshared, vshared, vlen, trailer, p, ok = header5(data, off)
	} else {
		shared, unshared, vlen, trailer, p, ok = header(data, off)
	}
	if !ok || unshared > uint64(len(data)-p) || vlen > uint64(len(data)-p)-unshared {
		return it.corrupt(off)
	}
	if shared == 0 {
		it.key = append(it.key[:0], data[:it.prefixLen]...)
	} else {
		if shared > uint64(len(it.key)) {
			return it.corrupt(off)
		}
		it.key = it.key[:shared]
	}
	end := p + int(unshared)
	it.key = append(it.key, data[p:end]...)
	if it.shareValues {
		if vshared > uint64(len(it.valueBuf)) {
			return it.corrupt(off)
		}
		it.valueBuf = append(it.valueBuf[:vshared], data[end:end+int(vlen)]...)
		it.value = it.valueBuf
	} else {
		it.value = data[end : end+int(vlen)]
	}
	it.trailer = base.Trailer(trailer)
	it.offset = off
	it.nextOffset = end + int(vlen)
	it.valid = true
	return true
}

// decodeCompactAt reads the compact entry at off (see compactEntryBit): it
// replaces the last bytes of the current key and value in place.
func (it *Iter) decodeCompactAt(off int) bool {
	data := it.data[:it.restartsOff]
	h := data[off]
	ku, vu := int(h&maxCompactKeyBytes), int(h>>3&maxCompactValueBytes)
	p := off + 1
	// A compact entry needs a previous entry (never at a restart point,
	// where the key is rebuilt from nothing) and must keep the prefix.
	if !it.valid || ku > len(it.key)-it.prefixLen || vu > len(it.valueBuf) || ku+vu > len(data)-p {
		return it.corrupt(off)
	}
	// Byte loops: the copies are a few bytes, and copy() would call memmove.
	key, src := it.key[len(it.key)-ku:], data[p:p+ku]
	//lint:ignore S1001 at most 7 bytes: a loop is cheaper than memmove
	for i := range src {
		key[i] = src[i]
	}
	p += ku
	value, src := it.valueBuf[len(it.valueBuf)-vu:], data[p:p+vu]
	//lint:ignore S1001 at most 15 bytes: a loop is cheaper than memmove
	for i := range src {
		value[i] = src[i]
	}
	it.value = it.valueBuf
	it.offset = off
	it.nextOffset = p + vu
	return true
}

// decodeRestart reads the entry at restart point i. Restart entries carry
// no shared bytes, so the key is rebuilt from nothing.
func (it *Iter) decodeRestart(i int) bool {
	it.key = it.key[:0]
	it.valueBuf = it.valueBuf[:0]
	return it.decodeAt(it.restart(i))
}

func (it *Iter) corrupt(off int) bool {
	_ = it.fail("malformed entry at offset %d", off)
	return false
}

// compareSuffix compares the current key with a target whose common prefix
// was already checked: only the bytes after the prefix are compared.
func (it *Iter) compareCurrent(suffix []byte, trailer base.Trailer) int {
	k := it.key
	if len(k) < it.prefixLen {
		return -1 // malformed; Validate reports it
	}
	if c := bytes.Compare(k[it.prefixLen:], suffix); c != 0 {
		return c
	}
	return base.CompareTrailers(it.trailer, trailer)
}

// stripPrefix splits a target against the block's prefix. It returns the
// target's suffix and 0 when the target starts with the prefix; otherwise
// -1 (target before every key) or +1 (after every key).
func (it *Iter) stripPrefix(target []byte) ([]byte, int) {
	p := it.prefixLen
	if len(target) >= p && bytes.Equal(target[:p], it.data[:p]) {
		return target[p:], 0
	}
	if bytes.Compare(target, it.data[:p]) < 0 {
		return nil, -1
	}
	return nil, 1
}

// searchRestarts returns the index of the first restart point whose key is
// >= the target (numRestarts if none).
func (it *Iter) searchRestarts(suffix []byte, trailer base.Trailer) (int, bool) {
	// The invariant: restart points below lo are < the target, those at hi
	// and above are >= it. Any probe inside [lo, hi) keeps it, so the
	// probes may be guessed, each a likely cache miss saved:
	//
	//   - With the restart stride known, jump by the key distance: keys
	//     that differ only in their last 8 bytes are a run (for
	//     entry-location keys, a ledger), and a dense run advances its tail
	//     by stride per restart. From a probe in the target's run the jump
	//     lands on the target's restart point. A target past the end of
	//     its run (a floor's bound) belongs at the first restart of the
	//     next run: once a probe in the target's run was below it and the
	//     probe above it is in another run, jump to that run's first
	//     restart (runs are guessed to start at tail 0, as ledgers do). A
	//     jump onto a restart already probed tries its neighbour, the one
	//     probe that then ends the search.
	//   - Otherwise interpolate between the restart keys known to bracket
	//     the target, on the first 8 bytes after the common prefix: a block
	//     of many small ledgers is linear in those bytes; a block of two or
	//     three long ledgers is not (a ledger boundary is a jump), which is
	//     why the run jumps come first.
	//
	// After a few guesses of either kind the search halves, so adversarial
	// keys cost at most a few extra probes.
	lo, hi := 0, it.numRestarts
	tv := keyValue(suffix)
	var loV, hiV uint64 // values of restarts lo-1 and hi, when known
	haveLo, haveHi := false, false
	tTail := tailValue(suffix)
	inRun, inRunTail, inRunAbove := -1, uint64(0), false // a probe in the target's run, not yet jumped from
	runBelow := false                                    // a probe in the target's run was below it
	hiOther, hiTail := false, uint64(0)                  // restart hi is in another run; its tail
	for guesses, jumps := 0, 0; lo < hi; {
		mid := int(uint(lo+hi) >> 1)
		guessed := false
		if jumps < maxRunJumps {
			g := -1
			if inRun >= 0 {
				g = it.runJump(inRun, inRunTail, tTail, inRunAbove)
				inRun = -1
			}
			if (g < lo || g >= hi) && runBelow && hiOther {
				// Jump to the start of the run above only if at most a
				// couple of runs as long as its part above that start
				// can lie between: across many short runs a walk run by
				// run costs more than interpolating.
				if ng := it.runJump(hi, hiTail, 0, true); ng == hi-1 || ng-lo <= 2*(hi-ng) {
					g = ng
				}
			}
			if g >= lo && g < hi {
				mid, guessed = g, true
				jumps++
			}
		}
		if !guessed && guesses < 4 && hi-lo > 4 {
			switch {
			case !haveLo:
				mid = lo
			case !haveHi:
				mid = hi - 1
			case hiV > loV && tv >= loV && tv <= hiV:
				span := float64(hi - lo + 1)
				g := lo - 1 + int(float64(tv-loV)/float64(hiV-loV)*span)
				mid = min(max(g, lo), hi-1)
			}
			guesses++
		}
		c, v, key, ok := it.compareRestartValue(mid, suffix, trailer)
		if !ok {
			return 0, it.corrupt(it.restart(mid))
		}
		same := false
		if it.restartStride > 0 {
			if same = sameRun(key, suffix); same {
				inRun, inRunTail, inRunAbove = mid, tailValue(key), c >= 0
				runBelow = runBelow || c < 0
			}
		}
		if c < 0 {
			lo, loV, haveLo = mid+1, v, true
		} else {
			hi, hiV, haveHi = mid, v, true
			hiOther = it.restartStride > 0 && !same
			if hiOther {
				hiTail = tailValue(key)
			}
		}
	}
	return lo, true
}

// maxRunJumps bounds the run jumps of one search: a get takes two, a
// floor's bound in a block of three ledgers four.
const maxRunJumps = 6

// runJump guesses the first restart point >= a key of tail toTail in the
// run of restart from, whose tail is fromTail: in a dense run restart
// from+j holds fromTail + j*stride. A guess of from itself, already
// probed, becomes its neighbour on the target's side (above: restart from
// is >= the target).
func (it *Iter) runJump(from int, fromTail, toTail uint64, above bool) int {
	s, limit := it.restartStride, uint64(it.numRestarts)
	g := from
	if toTail >= fromTail {
		d := toTail - fromTail // the first j with j*s >= d
		j := d / s
		if d%s != 0 {
			j++
		}
		g += int(min(j, limit))
	} else {
		g -= int(min((fromTail-toTail)/s, limit)) // the last j with j*s <= d
	}
	if g == from {
		if above {
			return from - 1
		}
		return from + 1
	}
	return g
}

// sameRun reports whether two key suffixes of one block differ at most in
// their last 8 bytes.
func sameRun(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	n := len(a) - 8
	return n <= 0 || bytes.Equal(a[:n], b[:n])
}

// tailValue reads the last 8 bytes of a key suffix (fewer if it is
// shorter) as a big-endian number. Two suffixes in one run differ in their
// keys' last 8 bytes by the difference of their tail values: the bytes
// before the suffix are the block's common prefix.
func tailValue(suffix []byte) uint64 {
	if len(suffix) >= 8 {
		return binary.BigEndian.Uint64(suffix[len(suffix)-8:])
	}
	var v uint64
	for _, c := range suffix {
		v = v<<8 | uint64(c)
	}
	return v
}

// keyValue reads the first 8 bytes of a key suffix as a big-endian number
// (zero-padded): the position of the key for interpolation.
func keyValue(suffix []byte) uint64 {
	if len(suffix) >= 8 {
		return binary.BigEndian.Uint64(suffix)
	}
	var b [8]byte
	copy(b[:], suffix)
	return binary.BigEndian.Uint64(b[:])
}

// compareRestartValue compares the key of restart point i with the target
// suffix without copying the key out of the block, and returns the restart
// key's keyValue and its suffix (a slice of the block). ok is false on
// malformed data.
func (it *Iter) compareRestartValue(i int, suffix []byte, trailer base.Trailer) (c int, v uint64, key []byte, ok bool) {
	it.probes++
	data := it.data[:it.restartsOff]
	var unshared, t uint64
	var p int
	if it.shareValues {
		_, unshared, _, _, t, p, ok = header5(data, it.restart(i))
	} else {
		_, unshared, _, t, p, ok = header(data, it.restart(i))
	}
	if !ok || unshared > uint64(len(data)-p) {
		return 0, 0, nil, false
	}
	key = data[p : p+int(unshared)]
	v = keyValue(key)
	if c := bytes.Compare(key, suffix); c != 0 {
		return c, v, key, true
	}
	return base.CompareTrailers(base.Trailer(t), trailer), v, key, true
}

func (it *Iter) restartLimit(i int) int {
	if i < it.numRestarts {
		return it.restart(i)
	}
	return it.restartsOff
}

// SeekGE moves to the first entry >= (userKey, trailer).
func (it *Iter) SeekGE(userKey []byte, trailer base.Trailer) bool {
	it.valid = false
	if it.numRestarts == 0 || it.err != nil {
		return false
	}
	suffix, side := it.stripPrefix(userKey)
	if side < 0 {
		return it.First()
	}
	if side > 0 {
		return false
	}
	i, ok := it.searchRestarts(suffix, trailer)
	if !ok {
		return false
	}
	if i > 0 {
		i--
	}
	if !it.decodeRestart(i) {
		return false
	}
	for it.compareCurrent(suffix, trailer) < 0 {
		if !it.Next() {
			return false
		}
	}
	return true
}

// SeekLT moves to the last entry < (userKey, trailer).
func (it *Iter) SeekLT(userKey []byte, trailer base.Trailer) bool {
	it.valid = false
	if it.numRestarts == 0 || it.err != nil {
		return false
	}
	suffix, side := it.stripPrefix(userKey)
	if side < 0 {
		return false
	}
	if side > 0 {
		return it.Last()
	}
	i, ok := it.searchRestarts(suffix, trailer)
	if !ok || i == 0 {
		return false
	}
	if !it.decodeRestart(i - 1) {
		return false
	}
	limit := it.restartLimit(i)
	prevSame := prevUnknown // of the current entry
	for it.nextOffset < limit {
		savedOffset, savedNext, savedTrailer, savedValue := it.offset, it.nextOffset, it.trailer, it.value
		it.savedKey = append(it.savedKey[:0], it.key...)
		if it.shareValues {
			it.savedValue = append(it.savedValue[:0], it.valueBuf...)
		}
		if !it.decodeAt(it.nextOffset) {
			return false
		}
		if it.compareCurrent(suffix, trailer) >= 0 {
			it.offset, it.nextOffset, it.trailer, it.value = savedOffset, savedNext, savedTrailer, savedValue
			it.key, it.savedKey = it.savedKey, it.key
			if it.shareValues {
				it.valueBuf, it.savedValue = it.savedValue, it.valueBuf
				it.value = it.valueBuf
			}
			break
		}
		prevSame = sameKey(it.savedKey, it.key)
	}
	it.prevSame = prevSame
	return true
}

// First moves to the first entry.
func (it *Iter) First() bool {
	it.valid = false
	if it.numRestarts == 0 || it.err != nil {
		return false
	}
	return it.decodeRestart(0)
}

// Last moves to the last entry.
func (it *Iter) Last() bool {
	it.valid = false
	if it.numRestarts == 0 || it.err != nil {
		return false
	}
	if !it.decodeRestart(it.numRestarts - 1) {
		return false
	}
	prevSame := prevUnknown
	for it.nextOffset < it.restartsOff {
		it.savedKey = append(it.savedKey[:0], it.key...)
		if !it.decodeAt(it.nextOffset) {
			return false
		}
		prevSame = sameKey(it.savedKey, it.key)
	}
	it.prevSame = prevSame
	return true
}

// Next moves to the next entry.
func (it *Iter) Next() bool {
	if !it.valid {
		return false
	}
	if it.nextOffset >= it.restartsOff {
		it.valid = false
		return false
	}
	return it.decodeAt(it.nextOffset)
}

// Prev moves to the previous entry: it rescans from the restart point
// before the current entry, as a singly linked format requires.
func (it *Iter) Prev() bool {
	if !it.valid {
		return false
	}
	target := it.offset
	// The last restart point before the current entry.
	lo, hi := 0, it.numRestarts
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if it.restart(mid) < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		it.valid = false
		return false
	}
	if !it.decodeRestart(lo - 1) {
		return false
	}
	for it.nextOffset < target {
		if !it.decodeAt(it.nextOffset) {
			return false
		}
	}
	if it.nextOffset != target {
		return it.corrupt(it.offset)
	}
	return true
}

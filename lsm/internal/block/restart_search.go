package block

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// searchRestarts returns the index of the first restart point whose key is
// >= the target (numRestarts if none).
//
// The invariant: restart points below lo are < the target, those at hi and
// above are >= it. Any probe inside [lo, hi) keeps it, so probes may be
// guessed, and a guess only costs time. A binary search over the ~500
// restarts of a 64 KiB block takes nine probes, each a likely cache miss.
// Entry-location keys are dense integers after the block's common prefix,
// so the restart holding a key can usually be computed instead:
//
//   - Interpolating between the first and the last restart's keys finds it
//     when the block holds one ledger, or many small ones (then the ledger
//     ids spread evenly). Each guess is followed by a probe of its
//     neighbour, which closes the range when the guess was exact: four
//     probes in all.
//   - A block of a few ledgers has keys that jump at each ledger boundary,
//     and interpolation across the jumps misses (12.5 probes per seek with
//     two or three ledgers per block when this was the only method). But a
//     missed guess and its neighbour are two adjacent restarts, usually in
//     one ledger: their key distance is the step per restart, and
//     extrapolating from the nearest known restart with it is exact when
//     the target is in that restart's ledger.
//
// After a guess whose neighbour did not close the range the search halves
// once, and after three guesses it only halves, so no block costs much
// more than a binary search.
func (it *Iter) searchRestarts(suffix []byte, trailer base.Trailer) (int, bool) {
	lo, hi := 0, it.numRestarts
	tv := keyPosOf(suffix)
	var loV, hiV keyPos // keys of restarts lo-1 and hi, when known
	haveLo, haveHi := false, false
	step := 0.0   // key distance between the last guess and its neighbour
	guesses := 0  // guesses made
	confirm := -1 // the neighbour of the last guess, probed next
	var guessV keyPos
	halveNext := false
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		guessed, confirming := false, false
		switch {
		case confirm >= lo && confirm < hi:
			mid, confirming = confirm, true
		case hi-lo <= 2 || halveNext || guesses >= 3:
		case !haveLo:
			mid = lo
		case !haveHi:
			mid = hi - 1
		default:
			mid, guessed = it.guessRestart(tv, lo, hi, loV, hiV, step)
		}
		c, v, ok := it.compareRestart(mid, suffix, trailer)
		it.probes++
		if !ok {
			return 0, it.corrupt(it.restart(mid))
		}
		if confirming {
			if d := v.minus(guessV); d != 0 {
				step = math.Abs(d)
			}
		}
		confirm = -1
		if c < 0 {
			lo, loV, haveLo = mid+1, v, true
			if guessed {
				confirm = mid + 1 // exact if restart mid+1 is >= the target
			}
		} else {
			hi, hiV, haveHi = mid, v, true
			if guessed {
				confirm = mid - 1 // exact if restart mid-1 is < the target
			}
		}
		if guessed {
			guesses++
			guessV = v
		}
		halveNext = confirming && lo < hi
	}
	return lo, true
}

// guessRestart guesses the first restart in [lo, hi) whose key is >= tv,
// given the keys of restarts lo-1 and hi and, once known, the key step
// between two adjacent restarts: extrapolating from below, else from
// above, with the step; else interpolating between the two. ok is false if
// no guess falls inside the range.
func (it *Iter) guessRestart(tv keyPos, lo, hi int, loV, hiV keyPos, step float64) (int, bool) {
	if step > 0 {
		if g := lo - 1 + int(math.Ceil(tv.minus(loV)/step)); g >= lo && g < hi {
			return g, true
		}
		if g := hi - int(math.Floor(hiV.minus(tv)/step)); g >= lo && g < hi {
			return g, true
		}
	}
	span := hiV.minus(loV)
	if span <= 0 {
		return int(uint(lo+hi) >> 1), false
	}
	g := lo - 1 + int(math.Ceil(tv.minus(loV)/span*float64(hi-lo+1)))
	return clampGuess(g, lo, hi), true
}

func clampGuess(g, lo, hi int) int { return min(max(g, lo), hi-1) }

// keyPos is the position of a key suffix for extrapolation: its first 16
// bytes, zero-padded, as a 128-bit big-endian number (entry-location keys
// are 16 bytes, so no key bits are lost however short the common prefix).
type keyPos struct{ hi, lo uint64 }

func keyPosOf(suffix []byte) keyPos {
	var b [16]byte
	copy(b[:], suffix)
	return keyPos{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:])}
}

// minus returns p-q as a float64 (exact to 53 significant bits).
func (p keyPos) minus(q keyPos) float64 {
	if p.hi < q.hi || p.hi == q.hi && p.lo < q.lo {
		return -q.minus(p)
	}
	lo, borrow := bits.Sub64(p.lo, q.lo, 0)
	hi, _ := bits.Sub64(p.hi, q.hi, borrow)
	return float64(hi)*0x1p64 + float64(lo)
}

// compareRestart compares the key of restart point i with the target
// suffix without copying the key out of the block, and returns the restart
// key's position. ok is false on malformed data.
func (it *Iter) compareRestart(i int, suffix []byte, trailer base.Trailer) (c int, v keyPos, ok bool) {
	data := it.data[:it.restartsOff]
	var unshared, t uint64
	var p int
	if it.shareValues {
		_, unshared, _, _, t, p, ok = header5(data, it.restart(i))
	} else {
		_, unshared, _, t, p, ok = header(data, it.restart(i))
	}
	if !ok || unshared > uint64(len(data)-p) {
		return 0, keyPos{}, false
	}
	key := data[p : p+int(unshared)]
	v = keyPosOf(key)
	if c := bytes.Compare(key, suffix); c != 0 {
		return c, v, true
	}
	return base.CompareTrailers(base.Trailer(t), trailer), v, true
}

package rangedel

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

var (
	long = flag.Bool("long", false, "run the randomized tests longer")
	seed = flag.Int64("seed", 1, "seed of the randomized tests")
)

// rounds returns n, or n*factor when -long is set.
func rounds(n, factor int) int {
	if *long {
		return n * factor
	}
	return n
}

// newRand returns the randomized tests' source; t.Log records the seed so a
// failure can be replayed with -seed.
func newRand(t testing.TB) *rand.Rand {
	t.Logf("seed %d", *seed)
	return rand.New(rand.NewSource(*seed))
}

// alphabet is small so that random tombstones overlap and share boundaries
// often.
const alphabet = "abc"

// universe returns every key of up to maxLen letters of alphabet, sorted.
// Tombstones drawn with keys of up to maxLen-1 letters have keys of maxLen
// letters strictly between their boundaries, so probing the universe
// exercises the inside of every fragment as well as its edges.
func universe(maxLen int) [][]byte {
	keys := [][]byte{{}}
	frontier := [][]byte{{}}
	for n := 1; n <= maxLen; n++ {
		var next [][]byte
		for _, k := range frontier {
			for _, c := range []byte(alphabet) {
				next = append(next, append(slices.Clone(k), c))
			}
		}
		keys = append(keys, next...)
		frontier = next
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

// randomKey returns a key of 0..maxLen letters of alphabet.
func randomKey(rng *rand.Rand, maxLen int) []byte {
	k := make([]byte, rng.Intn(maxLen+1))
	for i := range k {
		k[i] = alphabet[rng.Intn(len(alphabet))]
	}
	return k
}

// randomTombstones returns up to maxN tombstones with short random keys and
// sequence numbers from a small range (so duplicates happen); some are
// empty or inverted, some repeated exactly.
func randomTombstones(rng *rand.Rand, maxN int) []Tombstone {
	n := rng.Intn(maxN + 1)
	ts := make([]Tombstone, 0, n)
	for len(ts) < n {
		if len(ts) > 0 && rng.Intn(10) == 0 {
			ts = append(ts, ts[rng.Intn(len(ts))])
			continue
		}
		ts = append(ts, Tombstone{Start: randomKey(rng, 2), End: randomKey(rng, 2), Seq: base.SeqNum(1 + rng.Intn(12))})
	}
	return ts
}

// modelSeqs returns, newest first and deduplicated, the sequence numbers of
// the raw tombstones that cover key.
func modelSeqs(ts []Tombstone, key []byte) []base.SeqNum {
	var seqs []base.SeqNum
	for _, t := range ts {
		if bytes.Compare(t.Start, key) <= 0 && bytes.Compare(key, t.End) < 0 {
			seqs = append(seqs, t.Seq)
		}
	}
	slices.SortFunc(seqs, compareSeqsDescending)
	return slices.Compact(seqs)
}

// modelMaxCoveringSeq checks every raw tombstone.
func modelMaxCoveringSeq(ts []Tombstone, key []byte, readSeq base.SeqNum) base.SeqNum {
	var max base.SeqNum
	for _, t := range ts {
		if bytes.Compare(t.Start, key) <= 0 && bytes.Compare(key, t.End) < 0 && t.Seq <= readSeq && t.Seq > max {
			max = t.Seq
		}
	}
	return max
}

// modelCovers checks every raw tombstone for keySeq < seq <= readSeq.
func modelCovers(ts []Tombstone, key []byte, keySeq, readSeq base.SeqNum) bool {
	for _, t := range ts {
		if bytes.Compare(t.Start, key) <= 0 && bytes.Compare(key, t.End) < 0 && keySeq < t.Seq && t.Seq <= readSeq {
			return true
		}
	}
	return false
}

// fragmentSeqsAt returns the sequence numbers of the fragment containing
// key, found by a linear scan.
func fragmentSeqsAt(frags []Fragment, key []byte) []base.SeqNum {
	for i := range frags {
		if frags[i].Contains(key) {
			return frags[i].Seqs
		}
	}
	return nil
}

// tombstone builds a tombstone from strings.
func tombstone(start, end string, seq base.SeqNum) Tombstone {
	return Tombstone{Start: []byte(start), End: []byte(end), Seq: seq}
}

// fragmentList prints as "[a,c){9} [c,e){9,5}". Randomized tests pass it
// (not its string) as a failure message argument, so that it is formatted
// only when an assertion fails.
type fragmentList []Fragment

func (l fragmentList) String() string {
	parts := make([]string, len(l))
	for i, f := range l {
		seqs := make([]string, len(f.Seqs))
		for j, s := range f.Seqs {
			seqs[j] = fmt.Sprint(s)
		}
		parts[i] = fmt.Sprintf("[%s,%s){%s}", f.Start, f.End, strings.Join(seqs, ","))
	}
	return strings.Join(parts, " ")
}

// tombstoneList prints as "[a,c)#9 [c,e)#5", lazily like fragmentList.
type tombstoneList []Tombstone

func (l tombstoneList) String() string {
	parts := make([]string, len(l))
	for i, t := range l {
		parts[i] = fmt.Sprintf("[%s,%s)#%d", t.Start, t.End, t.Seq)
	}
	return strings.Join(parts, " ")
}

func formatFragments(frags []Fragment) string { return fragmentList(frags).String() }

func formatTombstones(ts []Tombstone) string { return tombstoneList(ts).String() }

// defineSet builds the Set of a testdata case's tombstones, one
// "start end seq" a line.
func defineSet(t *testing.T, c *golden.Case) *Set {
	var ts []Tombstone
	for _, line := range c.Lines() {
		f := scriptFields(t, c, line, 3)
		ts = append(ts, Tombstone{Start: f.key(0), End: f.key(1), Seq: f.seq(2)})
	}
	return BuildSet(ts)
}

// fields are the words of a testdata line: keys ("" is the empty key) and
// sequence numbers (max is SeqNumMax).
type fields struct {
	t     *testing.T
	pos   string
	words []string
}

// scriptFields splits line into n words.
func scriptFields(t *testing.T, c *golden.Case, line string, n int) fields {
	words := strings.Fields(line)
	if len(words) != n {
		t.Fatalf("%s: %q: want %d fields", c.Pos, line, n)
	}
	return fields{t: t, pos: c.Pos, words: words}
}

func (f fields) key(i int) []byte {
	if f.words[i] == `""` {
		return []byte{}
	}
	return []byte(f.words[i])
}

func (f fields) seq(i int) base.SeqNum {
	if f.words[i] == "max" {
		return base.SeqNumMax
	}
	v, err := strconv.ParseUint(f.words[i], 10, 64)
	if err != nil {
		f.t.Fatalf("%s: sequence number %q: %v", f.pos, f.words[i], err)
	}
	return base.SeqNum(v)
}

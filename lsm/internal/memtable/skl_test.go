package memtable

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

var long = flag.Bool("long", false, "run the randomized and concurrent tests longer")

// scale returns n, or n*factor when -long is set.
func scale(n, factor int) int {
	if *long {
		return n * factor
	}
	return n
}

// entry is one model entry.
type entry struct {
	key     []byte
	trailer base.Trailer
	value   []byte
}

func (e entry) String() string {
	return fmt.Sprintf("%q#%d,%d", e.key, e.trailer.SeqNum(), e.trailer.Kind())
}

func compareEntries(a, b entry) int { return base.CompareInternal(a.key, a.trailer, b.key, b.trailer) }

// model is a sorted slice of entries: the reference the skiplist must match.
type model []entry

// searchGE returns the index of the first entry >= (key, trailer).
func (m model) searchGE(key []byte, trailer base.Trailer) int {
	i, _ := slices.BinarySearchFunc(m, entry{key: key, trailer: trailer}, compareEntries)
	return i
}

// modelBuilder collects entries in insertion order and sorts them only when
// a check needs the model: inserting into a sorted slice moves O(n) bytes per
// entry, which the race detector makes very slow.
type modelBuilder struct {
	entries model
	ids     map[string]bool
	dirty   bool
}

func entryID(e entry) string {
	return string(binary.BigEndian.AppendUint64(slices.Clone(e.key), uint64(e.trailer)))
}

// insert adds e and reports whether it was new.
func (b *modelBuilder) insert(e entry) bool {
	if b.has(e) {
		return false
	}
	if b.ids == nil {
		b.ids = map[string]bool{}
	}
	b.ids[entryID(e)] = true
	b.entries = append(b.entries, e)
	b.dirty = true
	return true
}

// has reports whether an entry with e's key and trailer was inserted.
func (b *modelBuilder) has(e entry) bool { return b.ids[entryID(e)] }

// sorted returns the entries in internal-key order.
func (b *modelBuilder) sorted() model {
	if b.dirty {
		slices.SortFunc(b.entries, compareEntries)
		b.dirty = false
	}
	return b.entries
}

// keyGen makes random keys of 0-32 bytes that often share prefixes and that
// use the bytes at the edges of the order (0x00, 0xff).
type keyGen struct {
	rng      *rand.Rand
	prefixes [][]byte
}

func newKeyGen(rng *rand.Rand) *keyGen {
	return &keyGen{rng: rng, prefixes: [][]byte{
		nil, []byte("a"), []byte("ab"), []byte("ab\x00"), []byte("\xff\xff"),
		[]byte("ledger/0001/"), []byte("ledger/0001/entry/"), []byte("ledger/0002/"),
	}}
}

func (g *keyGen) key() []byte {
	if g.rng.Intn(20) == 0 {
		return []byte{}
	}
	k := slices.Clone(g.prefixes[g.rng.Intn(len(g.prefixes))])
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}
	for n := g.rng.Intn(33 - len(k)); n > 0; n-- {
		k = append(k, alphabet[g.rng.Intn(len(alphabet))])
	}
	return k
}

func (g *keyGen) trailer() base.Trailer {
	switch g.rng.Intn(10) {
	case 0:
		return 0
	case 1:
		return base.MakeTrailer(base.SeqNumMax, base.KindMax)
	}
	return base.MakeTrailer(base.SeqNum(g.rng.Intn(8)), base.Kind(g.rng.Intn(3)))
}

// checkPosition asserts that it is at model entry i, or invalid when i is
// out of range.
func checkPosition(t *testing.T, m model, it *Iterator, valid bool, i int, op string) {
	t.Helper()
	// Plain comparisons first: this runs millions of times under -race.
	wantValid := i >= 0 && i < len(m)
	if valid != wantValid || it.Valid() != wantValid {
		t.Fatalf("%s: valid=%t Valid()=%t, want %t (model index %d of %d)", op, valid, it.Valid(), wantValid, i, len(m))
	}
	if !wantValid {
		return
	}
	want := m[i]
	if !bytes.Equal(it.UserKey(), want.key) || it.Trailer() != want.trailer || !bytes.Equal(it.Value(), want.value) {
		got := entry{key: it.UserKey(), trailer: it.Trailer(), value: it.Value()}
		t.Fatalf("%s: at %s=%q, want model index %d %s=%q", op, got, got.value, i, want, want.value)
	}
}

// checkSteps walks a few steps forward and back from model index i, where it
// is positioned, comparing every position with the model.
func checkSteps(t *testing.T, m model, s *Skiplist, i int, reposition func(*Iterator) bool, op string) {
	t.Helper()
	it := s.NewIter()
	checkPosition(t, m, it, reposition(it), i, op)
	if !it.Valid() {
		// An exhausted iterator stays exhausted in both directions.
		require.False(t, it.Next(), op+" then Next")
		require.False(t, it.Prev(), op+" then Prev")
		require.Nil(t, it.UserKey())
		require.Nil(t, it.Value())
		return
	}
	for j := i + 1; j <= min(i+3, len(m)); j++ {
		checkPosition(t, m, it, it.Next(), j, op+" then Next")
	}
	checkPosition(t, m, it, reposition(it), i, op)
	for j := i - 1; j >= max(i-3, -1); j-- {
		checkPosition(t, m, it, it.Prev(), j, op+" then Prev")
	}
}

// checkList compares the whole list with the model: full scans in both
// directions and seeks to random, existing and extreme targets.
func checkList(t *testing.T, m model, s *Skiplist, g *keyGen, seeks int) {
	t.Helper()
	require.Equal(t, len(m), s.Count())

	it := s.NewIter()
	valid := it.First()
	for i := range m {
		checkPosition(t, m, it, valid, i, "First/Next")
		valid = it.Next()
	}
	require.False(t, valid, "Next past the end")

	valid = it.Last()
	for i := len(m) - 1; i >= 0; i-- {
		checkPosition(t, m, it, valid, i, "Last/Prev")
		valid = it.Prev()
	}
	require.False(t, valid, "Prev before the start")

	type target struct {
		key     []byte
		trailer base.Trailer
	}
	targets := []target{
		{nil, base.MakeTrailer(base.SeqNumMax, base.KindMax)}, // before everything
		{nil, 0},
		{bytes.Repeat([]byte{0xff}, 33), 0}, // after everything
	}
	for range seeks {
		if len(m) > 0 && g.rng.Intn(2) == 0 {
			e := m[g.rng.Intn(len(m))]
			targets = append(targets, target{e.key, e.trailer}, target{e.key, e.trailer + 1}, target{e.key, e.trailer - 1})
		} else {
			targets = append(targets, target{g.key(), g.trailer()})
		}
	}
	for _, tg := range targets {
		i := m.searchGE(tg.key, tg.trailer)
		desc := fmt.Sprintf("target %q#%d", tg.key, tg.trailer)
		checkSteps(t, m, s, i, func(it *Iterator) bool { return it.SeekGE(tg.key, tg.trailer) }, "SeekGE "+desc)
		checkSteps(t, m, s, i-1, func(it *Iterator) bool { return it.SeekLT(tg.key, tg.trailer) }, "SeekLT "+desc)
	}
	checkSteps(t, m, s, 0, (*Iterator).First, "First")
	checkSteps(t, m, s, len(m)-1, (*Iterator).Last, "Last")
}

// checkStructure verifies invariants the iterator alone would not expose:
// every level is strictly sorted, holds only nodes tall enough for it, and is
// a subsequence of the level below; head slots above the list height are nil.
func checkStructure(t *testing.T, s *Skiplist) {
	t.Helper()
	a := s.arena
	height := int(s.height.Load())
	for level := height; level < maxHeight; level++ {
		require.Zero(t, a.next(s.head, level), "head slot %d above height %d", level, height)
	}
	var below []uint32 // nodes of the level below, in order
	for level := 0; level < height; level++ {
		var nodes []uint32
		for nd := a.next(s.head, level); nd != 0; nd = a.next(nd, level) {
			if a.nodeHeight(nd) <= level {
				t.Fatalf("level %d: node %q of height %d", level, a.nodeKey(nd), a.nodeHeight(nd))
			}
			if n := len(nodes); n > 0 && s.compareToNode(a.nodeKey(nodes[n-1]), a.nodeTrailer(nodes[n-1]), nd) >= 0 {
				t.Fatalf("level %d: %q#%d before %q#%d", level, a.nodeKey(nodes[n-1]), a.nodeTrailer(nodes[n-1]), a.nodeKey(nd), a.nodeTrailer(nd))
			}
			nodes = append(nodes, nd)
		}
		if level > 0 {
			j := 0
			for _, nd := range nodes {
				for j < len(below) && below[j] != nd {
					j++
				}
				if j == len(below) {
					t.Fatalf("level %d: node %q missing from level %d", level, a.nodeKey(nd), level-1)
				}
			}
		} else {
			require.Equal(t, s.Count(), len(nodes))
		}
		below = nodes
	}
}

// TestSpliceAfterDuplicate rejects a duplicate of a tall node, which a search
// detects above level 0, and then continues an ascending run where the
// previous insert stopped: the splice must not mix levels positioned for the
// duplicate with levels positioned for the run.
func TestSpliceAfterDuplicate(t *testing.T) {
	s := NewSkiplist(1 << 20)
	key := func(i int) []byte { return binary.BigEndian.AppendUint32([]byte("k"), uint32(i)) }
	next := 0
	for ; next < 500; next++ {
		require.NoError(t, s.Add(key(next), 1, nil))
	}
	var tall [][]byte
	for nd := s.arena.next(s.head, 1); nd != 0; nd = s.arena.next(nd, 1) {
		tall = append(tall, slices.Clone(s.arena.nodeKey(nd)))
	}
	require.NotEmpty(t, tall)
	for _, k := range tall {
		require.ErrorIs(t, s.Add(k, 1, nil), ErrDuplicateKey)
		for range 20 {
			require.NoError(t, s.Add(key(next), 1, nil))
			next++
		}
	}
	checkStructure(t, s)
}

func TestEmptyList(t *testing.T) {
	s := NewSkiplist(1 << 10)
	require.Equal(t, 0, s.Count())
	it := s.NewIter()
	require.False(t, it.Valid())
	require.False(t, it.First())
	require.False(t, it.Last())
	require.False(t, it.Next())
	require.False(t, it.Prev())
	require.False(t, it.SeekGE(nil, 0))
	require.False(t, it.SeekLT([]byte("z"), 0))
	require.Nil(t, it.UserKey())
	require.Equal(t, base.Trailer(0), it.Trailer())
}

func TestAddAndIterate(t *testing.T) {
	s := NewSkiplist(1 << 16)
	set := func(k string, seq base.SeqNum, v string) {
		require.NoError(t, s.Add([]byte(k), base.MakeTrailer(seq, base.KindSet), []byte(v)))
	}
	set("b", 1, "b1")
	set("a", 1, "a1")
	set("b", 3, "b3")
	set("", 9, "empty")
	set("c", 2, "c2")

	var got []string
	it := s.NewIter()
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, fmt.Sprintf("%s#%d=%s", it.UserKey(), it.Trailer().SeqNum(), it.Value()))
	}
	require.Equal(t, []string{"#9=empty", "a#1=a1", "b#3=b3", "b#1=b1", "c#2=c2"}, got)
	require.Equal(t, 5, s.Count())

	// SeekGE on a user key with a seek trailer finds its newest visible version.
	require.True(t, it.SeekGE([]byte("b"), base.SeekTrailer(2)))
	require.Equal(t, "b1", string(it.Value()))
	require.True(t, it.SeekLT([]byte("b"), base.SeekTrailer(base.SeqNumMax)))
	require.Equal(t, "a1", string(it.Value()))

	// Returned slices are capacity-limited: appending never overwrites the arena.
	require.True(t, it.SeekGE([]byte("a"), base.SeekTrailer(base.SeqNumMax)))
	k := it.UserKey()
	_ = append(k, 'X')
	require.Equal(t, "a1", string(it.Value()))
	v := it.Value()
	_ = append(v, 'X')
	require.True(t, it.Next())
	require.Equal(t, "b", string(it.UserKey()))
}

func TestDuplicate(t *testing.T) {
	s := NewSkiplist(1 << 12)
	tr := base.MakeTrailer(7, base.KindSet)
	require.NoError(t, s.Add([]byte("b"), tr, []byte("1")))
	require.NoError(t, s.Add([]byte("a"), tr, []byte("1")))
	size := s.Size()
	// "b" sits right after the cached splice (prev "a", next "b"): the fast
	// path must notice the duplicate too, as must a search from the head.
	for _, k := range []string{"b", "a", "b"} {
		err := s.Add([]byte(k), tr, []byte("2"))
		require.ErrorIs(t, err, ErrDuplicateKey)
		require.Contains(t, err.Error(), fmt.Sprintf("adding %q #7,SET", k))
	}
	require.Equal(t, size, s.Size())
	require.Equal(t, 2, s.Count())
	require.NoError(t, s.Add([]byte("b"), base.MakeTrailer(7, base.KindDelete), nil))
	require.Equal(t, 3, s.Count())
}

func TestRandomizedAgainstModel(t *testing.T) {
	for _, reuse := range []bool{true, false} {
		t.Run(fmt.Sprintf("spliceReuse=%t", reuse), func(t *testing.T) {
			rng := rand.New(rand.NewSource(1))
			g := newKeyGen(rng)
			s := NewSkiplist(scale(2<<20, 20))
			s.disableSpliceReuse = !reuse
			var m modelBuilder
			ops := scale(3000, 20)
			for op := 0; op < ops; op++ {
				var batch []entry
				switch rng.Intn(4) {
				case 0:
					// An ascending run, like BookKeeper entries of one ledger.
					base0 := g.key()
					for n := rng.Intn(20); n >= 0; n-- {
						k := binary.BigEndian.AppendUint32(slices.Clone(base0), uint32(n)^0xffffffff)
						batch = append(batch, entry{key: k, trailer: g.trailer()})
					}
					slices.SortFunc(batch, compareEntries)
				case 1:
					// Several versions of one key, oldest first.
					k := g.key()
					for seq := range rng.Intn(5) + 1 {
						batch = append(batch, entry{key: k, trailer: base.MakeTrailer(base.SeqNum(seq+10), base.KindSet)})
					}
				default:
					batch = append(batch, entry{key: g.key(), trailer: g.trailer()})
				}
				for _, e := range batch {
					e.value = []byte(fmt.Sprintf("v%d", op))
					err := s.Add(e.key, e.trailer, e.value)
					if m.insert(e) {
						require.NoError(t, err, "adding %s", e)
					} else {
						require.ErrorIs(t, err, ErrDuplicateKey, "adding %s", e)
					}
				}
				if op%500 == 0 {
					checkList(t, m.sorted(), s, g, 50)
					checkStructure(t, s)
				}
			}
			checkList(t, m.sorted(), s, g, 500)
			checkStructure(t, s)
			// p = 1/4 over this many entries gives about log4(n) levels.
			require.GreaterOrEqual(t, int(s.height.Load()), 4, "list height for %d entries", s.Count())
		})
	}
}

func TestArenaFull(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	g := newKeyGen(rng)
	s := NewSkiplist(4096)
	var m modelBuilder
	add := func(e entry) error {
		err := s.Add(e.key, e.trailer, e.value)
		if err == nil {
			require.True(t, m.insert(e))
		}
		return err
	}
	require.NoError(t, add(entry{key: []byte("m"), trailer: 1, value: []byte("x")}))

	// An entry larger than the whole arena fails and changes nothing.
	size := s.Size()
	err := add(entry{key: []byte("big"), trailer: 1, value: make([]byte, 5000)})
	require.ErrorIs(t, err, ErrArenaFull)
	require.Contains(t, err.Error(), "5000-byte value")
	require.Equal(t, size, s.Size())
	checkList(t, m.sorted(), s, g, 20)
	require.NoError(t, add(entry{key: []byte("n"), trailer: 1, value: []byte("y")}))

	// Fill the arena with random entries until one does not fit.
	var fullErr error
	for fullErr == nil {
		e := entry{key: g.key(), trailer: g.trailer(), value: []byte("value")}
		if m.has(e) {
			continue
		}
		fullErr = add(e)
	}
	require.ErrorIs(t, fullErr, ErrArenaFull)
	require.LessOrEqual(t, s.Size(), 4096)
	size = s.Size()
	checkList(t, m.sorted(), s, g, 100)

	// The list still answers duplicates correctly and stays usable.
	require.ErrorIs(t, s.Add([]byte("m"), 1, nil), ErrDuplicateKey)
	require.ErrorIs(t, s.Add(bytes.Repeat([]byte("k"), 200), 1, nil), ErrArenaFull)
	require.Equal(t, size, s.Size())
	checkList(t, m.sorted(), s, g, 100)
}

func TestArenaSizeClamping(t *testing.T) {
	minSize := arenaReserved + headNodeSize
	require.Equal(t, minSize, arenaSizeFor(-5, minSize))
	require.Equal(t, minSize, arenaSizeFor(0, minSize))
	require.Equal(t, 1<<20, arenaSizeFor(1<<20, minSize))
	require.Equal(t, 1<<20+8, arenaSizeFor(1<<20+1, minSize))
	require.Equal(t, maxArenaSize, arenaSizeFor(1<<40, minSize))

	for _, size := range []int{-1, 0, 1} {
		s := NewSkiplist(size)
		require.ErrorIs(t, s.Add(nil, 0, nil), ErrArenaFull, "arena size %d", size)
		require.Equal(t, 0, s.Count())
		require.False(t, s.NewIter().First())
	}
}

func TestRandomHeightDistribution(t *testing.T) {
	s := NewSkiplist(0)
	const draws = 100_000
	var atLeast [maxHeight + 2]int
	for range draws {
		h := s.randomHeight()
		require.True(t, h >= 1 && h <= maxHeight, "height %d", h)
		for i := 1; i <= h; i++ {
			atLeast[i]++
		}
	}
	// P(height >= i) = (1/4)^(i-1).
	require.Equal(t, draws, atLeast[1])
	require.InDelta(t, draws/4, atLeast[2], draws/4*0.05)
	require.InDelta(t, draws/16, atLeast[3], draws/16*0.1)
	require.InDelta(t, draws/64, atLeast[4], draws/64*0.2)
}

func TestSeekDoesNotAllocate(t *testing.T) {
	s := NewSkiplist(1 << 20)
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(i%10)), uint64(i))
		require.NoError(t, s.Add(keys[i], base.MakeTrailer(base.SeqNum(i), base.KindSet), keys[i][8:]))
	}
	var it Iterator
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		k := keys[i%len(keys)]
		i += 7
		s.InitIter(&it)
		if !it.SeekGE(k, base.SeekTrailer(base.SeqNumMax)) || !bytes.Equal(it.UserKey(), k) {
			panic("SeekGE missed")
		}
		it.Next()
		it.SeekLT(k, 0)
		it.Prev()
		it.First()
		it.Next()
		it.Last()
		_ = it.Value()
	})
	require.Zero(t, allocs)
}

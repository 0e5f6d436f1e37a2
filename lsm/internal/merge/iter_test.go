package merge

import (
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var long = flag.Bool("long", false, "run the randomized tests with many more iterations")

// userKeys is a small alphabet so that children share many user keys; it
// includes the empty key and keys one is a prefix of the other.
var userKeys = [][]byte{
	[]byte(""), []byte("\x00"), []byte("a"), []byte("a\x00"), []byte("a\x00\x00"), []byte("ab"),
	[]byte("b"), []byte("ba"), []byte("bb"), []byte("c"), []byte("cc"), []byte("d"),
}

// randomTrailer returns a trailer from a small set, including 0 (seqnum 0,
// kind Delete), the case where the successor of a key is the next user key.
func randomTrailer(rng *rand.Rand) base.Trailer {
	return base.MakeTrailer(base.SeqNum(rng.Intn(8)), base.Kind(rng.Intn(3)))
}

// model is the expected merged sequence with a cursor.
type model struct {
	entries []modelEntry
	pos     int
}

type modelEntry struct {
	entry
	child int
}

// newModel builds the merged order: internal key, then child index, then
// position within the child.
func newModel(children [][]entry) *model {
	m := &model{pos: -1}
	for c, entries := range children {
		for _, e := range entries {
			m.entries = append(m.entries, modelEntry{entry: e, child: c})
		}
	}
	slices.SortStableFunc(m.entries, func(a, b modelEntry) int {
		if c := compareEntries(a.entry, b.entry); c != 0 {
			return c
		}
		return a.child - b.child
	})
	return m
}

func (m *model) valid() bool { return m.pos >= 0 && m.pos < len(m.entries) }

func (m *model) seekGE(userKey []byte, trailer base.Trailer) {
	m.pos = sort.Search(len(m.entries), func(i int) bool {
		e := &m.entries[i]
		return base.CompareInternal(e.userKey, e.trailer, userKey, trailer) >= 0
	})
}

func (m *model) seekLT(userKey []byte, trailer base.Trailer) {
	m.seekGE(userKey, trailer)
	m.pos--
}

func (m *model) next() {
	if m.valid() {
		m.pos++
	}
}

func (m *model) prev() {
	if m.valid() {
		m.pos--
	}
}

// randomChildren returns up to maxChildren sorted children of up to
// maxEntries entries each. Values name the child and the entry, so a
// mismatch shows which child's entry came out.
func randomChildren(rng *rand.Rand, maxChildren, maxEntries int) [][]entry {
	children := make([][]entry, rng.Intn(maxChildren+1))
	for c := range children {
		n := rng.Intn(maxEntries + 1)
		entries := make([]entry, n)
		for j := range entries {
			entries[j] = entry{userKey: userKeys[rng.Intn(len(userKeys))], trailer: randomTrailer(rng)}
		}
		sortEntries(entries)
		for j := range entries {
			entries[j].value = []byte(fmt.Sprintf("child %d entry %d", c, j))
		}
		children[c] = entries
	}
	return children
}

func newSliceIters(children [][]entry) []*sliceIter {
	iters := make([]*sliceIter, len(children))
	for c, entries := range children {
		iters[c] = newSliceIter(entries)
	}
	return iters
}

func asInternal(iters []*sliceIter) []base.InternalIterator {
	out := make([]base.InternalIterator, len(iters))
	for i, it := range iters {
		out[i] = it
	}
	return out
}

// seekKeys are the alphabet plus keys just outside it.
var seekKeys = func() [][]byte {
	keys := slices.Clone(userKeys)
	for _, k := range userKeys {
		keys = append(keys, append(slices.Clip(k), 'x'))
	}
	return keys
}()

func randomSeekKey(rng *rand.Rand) ([]byte, base.Trailer) {
	key := seekKeys[rng.Intn(len(seekKeys))]
	trailer := randomTrailer(rng)
	switch rng.Intn(10) {
	case 0:
		trailer = maxTrailer
	case 1:
		trailer = 0
	}
	return key, trailer
}

// op describes one operation of a randomized test, for failure messages.
// It is formatted only when printed, so recording it does not allocate.
type op struct {
	name    string
	key     []byte
	trailer base.Trailer
}

func (o op) String() string {
	if o.key == nil {
		return o.name
	}
	return fmt.Sprintf("%s(%q, %d)", o.name, o.key, o.trailer)
}

// step applies one random operation to the iterator and the model and
// returns it with the iterator's result.
func step(rng *rand.Rand, it *Iter, m *model) (op, bool) {
	switch r := rng.Intn(100); {
	case r < 8:
		k, tr := randomSeekKey(rng)
		m.seekGE(k, tr)
		return op{"SeekGE", k, tr}, it.SeekGE(k, tr)
	case r < 16:
		k, tr := randomSeekKey(rng)
		m.seekLT(k, tr)
		return op{"SeekLT", k, tr}, it.SeekLT(k, tr)
	case r < 20:
		m.pos = 0
		return op{name: "First"}, it.First()
	case r < 24:
		m.pos = len(m.entries) - 1
		return op{name: "Last"}, it.Last()
	case r < 62:
		m.next()
		return op{name: "Next"}, it.Next()
	default:
		m.prev()
		return op{name: "Prev"}, it.Prev()
	}
}

// checkAgainstModel compares the iterator's position with the model's.
func checkAgainstModel(t *testing.T, it *Iter, m *model, ok bool, history []op) {
	t.Helper()
	if ok != m.valid() || it.Valid() != m.valid() {
		t.Fatalf("after %v: returned %v, Valid %v, model valid %v (pos %d of %d)",
			history, ok, it.Valid(), m.valid(), m.pos, len(m.entries))
	}
	if !m.valid() {
		require.Nil(t, it.UserKey())
		require.Nil(t, it.Value())
		return
	}
	want := m.entries[m.pos]
	if string(it.UserKey()) != string(want.userKey) || it.Trailer() != want.trailer ||
		string(it.Value()) != string(want.value) {
		t.Fatalf("after %v: at %q#%d (%s), want %q#%d (%s)", history,
			it.UserKey(), it.Trailer(), it.Value(), want.userKey, want.trailer, want.value)
	}
}

func TestRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	trials, ops := 400, 200
	if *long {
		trials = 40000
	}
	for trial := 0; trial < trials; trial++ {
		children := randomChildren(rng, 8, 200)
		m := newModel(children)
		iters := newSliceIters(children)
		it := NewIter(asInternal(iters)...)
		var history []op
		for op := 0; op < ops; op++ {
			name, ok := step(rng, it, m)
			history = append(history, name)
			if len(history) > 6 {
				history = history[1:]
			}
			checkAgainstModel(t, it, m, ok, history)
		}
		require.NoError(t, it.Error())
		require.NoError(t, it.Close())
		for _, c := range iters {
			require.Equal(t, 1, c.closed)
		}
	}
}

// TestFullScans checks complete forward and backward scans, and a scan
// that turns around at every entry, over many equal keys.
func TestFullScans(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for trial := 0; trial < 50; trial++ {
		children := randomChildren(rng, 8, 50)
		m := newModel(children)
		it := NewIter(asInternal(newSliceIters(children))...)

		var forward []string
		for ok := it.First(); ok; ok = it.Next() {
			forward = append(forward, string(it.Value()))
		}
		var backward []string
		for ok := it.Last(); ok; ok = it.Prev() {
			backward = append(backward, string(it.Value()))
		}
		slices.Reverse(backward)
		require.Len(t, forward, len(m.entries))
		for i, e := range m.entries {
			require.Equal(t, string(e.value), forward[i])
		}
		require.Equal(t, forward, backward)

		// Zig-zag: Next, Prev, Next moves one entry forward each round.
		i := 0
		for ok := it.First(); ok; i++ {
			require.Equal(t, forward[i], string(it.Value()))
			if it.Prev() {
				require.Equal(t, forward[i-1], string(it.Value()))
				require.True(t, it.Next())
			} else {
				require.Zero(t, i)
				require.True(t, it.First())
			}
			ok = it.Next()
		}
		require.Equal(t, len(forward), i)
		require.NoError(t, it.Close())
	}
}

// TestIterCases runs testdata/iter: operation sequences on fixed children
// (no children, empty ones, unpositioned steps, the tie-break of equal keys
// across children and direction switches).
func TestIterCases(t *testing.T) {
	var children [][]entry
	golden.Run(t, "testdata/iter", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "define":
			children = nil
			for _, line := range c.Lines() {
				if line == "child" {
					children = append(children, []entry{})
					continue
				}
				f := strings.Fields(line)
				if len(f) != 3 || len(children) == 0 {
					t.Fatalf("%s: %q: want a child line, then \"key KIND.seq value\" lines", c.Pos, line)
				}
				tr, err := base.ParseTrailer(f[1])
				require.NoError(t, err, c.Pos)
				last := len(children) - 1
				children[last] = append(children[last], entry{userKey: []byte(f[0]), trailer: tr, value: []byte(f[2])})
			}
			return fmt.Sprintf("%d children", len(children))
		case "iter":
			iters := newSliceIters(children)
			it := NewIter(asInternal(iters)...)
			var out strings.Builder
			for _, line := range c.Lines() {
				f := strings.Fields(line)
				ok := false
				switch f[0] {
				case "first":
					ok = it.First()
				case "last":
					ok = it.Last()
				case "next":
					ok = it.Next()
				case "prev":
					ok = it.Prev()
				case "seek-ge", "seek-lt":
					tr := maxTrailer
					if len(f) == 3 {
						var err error
						tr, err = base.ParseTrailer(f[2])
						require.NoError(t, err, c.Pos)
					}
					if f[0] == "seek-ge" {
						ok = it.SeekGE([]byte(f[1]), tr)
					} else {
						ok = it.SeekLT([]byte(f[1]), tr)
					}
				default:
					t.Fatalf("%s: unknown operation %q", c.Pos, line)
				}
				require.Equal(t, ok, it.Valid(), "%s: %s", c.Pos, line)
				require.NoError(t, it.Error(), "%s: %s", c.Pos, line)
				if !ok {
					require.Nil(t, it.UserKey(), "%s: %s", c.Pos, line)
					require.Zero(t, it.Trailer(), "%s: %s", c.Pos, line)
					require.Nil(t, it.Value(), "%s: %s", c.Pos, line)
					fmt.Fprintf(&out, "%s: .\n", line)
					continue
				}
				tr := it.Trailer()
				fmt.Fprintf(&out, "%s: %s %s.%d %s\n", line, it.UserKey(), tr.Kind(), tr.SeqNum(), it.Value())
			}
			require.NoError(t, it.Close())
			for _, child := range iters {
				require.Equal(t, 1, child.closed)
			}
			return out.String()
		}
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		return ""
	})
}

// TestChildError makes one child fail on its k-th positioning call, for
// every k up to a bound, under a random workload. Until the merge reports
// the error its results must match the model; from the moment the child
// fails the merge must be stopped with that error; Close must close every
// child and return it.
func TestChildError(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 40; trial++ {
		children := randomChildren(rng, 6, 40)
		if len(children) == 0 {
			continue
		}
		failing := rng.Intn(len(children))
		for k := 1; k <= 30; k++ {
			m := newModel(children)
			iters := newSliceIters(children)
			iters[failing].failAt = k
			it := NewIter(asInternal(iters)...)
			var history []op
			for op := 0; op < 60; op++ {
				name, ok := step(rng, it, m)
				history = append(history, name)
				if iters[failing].err == nil {
					require.NoError(t, it.Error())
					checkAgainstModel(t, it, m, ok, history)
					continue
				}
				require.False(t, ok, "%v", history)
				require.False(t, it.Valid())
				require.True(t, errors.Is(it.Error(), errInjected), "%v: %v", history, it.Error())
				require.Contains(t, it.Error().Error(), fmt.Sprintf("merge: child %d: ", failing))
			}
			err := it.Close()
			if iters[failing].err != nil {
				require.True(t, errors.Is(err, errInjected), "%v", err)
			} else {
				require.NoError(t, err)
			}
			for _, c := range iters {
				require.Equal(t, 1, c.closed)
			}
			require.False(t, it.First())
			require.True(t, errors.Is(it.Error(), base.ErrClosed) || errors.Is(it.Error(), errInjected))
		}
	}
}

func TestErrorIsSticky(t *testing.T) {
	good := newSliceIter([]entry{{userKey: []byte("a"), trailer: 1}, {userKey: []byte("c"), trailer: 1}})
	bad := newSliceIter([]entry{{userKey: []byte("b"), trailer: 1}})
	bad.failAt = 2
	it := NewIter(good, bad)
	require.True(t, it.First())
	require.Equal(t, "a", string(it.UserKey()))
	require.False(t, it.SeekGE([]byte("b"), maxTrailer)) // bad's second call fails
	require.ErrorIs(t, it.Error(), errInjected)
	// Unlike the child, which fails every call from now on, a healthy
	// child would let a seek succeed; the merge refuses regardless.
	bad.err, bad.failAt = nil, 0
	require.False(t, it.First())
	require.False(t, it.Last())
	require.ErrorIs(t, it.Error(), errInjected)
	require.ErrorIs(t, it.Close(), errInjected)
}

func TestClose(t *testing.T) {
	a := newSliceIter([]entry{{userKey: []byte("a"), trailer: 1}})
	b := newSliceIter(nil)
	c := newSliceIter(nil)
	b.closeErr = errors.New("b close failed")
	c.closeErr = errors.New("c close failed")
	it := NewIter(a, b, c)
	require.True(t, it.First())
	err := it.Close()
	require.ErrorIs(t, err, b.closeErr)
	require.Contains(t, err.Error(), "merge: closing child 1")
	require.Equal(t, []int{1, 1, 1}, []int{a.closed, b.closed, c.closed})
	require.False(t, it.Valid())
	require.False(t, it.First())
	require.ErrorIs(t, it.Error(), base.ErrClosed)
	require.ErrorIs(t, it.Close(), base.ErrClosed)
	require.Equal(t, []int{1, 1, 1}, []int{a.closed, b.closed, c.closed}, "second Close must not close children again")

	// Init makes a closed Iter usable again.
	d := newSliceIter([]entry{{userKey: []byte("d"), trailer: 1}})
	it.Init(d)
	require.NoError(t, it.Error())
	require.True(t, it.First())
	require.Equal(t, "d", string(it.UserKey()))
	require.NoError(t, it.Close())
}

// benchChildren returns n children holding total 16-byte keys, dealt at
// random, like overlapping L0 tables and memtables.
func benchChildren(n, total int) ([][]entry, [][]byte) {
	rng := rand.New(rand.NewSource(4))
	children := make([][]entry, n)
	keys := make([][]byte, total)
	for i := range keys {
		key := make([]byte, 16)
		key[7] = byte(i / 50000)
		key[15], key[14], key[13] = byte(i), byte(i>>8), byte(i>>16)
		keys[i] = key
		c := rng.Intn(n)
		children[c] = append(children[c], entry{userKey: key, trailer: base.MakeTrailer(base.SeqNum(i+1), base.KindSet), value: key[8:]})
	}
	for _, entries := range children {
		sortEntries(entries)
	}
	return children, keys
}

func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	children := randomChildren(rng, 8, 200)
	for len(children) < 8 {
		children = append(children, randomChildren(rng, 8, 200)...)
	}
	children = children[:8]
	m := newModel(children)
	iters := asInternal(newSliceIters(children))
	it := NewIter(iters...)
	allocs := testing.AllocsPerRun(50, func() {
		for op := 0; op < 200; op++ {
			step(rng, it, m)
		}
	})
	require.Zero(t, allocs, "positioning and stepping")

	allocs = testing.AllocsPerRun(50, func() {
		it.Init(iters...)
		it.First()
	})
	require.Zero(t, allocs, "Init with as many children as before")

	// Init with its own children slice, and with fewer children.
	it.Init(it.children...)
	require.Equal(t, len(m.entries) > 0, it.First())
	it.Init(it.children[:1]...)
	require.Len(t, it.children, 1)
	require.Nil(t, it.children[:2][1], "dropped children must not stay referenced")
	m = newModel(children[:1])
	var history []op
	for i := 0; i < 100; i++ {
		o, ok := step(rng, it, m)
		history = append(history, o)
		checkAgainstModel(t, it, m, ok, history)
	}
}

func BenchmarkNext(b *testing.B) {
	children, _ := benchChildren(8, 100000)
	it := NewIter(asInternal(newSliceIters(children))...)
	it.First()
	b.ReportAllocs()
	for b.Loop() {
		if !it.Next() {
			it.First()
		}
	}
}

func BenchmarkPrev(b *testing.B) {
	children, _ := benchChildren(8, 100000)
	it := NewIter(asInternal(newSliceIters(children))...)
	it.Last()
	b.ReportAllocs()
	for b.Loop() {
		if !it.Prev() {
			it.Last()
		}
	}
}

func BenchmarkSeekGE(b *testing.B) {
	children, keys := benchChildren(8, 100000)
	it := NewIter(asInternal(newSliceIters(children))...)
	rng := rand.New(rand.NewSource(6))
	seeks := make([][]byte, 1024)
	for i := range seeks {
		seeks[i] = keys[rng.Intn(len(keys))]
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		it.SeekGE(seeks[i&1023], maxTrailer)
	}
}

// BenchmarkSeekGEChildrenOnly seeks the same 8 children directly, without
// the merge: the difference from BenchmarkSeekGE is the merge's own cost.
func BenchmarkSeekGEChildrenOnly(b *testing.B) {
	children, keys := benchChildren(8, 100000)
	iters := newSliceIters(children)
	rng := rand.New(rand.NewSource(6))
	seeks := make([][]byte, 1024)
	for i := range seeks {
		seeks[i] = keys[rng.Intn(len(keys))]
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for _, c := range iters {
			c.SeekGE(seeks[i&1023], maxTrailer)
		}
	}
}

package block

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

type entry struct {
	key     []byte
	trailer base.Trailer
	value   []byte
}

func sortEntries(es []entry) []entry {
	sort.Slice(es, func(i, j int) bool {
		return base.CompareInternal(es[i].key, es[i].trailer, es[j].key, es[j].trailer) < 0
	})
	// Drop exact duplicates (same user key and trailer).
	out := es[:0]
	for i, e := range es {
		if i > 0 && bytes.Equal(e.key, out[len(out)-1].key) && e.trailer == out[len(out)-1].trailer {
			continue
		}
		out = append(out, e)
	}
	return out
}

// randomEntries makes keys of 0-64 bytes that share prefixes: a per-block
// base, then a few bytes from a small alphabet so that keys collide often.
func randomEntries(rng *rand.Rand, n int) []entry {
	prefix := make([]byte, rng.Intn(20))
	rng.Read(prefix)
	var es []entry
	for i := 0; i < n; i++ {
		k := append([]byte(nil), prefix[:rng.Intn(len(prefix)+1)]...)
		if rng.Intn(4) > 0 {
			k = append([]byte(nil), prefix...)
		}
		for j := rng.Intn(64 - len(k) + 1); j > 0; j-- {
			k = append(k, byte('a'+rng.Intn(3)))
		}
		v := make([]byte, rng.Intn(20))
		rng.Read(v)
		if rng.Intn(2) == 0 && len(es) > 0 {
			// A value sharing a prefix with the previous one.
			prev := es[len(es)-1].value
			v = append(append([]byte(nil), prev[:rng.Intn(len(prev)+1)]...), v[:rng.Intn(len(v)+1)]...)
		}
		es = append(es, entry{key: k, trailer: base.MakeTrailer(base.SeqNum(rng.Intn(5)), base.Kind(rng.Intn(3))), value: v})
	}
	return sortEntries(es)
}

func build(es []entry, restartInterval int, commonPrefix bool) []byte {
	return buildShared(es, restartInterval, commonPrefix, false)
}

func buildShared(es []entry, restartInterval int, commonPrefix, shareValues bool) []byte {
	b := NewBuilder(restartInterval, commonPrefix)
	b.ShareValuePrefixes = shareValues
	for _, e := range es {
		b.Add(e.key, e.trailer, e.value)
	}
	return append([]byte(nil), b.Finish()...)
}

// modelIter positions over a sorted slice; -1 or len means invalid.
type modelIter struct {
	es  []entry
	pos int
}

func (m *modelIter) valid() bool { return m.pos >= 0 && m.pos < len(m.es) }

func (m *modelIter) seekGE(k []byte, t base.Trailer) {
	m.pos = sort.Search(len(m.es), func(i int) bool {
		return base.CompareInternal(m.es[i].key, m.es[i].trailer, k, t) >= 0
	})
}

func (m *modelIter) seekLT(k []byte, t base.Trailer) {
	m.seekGE(k, t)
	m.pos--
}

func checkSame(t *testing.T, it *Iter, m *modelIter, ok bool, what string) {
	t.Helper()
	require.NoError(t, it.Error(), what)
	require.Equal(t, m.valid(), ok, what)
	require.Equal(t, m.valid(), it.Valid(), what)
	if ok {
		e := m.es[m.pos]
		require.True(t, bytes.Equal(e.key, it.UserKey()), "%s: key %q, want %q", what, it.UserKey(), e.key)
		require.Equal(t, e.trailer, it.Trailer(), what)
		require.True(t, bytes.Equal(e.value, it.Value()), "%s: value %x, want %x", what, it.Value(), e.value)
	}
}

// randomTarget returns seek targets that hit keys, fall between them,
// straddle the common prefix, and lie before or after all keys.
func randomTarget(rng *rand.Rand, es []entry) ([]byte, base.Trailer) {
	tr := base.MakeTrailer(base.SeqNum(rng.Intn(6)), base.Kind(rng.Intn(3)))
	if rng.Intn(8) == 0 {
		tr = base.SeekTrailer(base.SeqNumMax)
	}
	if len(es) == 0 || rng.Intn(10) == 0 {
		k := make([]byte, rng.Intn(10))
		rng.Read(k)
		return k, tr
	}
	k := append([]byte(nil), es[rng.Intn(len(es))].key...)
	switch rng.Intn(6) {
	case 0: // exact key
	case 1: // truncated: may cut into the common prefix
		k = k[:rng.Intn(len(k)+1)]
	case 2: // extended
		k = append(k, byte(rng.Intn(256)))
	case 3: // one byte changed, maybe inside the prefix
		if len(k) > 0 {
			k[rng.Intn(len(k))] = byte(rng.Intn(256))
		}
	case 4:
		k = nil
	case 5:
		k = bytes.Repeat([]byte{0xff}, 1+rng.Intn(70))
	}
	return k, tr
}

func TestBlockRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	for iter := 0; iter < 300; iter++ {
		n := []int{0, 1, 2, 17, 100, 1000}[rng.Intn(6)]
		es := randomEntries(rng, n)
		for _, ri := range []int{1, 16, 1024} {
			for _, cp := range []bool{false, true} {
				sv := rng.Intn(2) == 0
				name := fmt.Sprintf("iter=%d n=%d restart=%d prefix=%v shareValues=%v", iter, len(es), ri, cp, sv)
				data := buildShared(es, ri, cp, sv)
				require.NoError(t, Validate(data), name)
				var it Iter
				require.NoError(t, it.Init(data), name)
				m := &modelIter{es: es, pos: -1}
				for op := 0; op < 200; op++ {
					var ok bool
					var what string
					switch rng.Intn(7) {
					case 0:
						k, tr := randomTarget(rng, es)
						ok, what = it.SeekGE(k, tr), fmt.Sprintf("SeekGE(%q,%d)", k, tr)
						m.seekGE(k, tr)
					case 1:
						k, tr := randomTarget(rng, es)
						ok, what = it.SeekLT(k, tr), fmt.Sprintf("SeekLT(%q,%d)", k, tr)
						m.seekLT(k, tr)
					case 2:
						ok, what = it.First(), "First"
						m.pos = 0
					case 3:
						ok, what = it.Last(), "Last"
						m.pos = len(es) - 1
					case 4, 5:
						if !m.valid() {
							continue
						}
						ok, what = it.Next(), "Next"
						m.pos++
					case 6:
						if !m.valid() {
							continue
						}
						ok, what = it.Prev(), "Prev"
						m.pos--
					}
					checkSame(t, &it, m, ok, name+" "+what)
				}
			}
		}
	}
}

func entryLocationKey(ledger, entry uint64) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], ledger)
	binary.BigEndian.PutUint64(k[8:], entry)
	return k[:]
}

func TestCommonPrefixStoredOnce(t *testing.T) {
	var es []entry
	for e := uint64(0); e < 1000; e++ {
		es = append(es, entry{key: entryLocationKey(7, 5000+e), trailer: base.MakeTrailer(0, base.KindSet), value: make([]byte, 8)})
	}
	on := build(es, 16, true)
	off := build(es, 16, false)
	var it Iter
	require.NoError(t, it.Init(on))
	// Entries 5000..5999 share the ledger and 6 of the entry id's 8 bytes.
	require.Equal(t, entryLocationKey(7, 5000)[:14], it.CommonPrefix())
	require.NoError(t, it.Init(off))
	require.Empty(t, it.CommonPrefix())
	require.Less(t, len(on), len(off))
	t.Logf("1000 entry-location keys, restart 16: %d bytes with prefix, %d without", len(on), len(off))
}

func TestEmptyBlock(t *testing.T) {
	data := build(nil, 16, true)
	require.Equal(t, 4, len(data))
	require.NoError(t, Validate(data))
	var it Iter
	require.NoError(t, it.Init(data))
	require.False(t, it.First())
	require.False(t, it.Last())
	require.False(t, it.SeekGE([]byte("a"), 0))
	require.False(t, it.SeekLT([]byte("a"), 0))
	require.NoError(t, it.Error())
}

// TestCorruptionNeverPanics flips and truncates every byte of a block: the
// frame check or Validate must fail, or the block must still iterate in
// order; nothing may panic.
func TestCorruptionNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	es := randomEntries(rng, 60)
	for _, cp := range []bool{false, true} {
		data := buildShared(es, 4, cp, cp)
		for i := 0; i < len(data); i++ {
			for _, mut := range []func([]byte) []byte{
				func(b []byte) []byte { b[i] ^= 0x5a; return b },
				func(b []byte) []byte { return b[:i] },
			} {
				bad := mut(append([]byte(nil), data...))
				exercise(bad)
				if err := Validate(bad); err != nil {
					require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
				}
			}
		}
	}
}

func exercise(data []byte) {
	var it Iter
	if it.Init(data) != nil {
		return
	}
	for ok := it.First(); ok; ok = it.Next() {
	}
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	it.SeekGE([]byte("ab"), 3)
	it.Prev()
	it.SeekLT([]byte("ab"), 3)
	it.Next()
	it.SeekGE(nil, 0)
	it.SeekLT(bytes.Repeat([]byte{0xff}, 9), 0)
}

func FuzzBlock(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	f.Add(build(randomEntries(rng, 20), 4, true))
	f.Add(build(randomEntries(rng, 5), 1, false))
	f.Add(buildShared(randomEntries(rng, 30), 8, true, true))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		exercise(data)
		if err := Validate(data); err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("unmarked error: %v", err)
		}
	})
}

func benchmarkSeekGE(b *testing.B, commonPrefix bool) {
	bld := NewBuilder(16, commonPrefix)
	var keys [][]byte
	for e := uint64(0); bld.EstimatedSize() < 64<<10; e++ {
		k := entryLocationKey(123, 1_000_000+e)
		keys = append(keys, k)
		bld.Add(k, base.MakeTrailer(0, base.KindSet), make([]byte, 8))
	}
	data := append([]byte(nil), bld.Finish()...)
	var it Iter
	if err := it.Init(data); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[(i*7919)%len(keys)]
		if !it.SeekGE(k, base.SeekTrailer(base.SeqNumMax)) {
			b.Fatal("not found")
		}
	}
}

func BenchmarkSeekGE(b *testing.B) {
	b.Run("prefix=on", func(b *testing.B) { benchmarkSeekGE(b, true) })
	b.Run("prefix=off", func(b *testing.B) { benchmarkSeekGE(b, false) })
}

func TestSeekGEAllocatesNothing(t *testing.T) {
	bld := NewBuilder(16, true)
	for e := uint64(0); e < 500; e++ {
		bld.Add(entryLocationKey(1, e), base.MakeTrailer(0, base.KindSet), make([]byte, 8))
	}
	data := append([]byte(nil), bld.Finish()...)
	var it Iter
	require.NoError(t, it.Init(data))
	it.SeekGE(entryLocationKey(1, 3), 0) // grow buffers
	it.SeekLT(entryLocationKey(1, 3), 0)
	allocs := testing.AllocsPerRun(100, func() {
		it.SeekGE(entryLocationKey(1, 250), base.SeekTrailer(base.SeqNumMax))
		it.SeekLT(entryLocationKey(1, 250), base.SeekTrailer(base.SeqNumMax))
		it.Prev()
	})
	require.Zero(t, allocs)
}

func TestShareValuePrefixesShrinksLocations(t *testing.T) {
	var es []entry
	for e := uint64(0); e < 1000; e++ {
		es = append(es, entry{key: entryLocationKey(7, e), trailer: base.MakeTrailer(0, base.KindSet), value: entryLocationKey(0, 1<<32|(1024+e*1028))[8:]})
	}
	plain, shared := buildShared(es, 16, true, false), buildShared(es, 16, true, true)
	t.Logf("1000 entry locations: %d bytes, %d with shared value prefixes", len(plain), len(shared))
	require.Less(t, len(shared), len(plain)*3/4)
	var it Iter
	require.NoError(t, it.Init(shared))
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		require.Equal(t, es[i].value, it.Value())
		i++
	}
	require.Equal(t, len(es), i)
}

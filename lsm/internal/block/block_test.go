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

// denseEntries makes entry-location-like runs that compact entries are for:
// keys of one length counting up by small steps (now and then a big jump or
// a longer key), values counting up, trailers mostly equal — so entries
// differ from their predecessor in 1 to 16 trailing bytes, on both sides of
// the compact-entry limits.
func denseEntries(rng *rand.Rand, n int) []entry {
	var es []entry
	var k, v uint64 = rng.Uint64() >> 8, rng.Uint64()
	for i := 0; i < n; i++ {
		switch rng.Intn(20) {
		case 0:
			k += rng.Uint64() >> uint(rng.Intn(64))
		default:
			k += uint64(1 + rng.Intn(3))
		}
		v += uint64(rng.Intn(1 << uint(rng.Intn(40)+1)))
		key := binary.BigEndian.AppendUint64([]byte("ledger/"), k)
		if rng.Intn(30) == 0 {
			key = append(key, 'x') // a longer key
		}
		value := binary.BigEndian.AppendUint64(nil, v)
		if rng.Intn(30) == 0 {
			value = value[:rng.Intn(9)] // a shorter value
		}
		tr := base.MakeTrailer(0, base.KindSet)
		if rng.Intn(10) == 0 {
			tr = base.MakeTrailer(base.SeqNum(rng.Intn(5)), base.Kind(rng.Intn(3)))
		}
		es = append(es, entry{key: key, trailer: tr, value: value})
	}
	return sortEntries(es)
}

// Block encodings the builder can produce.
const (
	encPlain       = iota // keys share prefixes, values stored whole
	encShareValues        // values share prefixes with their predecessor
	encCompact            // and compact entries
	numEncodings
)

func build(es []entry, restartInterval int, commonPrefix bool) []byte {
	return buildShared(es, restartInterval, commonPrefix, encPlain)
}

func buildShared(es []entry, restartInterval int, commonPrefix bool, enc int) []byte {
	b := NewBuilder(restartInterval, commonPrefix)
	b.ShareValuePrefixes = enc >= encShareValues
	b.CompactEntries = enc == encCompact
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
	prevDiffers, sameSeen := 0, 0
	defer func() {
		if !t.Failed() {
			require.Positive(t, prevDiffers, "PrevKeyDiffers never said yes")
			require.Positive(t, sameSeen, "no entry followed another version of its key")
		}
	}()
	for iter := 0; iter < 300; iter++ {
		n := []int{0, 1, 2, 17, 100, 1000}[rng.Intn(6)]
		es := randomEntries(rng, n)
		if iter%2 == 1 {
			es = denseEntries(rng, n)
		}
		for _, ri := range []int{1, 16, 1024} {
			for _, cp := range []bool{false, true} {
				enc := rng.Intn(numEncodings)
				name := fmt.Sprintf("iter=%d n=%d restart=%d prefix=%v encoding=%d", iter, len(es), ri, cp, enc)
				data := buildShared(es, ri, cp, enc)
				require.NoError(t, Validate(data), name)
				var it Iter
				require.NoError(t, it.Init(data), name)
				// The stride is a hint: right, wrong or absent, the
				// answers must not change.
				stride := []int{0, 1, ri, 7, 1000}[rng.Intn(5)]
				it.SetRestartStride(stride)
				name += fmt.Sprintf(" stride=%d", stride)
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
					// PrevKeyDiffers may say "unknown" (false), never a
					// wrong "differs".
					if it.PrevKeyDiffers() {
						require.True(t, m.pos > 0 && !bytes.Equal(es[m.pos-1].key, es[m.pos].key), "%s: PrevKeyDiffers at %d", name+" "+what, m.pos)
						prevDiffers++
					}
					if m.valid() && m.pos > 0 && bytes.Equal(es[m.pos-1].key, es[m.pos].key) {
						sameSeen++
					}
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
	dense := denseEntries(rng, 60)
	for _, c := range []struct {
		es  []entry
		cp  bool
		enc int
	}{{es, false, encPlain}, {es, true, encShareValues}, {dense, true, encCompact}, {dense, false, encCompact}} {
		data := buildShared(c.es, 4, c.cp, c.enc)
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
	f.Add(buildShared(randomEntries(rng, 30), 8, true, encShareValues))
	f.Add(buildShared(denseEntries(rng, 40), 8, true, encCompact))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		exercise(data)
		if err := Validate(data); err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("unmarked error: %v", err)
		}
	})
}

// benchmarkSeekGE seeks random keys of a 64 KiB block of entry locations;
// with entriesPerLedger > 0 the block holds several ledgers of that many
// entries (small ledgers), otherwise one.
func benchmarkSeekGE(b *testing.B, commonPrefix bool, restartInterval, enc int, entriesPerLedger uint64) {
	bld := NewBuilder(restartInterval, commonPrefix)
	bld.ShareValuePrefixes = enc >= encShareValues
	bld.CompactEntries = enc == encCompact
	var keys [][]byte
	for e := uint64(0); bld.EstimatedSize() < 64<<10; e++ {
		k := entryLocationKey(123, 1_000_000+e)
		if entriesPerLedger > 0 {
			k = entryLocationKey(123+e/entriesPerLedger, e%entriesPerLedger)
		}
		keys = append(keys, k)
		// Locations of 1 KiB entries, as the benchmark's load writes them.
		bld.Add(k, base.MakeTrailer(0, base.KindSet), binary.BigEndian.AppendUint64(nil, 1<<32|(1028*e+4)))
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
	b.Run("prefix=on", func(b *testing.B) { benchmarkSeekGE(b, true, 16, encPlain, 0) })
	b.Run("prefix=off", func(b *testing.B) { benchmarkSeekGE(b, false, 16, encPlain, 0) })
	for _, ri := range []int{16, 24, 32} {
		b.Run(fmt.Sprintf("compact/restart=%d", ri), func(b *testing.B) { benchmarkSeekGE(b, true, ri, encCompact, 0) })
	}
	for _, n := range []uint64{5000, 1000, 100} {
		b.Run(fmt.Sprintf("compact/restart=24/entries-per-ledger=%d", n), func(b *testing.B) { benchmarkSeekGE(b, true, 24, encCompact, n) })
	}
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
	plain, shared, compact := buildShared(es, 16, true, encPlain), buildShared(es, 16, true, encShareValues), buildShared(es, 16, true, encCompact)
	t.Logf("1000 entry locations: %d bytes, %d with shared value prefixes, %d with compact entries", len(plain), len(shared), len(compact))
	require.Less(t, len(shared), len(plain)*3/4)
	require.Less(t, len(compact), len(shared)*2/3)
	for _, data := range [][]byte{shared, compact} {
		var it Iter
		require.NoError(t, it.Init(data))
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			require.Equal(t, es[i].key, it.UserKey())
			require.Equal(t, es[i].value, it.Value())
			i++
		}
		require.Equal(t, len(es), i)
		require.NoError(t, Validate(data))
	}
}

// TestCompactEntryAtRestartIsCorrupt: a restart point must hold a full
// entry; a compact one there has no predecessor to patch.
func TestCompactEntryAtRestartIsCorrupt(t *testing.T) {
	var es []entry
	for e := uint64(0); e < 40; e++ {
		es = append(es, entry{key: entryLocationKey(7, e), trailer: base.MakeTrailer(0, base.KindSet), value: entryLocationKey(0, e)[8:]})
	}
	data := buildShared(es, 16, false, encCompact)
	var it Iter
	require.NoError(t, it.Init(data))
	second := it.restart(1)
	require.Less(t, data[second], byte(compactEntryBit), "restart entries are full")
	bad := append([]byte(nil), data...)
	bad[second] = compactEntryBit | 1<<3 | 1
	err := Validate(bad)
	require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
	require.NoError(t, it.Init(bad))
	require.False(t, it.SeekGE(entryLocationKey(7, 20), base.SeekTrailer(base.SeqNumMax)))
	require.True(t, errors.Is(it.Error(), base.ErrCorruption), "%v", it.Error())
}

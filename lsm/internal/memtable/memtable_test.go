package memtable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

func TestMemtableGetVersions(t *testing.T) {
	m := New(1 << 16)
	require.True(t, m.Empty())
	add := func(seq base.SeqNum, kind base.Kind, k, v string) {
		require.NoError(t, m.Add(seq, kind, []byte(k), []byte(v)))
	}
	add(1, base.KindSet, "k", "v1")
	add(3, base.KindSet, "k", "v3")
	add(5, base.KindDelete, "k", "")
	add(7, base.KindSet, "k", "v7")
	add(2, base.KindSet, "ka", "ka2") // a longer key sharing the prefix
	add(4, base.KindSet, "", "empty4")
	add(6, base.KindRangeDelete, "a", "z") // not consulted by Get
	require.False(t, m.Empty())
	require.Equal(t, 7, m.Count())

	type want struct {
		value string
		kind  base.Kind
		found bool
	}
	cases := []struct {
		key  string
		seq  base.SeqNum
		want want
	}{
		{"k", 0, want{}},
		{"k", 1, want{"v1", base.KindSet, true}},
		{"k", 2, want{"v1", base.KindSet, true}},
		{"k", 3, want{"v3", base.KindSet, true}},
		{"k", 4, want{"v3", base.KindSet, true}},
		{"k", 5, want{"", base.KindDelete, true}},
		{"k", 6, want{"", base.KindDelete, true}},
		{"k", 7, want{"v7", base.KindSet, true}},
		{"k", base.SeqNumMax, want{"v7", base.KindSet, true}},
		{"k", base.SeqNumMax + 12345, want{"v7", base.KindSet, true}}, // clamped
		{"ka", 1, want{}},
		{"ka", 2, want{"ka2", base.KindSet, true}},
		{"", 3, want{}},
		{"", 4, want{"empty4", base.KindSet, true}},
		{"j", base.SeqNumMax, want{}},
		{"kb", base.SeqNumMax, want{}},
		{"a", base.SeqNumMax, want{}}, // the range tombstone's start is no point entry
	}
	for _, c := range cases {
		v, kind, found := m.Get([]byte(c.key), c.seq)
		require.Equal(t, c.want, want{string(v), kind, found}, "Get(%q, %d)", c.key, c.seq)
	}
}

func TestMemtableRangeDels(t *testing.T) {
	m := New(1 << 16)
	require.NoError(t, m.Add(9, base.KindRangeDelete, []byte("b"), []byte("d")))
	require.NoError(t, m.Add(4, base.KindRangeDelete, []byte("a"), []byte("c")))
	require.NoError(t, m.Add(2, base.KindRangeDelete, []byte("b"), []byte("x")))
	require.NoError(t, m.Add(3, base.KindSet, []byte("b"), []byte("v")))

	var got []string
	it := m.NewRangeDelIter()
	for ok := it.First(); ok; ok = it.Next() {
		require.Equal(t, base.KindRangeDelete, it.Trailer().Kind())
		got = append(got, fmt.Sprintf("[%s,%s)#%d", it.UserKey(), it.Value(), it.Trailer().SeqNum()))
	}
	require.Equal(t, []string{"[a,c)#4", "[b,d)#9", "[b,x)#2"}, got)

	var points Iterator
	m.InitPointIter(&points)
	require.True(t, points.First())
	require.Equal(t, "b", string(points.UserKey()))
	require.False(t, points.Next())

	m.InitRangeDelIter(it)
	require.True(t, it.SeekGE([]byte("b"), base.SeekTrailer(5)))
	require.Equal(t, "x", string(it.Value()))
}

func TestMemtableAddErrors(t *testing.T) {
	m := New(1 << 12)
	size := m.ApproximateSize()
	for _, c := range []struct {
		seq      base.SeqNum
		kind     base.Kind
		key, val string
		msg      string
	}{
		{base.SeqNumMax + 1, base.KindSet, "k", "v", "exceeds the maximum"},
		{1, base.KindMax, "k", "v", "unknown kind 255"},
		{1, base.Kind(4), "k", "v", "unknown kind 4"},
		{1, base.KindRangeDelete, "b", "b", "is empty"},
		{1, base.KindRangeDelete, "c", "b", "is empty"},
		{1, base.KindRangeDelete, "", "", "is empty"},
	} {
		err := m.Add(c.seq, c.kind, []byte(c.key), []byte(c.val))
		require.ErrorContains(t, err, c.msg, "Add(%d, %d, %q, %q)", c.seq, c.kind, c.key, c.val)
	}
	require.True(t, m.Empty())
	require.Equal(t, size, m.ApproximateSize())

	require.NoError(t, m.Add(base.SeqNumMax, base.KindSet, []byte("k"), nil))
	require.ErrorIs(t, m.Add(base.SeqNumMax, base.KindSet, []byte("k"), []byte("other")), ErrDuplicateKey)
	require.NoError(t, m.Add(1, base.KindRangeDelete, nil, []byte{0}))
	require.ErrorIs(t, m.Add(1, base.KindRangeDelete, nil, []byte{1}), ErrDuplicateKey)
}

// TestMemtableSharedArena fills the arena with range tombstones and checks
// that point entries then run out of room too: one budget covers both.
func TestMemtableSharedArena(t *testing.T) {
	const capacity = 8 << 10
	m := New(capacity)
	require.Equal(t, capacity, m.Capacity())
	require.Equal(t, capacity-m.ApproximateSize(), m.Available())
	start := m.ApproximateSize()
	seq := base.SeqNum(1)
	for {
		key := binary.BigEndian.AppendUint64(nil, uint64(seq))
		end := binary.BigEndian.AppendUint64(nil, uint64(seq)+1)
		fits := MaxEntrySize(len(key), len(end)) <= m.Available()
		err := m.Add(seq, base.KindRangeDelete, key, end)
		if err != nil {
			require.ErrorIs(t, err, ErrArenaFull)
			require.False(t, fits, "MaxEntrySize promised room")
			break
		}
		seq++
	}
	require.Greater(t, m.ApproximateSize(), start)
	require.LessOrEqual(t, m.ApproximateSize(), capacity)
	count := m.Count()
	// With the range tombstones' node heights drawn at random the last
	// failure may leave room for a small entry; add until points fail too.
	for {
		err := m.Add(seq, base.KindSet, binary.BigEndian.AppendUint64(nil, uint64(seq)), []byte("12345678"))
		if err != nil {
			require.ErrorIs(t, err, ErrArenaFull)
			break
		}
		seq++
	}
	require.Less(t, m.Available(), MaxEntrySize(8, 8))
	require.GreaterOrEqual(t, m.Count(), count)

	// Everything added is still there and in order.
	it := m.NewRangeDelIter()
	var n int
	for ok := it.First(); ok; ok = it.Next() {
		n++
		require.Equal(t, binary.BigEndian.Uint64(it.UserKey())+1, binary.BigEndian.Uint64(it.Value()))
	}
	require.Equal(t, count, n)
}

func TestMemtableRandomizedGet(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	g := newKeyGen(rng)
	m := New(scale(4<<20, 20))
	// versions[key] lists (seq, kind, value) in insertion order; seqs are
	// unique across the memtable, as the engine assigns them.
	type version struct {
		seq   base.SeqNum
		kind  base.Kind
		value string
	}
	versions := map[string][]version{}
	var keys [][]byte
	n := scale(3000, 20)
	for seq := base.SeqNum(1); seq <= base.SeqNum(n); seq++ {
		k := g.key()
		if len(keys) > 0 && rng.Intn(2) == 0 {
			k = keys[rng.Intn(len(keys))]
		}
		kind := base.KindSet
		if rng.Intn(4) == 0 {
			kind = base.KindDelete
		}
		v := fmt.Sprintf("v%d", seq)
		if kind == base.KindDelete {
			v = ""
		}
		// Seqs are added out of order within a window, as concurrent
		// batches may reach the memtable out of sequence order.
		s := seq
		if rng.Intn(3) == 0 {
			s = base.SeqNum(n) + seq
		}
		require.NoError(t, m.Add(s, kind, k, []byte(v)))
		if _, ok := versions[string(k)]; !ok {
			keys = append(keys, k)
		}
		versions[string(k)] = append(versions[string(k)], version{s, kind, v})
	}
	for range scale(5000, 20) {
		k := g.key()
		if rng.Intn(4) != 0 {
			k = keys[rng.Intn(len(keys))]
		}
		readSeq := base.SeqNum(rng.Intn(2*n + 2))
		var best *version
		for i, v := range versions[string(k)] {
			if v.seq <= readSeq && (best == nil || v.seq > best.seq) {
				best = &versions[string(k)][i]
			}
		}
		value, kind, found := m.Get(k, readSeq)
		if best == nil {
			require.False(t, found, "Get(%q, %d)", k, readSeq)
			continue
		}
		require.True(t, found, "Get(%q, %d)", k, readSeq)
		require.Equal(t, best.kind, kind, "Get(%q, %d)", k, readSeq)
		require.Equal(t, best.value, string(value), "Get(%q, %d)", k, readSeq)
	}
}

func TestMemtableGetDoesNotAllocate(t *testing.T) {
	m := New(1 << 20)
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(i%10)), uint64(i))
		require.NoError(t, m.Add(base.SeqNum(i+1), base.KindSet, keys[i], keys[i][8:]))
	}
	missing := []byte("not there")
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		k := keys[i%len(keys)]
		i += 13
		if v, _, found := m.Get(k, base.SeqNumMax); !found || !bytes.Equal(v, k[8:]) {
			panic("Get missed")
		}
		if _, _, found := m.Get(missing, base.SeqNumMax); found {
			panic("Get found a missing key")
		}
	})
	require.Zero(t, allocs)
}

// TestRecycle: a memtable built in a used, poisoned arena is empty and
// behaves as a new one (random inserts of every height, checked against a
// model, and range tombstones), whatever the arena held; an arena of another size is
// not reused.
func TestRecycle(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	g := newKeyGen(rng)
	const size = 1 << 20
	var m *Memtable
	for round := 0; round < 4; round++ {
		old := m
		if old != nil {
			Poison(old) // nothing of the old bytes may be relied on
		}
		m = Recycle(m, size)
		if old != nil {
			require.Same(t, old.arena, m.arena, "round %d: the arena is reused", round)
		}
		require.True(t, m.Empty())
		require.Equal(t, arenaReserved+2*headNodeSize, m.ApproximateSize())
		var it Iterator
		m.InitPointIter(&it)
		require.False(t, it.First())
		m.InitRangeDelIter(&it)
		require.False(t, it.First())

		var b modelBuilder
		for i := 0; i < 3000; i++ {
			e := entry{g.key(), base.MakeTrailer(base.SeqNum(i+1), base.KindSet), []byte(fmt.Sprint(round, i))}
			if b.insert(e) {
				require.NoError(t, m.points.Add(e.key, e.trailer, e.value))
			}
		}
		require.NoError(t, m.Add(5000, base.KindRangeDelete, []byte("a"), []byte("b")))
		checkList(t, b.sorted(), m.points, g, 100)
		checkStructure(t, m.points)
		checkStructure(t, m.rangeDels)
		require.Equal(t, 1, m.rangeDels.Count())
	}
	require.NotSame(t, m.arena, Recycle(m, 2*size).arena, "another size: a new arena")
	require.NotNil(t, Recycle(nil, size))
}

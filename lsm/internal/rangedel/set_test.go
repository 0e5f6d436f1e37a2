package rangedel

import (
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

func TestSetCases(t *testing.T) {
	s := BuildSet([]Tombstone{tombstone("c", "g", 5), tombstone("a", "e", 9), tombstone("c", "d", 3)})
	require.Equal(t, "[a,c){9} [c,d){9,5,3} [d,e){9,5} [e,g){5}", formatFragments(s.Fragments()))
	require.Equal(t, 4, s.Len())
	tests := []struct {
		key     string
		readSeq base.SeqNum
		want    base.SeqNum
	}{
		{"", base.SeqNumMax, 0},
		{"a", base.SeqNumMax, 9},
		{"a", 9, 9},
		{"a", 8, 0},
		{"c", 8, 5},
		{"c", 5, 5},
		{"c", 4, 3},
		{"c", 3, 3},
		{"c", 2, 0},
		{"cz", 4, 3},
		{"d", 4, 0}, // [c,d)#3 ends before d
		{"d", 6, 5},
		{"f", 100, 5},
		{"g", base.SeqNumMax, 0},
		{"zz", base.SeqNumMax, 0},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, s.MaxCoveringSeq([]byte(tc.key), tc.readSeq), "key %q read at %d", tc.key, tc.readSeq)
	}
	require.True(t, s.Covers([]byte("c"), 4, 5))
	require.False(t, s.Covers([]byte("c"), 5, 5), "a tombstone deletes only lower seqs")
	require.False(t, s.Covers([]byte("c"), 1, 2), "the reader sees no tombstone")
	require.True(t, s.Covers([]byte("c"), 2, 3))
	require.False(t, s.Covers([]byte("c"), 9, 4), "an entry newer than the reader is not covered")
}

func TestSetEmpty(t *testing.T) {
	for _, s := range []*Set{nil, {}, BuildSet(nil), BuildSet([]Tombstone{tombstone("b", "a", 1)})} {
		require.Equal(t, 0, s.Len())
		require.Nil(t, s.Fragments())
		require.Equal(t, base.SeqNum(0), s.MaxCoveringSeq([]byte("a"), base.SeqNumMax))
		require.False(t, s.Covers(nil, 0, base.SeqNumMax))
		it := s.NewIter()
		require.Nil(t, it.First())
		require.Nil(t, it.Last())
		require.Nil(t, it.SeekGE([]byte("a")))
		require.Nil(t, it.SeekLT([]byte("a")))
	}
}

// TestSetRandom compares Covers and MaxCoveringSeq with a check of every raw
// tombstone, for random tombstones and random queries.
func TestSetRandom(t *testing.T) {
	rng := newRand(t)
	keys := universe(3)
	for round := 0; round < rounds(1000, 50); round++ {
		ts := randomTombstones(rng, 12)
		s := BuildSet(ts)
		viaNew, err := NewSet(FragmentTombstones(ts))
		require.NoError(t, err)
		for q := 0; q < 200; q++ {
			key := keys[rng.Intn(len(keys))]
			readSeq := base.SeqNum(rng.Intn(15))
			if rng.Intn(8) == 0 {
				readSeq = base.SeqNumMax
			}
			keySeq := base.SeqNum(rng.Intn(15))
			want := modelMaxCoveringSeq(ts, key, readSeq)
			require.Equal(t, want, s.MaxCoveringSeq(key, readSeq),
				"key %q read at %d, tombstones %s, fragments %s", key, readSeq, tombstoneList(ts), fragmentList(s.Fragments()))
			require.Equal(t, want, viaNew.MaxCoveringSeq(key, readSeq))
			require.Equal(t, modelCovers(ts, key, keySeq, readSeq), s.Covers(key, keySeq, readSeq),
				"key %q#%d read at %d, tombstones %s", key, keySeq, readSeq, tombstoneList(ts))
		}
	}
}

// TestFragmentVisibleSeqLong exercises the binary search over a fragment
// with many sequence numbers.
func TestFragmentVisibleSeqLong(t *testing.T) {
	f := Fragment{Start: []byte("a"), End: []byte("b")}
	for s := base.SeqNum(100); s >= 10; s -= 10 {
		f.Seqs = append(f.Seqs, s)
	}
	for readSeq := base.SeqNum(0); readSeq <= 110; readSeq++ {
		want := base.SeqNum(0)
		if readSeq >= 10 {
			want = min(readSeq/10*10, 100)
		}
		require.Equal(t, want, f.VisibleSeq(readSeq), "read at %d", readSeq)
	}
	require.Equal(t, base.SeqNum(0), (&Fragment{}).VisibleSeq(base.SeqNumMax))
}

func TestSetLookupsDoNotAllocate(t *testing.T) {
	s := BuildSet([]Tombstone{tombstone("c", "g", 5), tombstone("a", "e", 9), tombstone("c", "d", 3)})
	keys := [][]byte{[]byte("a"), []byte("c"), []byte("cc"), []byte("z")}
	var sink base.SeqNum
	allocs := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			sink += s.MaxCoveringSeq(k, 4)
			if s.Covers(k, 1, base.SeqNumMax) {
				sink++
			}
		}
	})
	require.Zero(t, allocs)
	require.NotZero(t, sink)

	var it Iter
	allocs = testing.AllocsPerRun(100, func() {
		it.Init(s)
		for f := it.SeekGE(keys[1]); f != nil; f = it.Next() {
			sink += f.Seqs[0]
		}
	})
	require.Zero(t, allocs)
}

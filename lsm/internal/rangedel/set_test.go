package rangedel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// TestSetCases runs testdata/set: lookups in fixed sets.
func TestSetCases(t *testing.T) {
	var s *Set
	golden.Run(t, "testdata/set", func(t *testing.T, c *golden.Case) string {
		var out strings.Builder
		switch c.Cmd {
		case "define":
			s = defineSet(t, c)
			return fmt.Sprintf("%s\nlen %d", formatFragments(s.Fragments()), s.Len())
		case "max-covering":
			for _, line := range c.Lines() {
				f := scriptFields(t, c, line, 2)
				fmt.Fprintf(&out, "%s: %d\n", line, s.MaxCoveringSeq(f.key(0), f.seq(1)))
			}
		case "covers":
			for _, line := range c.Lines() {
				f := scriptFields(t, c, line, 3)
				fmt.Fprintf(&out, "%s: %v\n", line, s.Covers(f.key(0), f.seq(1), f.seq(2)))
			}
		default:
			t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		}
		return out.String()
	})
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

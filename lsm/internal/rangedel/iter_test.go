package rangedel

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIterCases(t *testing.T) {
	s := BuildSet([]Tombstone{tombstone("b", "d", 1), tombstone("f", "h", 2), tombstone("h", "j", 3)})
	require.Equal(t, "[b,d){1} [f,h){2} [h,j){3}", formatFragments(s.Fragments()))
	it := s.NewIter()
	str := func(f *Fragment) string {
		if f == nil {
			return "nil"
		}
		return formatFragments([]Fragment{*f})
	}
	require.Equal(t, "nil", str(it.Current()), "a new iterator is before the first fragment")
	require.Equal(t, "nil", str(it.Prev()))
	require.Equal(t, "[b,d){1}", str(it.Next()))
	require.Equal(t, "[f,h){2}", str(it.SeekGE([]byte("d"))), "d is past [b,d)")
	require.Equal(t, "[b,d){1}", str(it.SeekGE([]byte("c"))))
	require.Equal(t, "[b,d){1}", str(it.SeekGE(nil)))
	require.Equal(t, "[h,j){3}", str(it.SeekGE([]byte("h"))))
	require.Equal(t, "nil", str(it.SeekGE([]byte("j"))))
	require.Equal(t, "[h,j){3}", str(it.Prev()), "Prev from after the last lands on the last")
	require.Equal(t, "[b,d){1}", str(it.SeekLT([]byte("f"))), "the key just below f lies in the gap after [b,d)")
	require.Equal(t, "[f,h){2}", str(it.SeekLT([]byte("h"))))
	require.Equal(t, "[f,h){2}", str(it.SeekLT([]byte("g"))))
	require.Equal(t, "[b,d){1}", str(it.SeekLT([]byte("ba"))))
	require.Equal(t, "nil", str(it.SeekLT([]byte("b"))))
	require.Equal(t, "[b,d){1}", str(it.Next()), "Next from before the first lands on the first")
	require.Equal(t, "[h,j){3}", str(it.Last()))
	require.Equal(t, "nil", str(it.Next()))
	require.Equal(t, "nil", str(it.Next()))
	require.Equal(t, "[h,j){3}", str(it.Prev()))
	require.Equal(t, "[b,d){1}", str(it.First()))
	require.Equal(t, 3, it.Len())
}

// TestIterRandom drives an iterator with random operations and compares
// each position with a model that finds fragments by linear scans.
func TestIterRandom(t *testing.T) {
	rng := newRand(t)
	for round := 0; round < rounds(500, 50); round++ {
		s := BuildSet(randomTombstones(rng, 10))
		frags := s.Fragments()
		var it Iter
		it.Init(s)
		pos := -1 // the model's position, -1 .. len(frags)
		for op := 0; op < 100; op++ {
			key := randomKey(rng, 3)
			var got *Fragment
			var desc string
			switch rng.Intn(6) {
			case 0:
				desc = "SeekGE " + string(key)
				got = it.SeekGE(key)
				// The fragment containing key, else the first after it.
				pos = len(frags)
				for i := range frags {
					if frags[i].Contains(key) || bytes.Compare(frags[i].Start, key) > 0 {
						pos = i
						break
					}
				}
			case 1:
				desc = "SeekLT " + string(key)
				got = it.SeekLT(key)
				// The last fragment with a key below key in it.
				pos = -1
				for i := len(frags) - 1; i >= 0; i-- {
					if bytes.Compare(frags[i].Start, key) < 0 {
						pos = i
						break
					}
				}
			case 2:
				desc = "First"
				got = it.First()
				pos = 0
			case 3:
				desc = "Last"
				got = it.Last()
				pos = len(frags) - 1
			case 4:
				desc = "Next"
				got = it.Next()
				pos = min(pos+1, len(frags))
			case 5:
				desc = "Prev"
				got = it.Prev()
				pos = max(pos-1, -1)
			}
			if pos < 0 || pos >= len(frags) {
				require.Nil(t, got, "%s over %s", desc, fragmentList(frags))
			} else {
				require.Same(t, &frags[pos], got, "%s over %s", desc, fragmentList(frags))
			}
			require.Same(t, got, it.Current())
		}
	}
}

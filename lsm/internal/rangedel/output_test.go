package rangedel

import (
	"bytes"
	"slices"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

func TestFlatten(t *testing.T) {
	frags := FragmentTombstones([]Tombstone{tombstone("c", "g", 5), tombstone("a", "e", 9)})
	require.Equal(t, "[a,c)#9 [c,e)#9 [c,e)#5 [e,g)#5", formatTombstones(Flatten(frags)))
	require.Nil(t, Flatten(nil))
}

// TestFlattenTableOrder checks the order Writer.AddRangeDeletion requires:
// start ascending, then seq descending (strictly: no duplicate triples).
func TestFlattenTableOrder(t *testing.T) {
	rng := newRand(t)
	for round := 0; round < rounds(500, 50); round++ {
		ts := Flatten(FragmentTombstones(randomTombstones(rng, 12)))
		for i := range ts {
			require.Negative(t, bytes.Compare(ts[i].Start, ts[i].End))
			if i == 0 {
				continue
			}
			c := bytes.Compare(ts[i-1].Start, ts[i].Start)
			require.True(t, c < 0 || (c == 0 && ts[i-1].Seq > ts[i].Seq), tombstoneList(ts))
		}
	}
}

func TestTruncateCases(t *testing.T) {
	frags := FragmentTombstones([]Tombstone{tombstone("c", "g", 5), tombstone("a", "e", 9), tombstone("m", "p", 2)})
	require.Equal(t, "[a,c){9} [c,e){9,5} [e,g){5} [m,p){2}", formatFragments(frags))
	tests := []struct {
		lower, upper string
		noUpper      bool
		want         string
	}{
		{lower: "", noUpper: true, want: "[a,c){9} [c,e){9,5} [e,g){5} [m,p){2}"},
		{lower: "b", upper: "f", want: "[b,c){9} [c,e){9,5} [e,f){5}"},
		{lower: "c", upper: "e", want: "[c,e){9,5}"},
		{lower: "g", upper: "m", want: ""},
		{lower: "f", upper: "n", want: "[f,g){5} [m,n){2}"},
		{lower: "o", noUpper: true, want: "[o,p){2}"},
		{lower: "e", upper: "e", want: ""},
		{lower: "f", upper: "b", want: ""},
		{lower: "", upper: "", want: ""},
	}
	for _, tc := range tests {
		var upper []byte
		if !tc.noUpper {
			upper = []byte(tc.upper)
		}
		got := Truncate(frags, []byte(tc.lower), upper)
		require.NoError(t, Validate(got))
		require.Equal(t, tc.want, formatFragments(got), "[%q, %q)", tc.lower, upper)
	}
	require.Equal(t, formatFragments(frags), formatFragments(Truncate(frags, nil, nil)))

	// The bounds are copied: the caller may reuse them.
	lower, upper := []byte("b"), []byte("f")
	got := Truncate(frags, lower, upper)
	lower[0], upper[0] = 'x', 'x'
	require.Equal(t, "[b,c){9} [c,e){9,5} [e,f){5}", formatFragments(got))
}

// TestTruncateRandom checks that truncated fragments answer like the
// originals inside the bounds and cover nothing outside them.
func TestTruncateRandom(t *testing.T) {
	rng := newRand(t)
	keys := universe(3)
	for round := 0; round < rounds(500, 50); round++ {
		frags := FragmentTombstones(randomTombstones(rng, 12))
		lower, upper := randomKey(rng, 2), randomKey(rng, 2)
		if rng.Intn(4) == 0 {
			upper = nil
		}
		if rng.Intn(8) == 0 {
			lower = nil
		}
		got := Truncate(frags, lower, upper)
		require.NoError(t, Validate(got))
		for _, k := range keys {
			inside := bytes.Compare(lower, k) <= 0 && (upper == nil || bytes.Compare(k, upper) < 0)
			var want []base.SeqNum
			if inside {
				want = fragmentSeqsAt(frags, k)
			}
			require.Equal(t, want, fragmentSeqsAt(got, k), "key %q, bounds [%q, %q), %s → %s",
				k, lower, upper, fragmentList(frags), fragmentList(got))
		}
	}
}

func TestElideCases(t *testing.T) {
	frags := FragmentTombstones([]Tombstone{
		tombstone("a", "c", 9), tombstone("a", "c", 7), tombstone("a", "c", 4), tombstone("a", "c", 2),
		tombstone("c", "e", 9), tombstone("c", "e", 8),
	})
	require.Equal(t, "[a,c){9,7,4,2} [c,e){9,8}", formatFragments(frags))
	tests := []struct {
		snapshots []base.SeqNum
		want      string
	}{
		{nil, "[a,e){9}"}, // touching fragments left with equal seqs merge
		{[]base.SeqNum{100}, "[a,e){9}"},
		{[]base.SeqNum{1}, "[a,e){9}"},
		{[]base.SeqNum{8}, "[a,c){9,7} [c,e){9,8}"},
		{[]base.SeqNum{7}, "[a,c){9,7} [c,e){9}"},                // 7 sees 7 but not 9: different stripes
		{[]base.SeqNum{6}, "[a,c){9,4} [c,e){9}"},                // (0,6] holds 4 and 2
		{[]base.SeqNum{2, 4, 7, 8}, "[a,c){9,7,4,2} [c,e){9,8}"}, // every seq its own stripe
		{[]base.SeqNum{2, 4, 7, 9}, "[a,c){9,7,4,2} [c,e){9}"},   // 8 and 9 share (7,9]
		{[]base.SeqNum{9, 2, 7, 4}, "[a,c){9,7,4,2} [c,e){9}"},   // unsorted snapshots
		{[]base.SeqNum{3, 5}, "[a,c){9,4,2} [c,e){9}"},
	}
	for _, tc := range tests {
		snaps := slices.Clone(tc.snapshots)
		got := Elide(frags, snaps)
		require.NoError(t, Validate(got))
		require.Equal(t, tc.want, formatFragments(got), "snapshots %v", tc.snapshots)
		require.Equal(t, tc.snapshots, snaps, "Elide must not reorder the caller's snapshots")
	}
	require.Equal(t, "[a,c){9,7,4,2} [c,e){9,8}", formatFragments(frags), "the input is unchanged")
	require.Nil(t, Elide(nil, nil))
}

// TestElideRandom checks that elided fragments keep at most one seq per
// snapshot stripe, keep a subset of the seqs, and answer MaxCoveringSeq and
// Covers exactly like the originals for readers at every snapshot and at
// the latest state.
func TestElideRandom(t *testing.T) {
	rng := newRand(t)
	keys := universe(3)
	for round := 0; round < rounds(500, 50); round++ {
		ts := randomTombstones(rng, 12)
		before := BuildSet(ts)
		var snapshots []base.SeqNum
		for n := rng.Intn(4); n > 0; n-- {
			snapshots = append(snapshots, base.SeqNum(rng.Intn(14)))
		}
		slices.Sort(snapshots)
		elided := Elide(before.Fragments(), snapshots)
		after, err := NewSet(elided)
		require.NoError(t, err)
		for i := 1; i < len(elided); i++ {
			if bytes.Equal(elided[i-1].End, elided[i].Start) {
				require.NotEqual(t, elided[i-1].Seqs, elided[i].Seqs, fragmentList(elided))
			}
		}
		for _, k := range keys {
			orig, kept := fragmentSeqsAt(before.Fragments(), k), fragmentSeqsAt(elided, k)
			for i, s := range kept {
				require.Contains(t, orig, s)
				if i > 0 {
					// Some snapshot separates every two kept seqs.
					require.True(t, slices.ContainsFunc(snapshots, func(snap base.SeqNum) bool {
						return kept[i] <= snap && snap < kept[i-1]
					}), "kept %v with snapshots %v", kept, snapshots)
				}
			}
			for _, readSeq := range append(slices.Clone(snapshots), base.SeqNumMax) {
				require.Equal(t, before.MaxCoveringSeq(k, readSeq), after.MaxCoveringSeq(k, readSeq),
					"key %q read at %d, snapshots %v: %s → %s", k, readSeq, snapshots,
					fragmentList(before.Fragments()), fragmentList(elided))
				keySeq := base.SeqNum(rng.Intn(14))
				require.Equal(t, modelCovers(ts, k, keySeq, readSeq), after.Covers(k, keySeq, readSeq))
			}
		}
	}
}

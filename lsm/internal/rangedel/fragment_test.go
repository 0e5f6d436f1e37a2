package rangedel

import (
	"bytes"
	"slices"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

func TestFragmentTombstonesCases(t *testing.T) {
	tests := []struct {
		name string
		in   []Tombstone
		want string
	}{
		{name: "none", in: nil, want: ""},
		{name: "only empty and inverted", in: []Tombstone{tombstone("b", "b", 3), tombstone("c", "a", 4), tombstone("", "", 1)}, want: ""},
		{name: "one", in: []Tombstone{tombstone("a", "c", 7)}, want: "[a,c){7}"},
		{name: "empty start key", in: []Tombstone{tombstone("", "a", 7)}, want: "[,a){7}"},
		{name: "package comment example", in: []Tombstone{
			tombstone("c", "g", 5), tombstone("a", "e", 9), tombstone("c", "d", 5),
		}, want: "[a,c){9} [c,e){9,5} [e,g){5}"},
		{name: "gap stays a gap", in: []Tombstone{tombstone("a", "b", 1), tombstone("c", "d", 2)}, want: "[a,b){1} [c,d){2}"},
		{name: "touching with different seqs", in: []Tombstone{tombstone("c", "d", 2), tombstone("a", "c", 1)}, want: "[a,c){1} [c,d){2}"},
		{name: "touching with equal seqs merge", in: []Tombstone{tombstone("c", "e", 4), tombstone("a", "c", 4)}, want: "[a,e){4}"},
		{name: "duplicates", in: []Tombstone{tombstone("a", "c", 4), tombstone("a", "c", 4), tombstone("a", "c", 2)}, want: "[a,c){4,2}"},
		{name: "nested", in: []Tombstone{
			tombstone("a", "z", 1), tombstone("b", "y", 2), tombstone("c", "x", 3),
		}, want: "[a,b){1} [b,c){2,1} [c,x){3,2,1} [x,y){2,1} [y,z){1}"},
		{name: "same start different ends", in: []Tombstone{tombstone("a", "b", 1), tombstone("a", "d", 3)}, want: "[a,b){3,1} [b,d){3}"},
		{name: "prefix keys", in: []Tombstone{tombstone("a", "aa", 2), tombstone("a\x00", "b", 5)}, want: "[a,a\x00){2} [a\x00,aa){5,2} [aa,b){5}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frags := FragmentTombstones(tc.in)
			require.NoError(t, Validate(frags))
			require.Equal(t, tc.want, formatFragments(frags))
		})
	}
}

// TestFragmentTombstonesCopiesKeys overwrites the input keys after
// fragmenting and checks that the fragments did not change, and that
// appending to one fragment's keys or seqs does not reach another's.
func TestFragmentTombstonesCopiesKeys(t *testing.T) {
	buf := []byte("abcdef")
	in := []Tombstone{
		{Start: buf[0:1], End: buf[2:3], Seq: 3}, // [a,c)
		{Start: buf[1:2], End: buf[3:4], Seq: 5}, // [b,d)
	}
	frags := FragmentTombstones(in)
	want := "[a,b){3} [b,c){5,3} [c,d){5}"
	require.Equal(t, want, formatFragments(frags))
	for i := range buf {
		buf[i] = 'z'
	}
	in[0].Seq = 99
	require.Equal(t, want, formatFragments(frags))

	_ = append(frags[0].End, 'x')
	_ = append(frags[0].Seqs, 42)
	require.Equal(t, want, formatFragments(frags))
}

func TestValidate(t *testing.T) {
	seqs := func(s ...base.SeqNum) []base.SeqNum { return s }
	frag := func(start, end string, s []base.SeqNum) Fragment {
		return Fragment{Start: []byte(start), End: []byte(end), Seqs: s}
	}
	require.NoError(t, Validate(nil))
	require.NoError(t, Validate([]Fragment{frag("a", "b", seqs(2)), frag("b", "c", seqs(2))}),
		"touching fragments with equal seqs are valid, only not minimal")
	bad := []struct {
		frags []Fragment
		msg   string
	}{
		{[]Fragment{frag("b", "b", seqs(1))}, "is empty"},
		{[]Fragment{frag("c", "b", seqs(1))}, "is empty"},
		{[]Fragment{frag("a", "b", nil)}, "no sequence numbers"},
		{[]Fragment{frag("a", "b", seqs(1, 2))}, "not strictly descending"},
		{[]Fragment{frag("a", "b", seqs(2, 2))}, "not strictly descending"},
		{[]Fragment{frag("a", "c", seqs(1)), frag("b", "d", seqs(2))}, "starts before the end"},
		{[]Fragment{frag("c", "d", seqs(1)), frag("a", "b", seqs(2))}, "starts before the end"},
	}
	for _, tc := range bad {
		err := Validate(tc.frags)
		require.ErrorContains(t, err, tc.msg, formatFragments(tc.frags))
		_, err = NewSet(tc.frags)
		require.ErrorContains(t, err, tc.msg)
	}
}

// TestFragmentTombstonesRandom checks, for random overlapping tombstones,
// that the fragments are valid, minimal (touching fragments differ in
// seqs), and that every key of a universe that probes every fragment's
// edges and inside is covered by exactly the model's seqs.
func TestFragmentTombstonesRandom(t *testing.T) {
	rng := newRand(t)
	keys := universe(3)
	for round := 0; round < rounds(2000, 50); round++ {
		ts := randomTombstones(rng, 12)
		frags := FragmentTombstones(ts)
		require.NoError(t, Validate(frags), tombstoneList(ts))
		for i := 1; i < len(frags); i++ {
			if bytes.Equal(frags[i-1].End, frags[i].Start) {
				require.NotEqual(t, frags[i-1].Seqs, frags[i].Seqs,
					"touching fragments with equal seqs were not merged: %s", fragmentList(frags))
			}
		}
		for _, k := range keys {
			require.Equal(t, modelSeqs(ts, k), fragmentSeqsAt(frags, k),
				"key %q, tombstones %s, fragments %s", k, tombstoneList(ts), fragmentList(frags))
		}
		// Fragment boundaries are tombstone boundaries: no fragment
		// invents a key.
		for _, f := range frags {
			require.True(t, slices.ContainsFunc(ts, func(t Tombstone) bool {
				return bytes.Equal(t.Start, f.Start) || bytes.Equal(t.End, f.Start)
			}))
		}
		// Fragmenting is idempotent through Flatten.
		require.Equal(t, formatFragments(frags), formatFragments(FragmentTombstones(Flatten(frags))))
	}
}

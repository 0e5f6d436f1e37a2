package ondisk

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckPlace: a copy passes where it is configured at its own place,
// or its pair's index moved out of (or into) its ledger directory; it is
// refused at another pair's place, and a ledger directory's copy as an
// index directory or the reverse. A version 1 copy records no place.
func TestCheckPlace(t *testing.T) {
	l := &Layout{Dirs: []DirPair{{"/a", "/a"}, {"/b", "/ib"}}}
	at := func(pos int, role Role) *Layout { c := *l; c.Self = Identity{pos, role}; return &c }
	for _, tc := range []struct {
		copy *Layout
		want Identity
		ok   bool
	}{
		{at(0, RoleLedgerAndIndex), Identity{0, RoleLedgerAndIndex}, true},
		{at(0, RoleLedgerAndIndex), Identity{0, RoleLedger}, true}, // the index moved out
		{at(1, RoleLedger), Identity{1, RoleLedgerAndIndex}, true}, // the index moved in
		{at(1, RoleIndex), Identity{1, RoleIndex}, true},
		{at(1, RoleLedger), Identity{0, RoleLedger}, false}, // another pair's
		{at(1, RoleIndex), Identity{1, RoleLedger}, false},  // the index directory as the ledger directory
		{at(1, RoleLedger), Identity{1, RoleIndex}, false},
		{at(1, RoleIndex), Identity{1, RoleLedgerAndIndex}, false},
		{l, Identity{1, RoleIndex}, true}, // version 1
	} {
		err := CheckPlace("/x/current", tc.copy, tc.want)
		if tc.ok {
			require.NoError(t, err, "%v at %v", tc.copy.Self, tc.want)
		} else {
			require.ErrorIs(t, err, ErrMisplaced, "%v at %v", tc.copy.Self, tc.want)
		}
	}
	err := CheckPlace("/x/current", at(1, RoleIndex), Identity{0, RoleIndex})
	require.EqualError(t, err, "/x/current is the index directory of pair 2 of this bookie (recorded at /ib/current), but it is configured as "+
		"the index directory of pair 1: two directories swapped, or one mounted where another belongs? Configure each directory at its place: "+
		"directory configured at another directory's place")
}

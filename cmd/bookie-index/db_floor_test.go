package main

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/stretchr/testify/require"
)

// TestDBFloorIDBoundaries: db floor sees entry MaxInt64, in the ledger
// MaxInt64 too, and refuses a negative ledger.
func TestDBFloorIDBoundaries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locations")
	ix, err := entrylocation.Open(dir, nil)
	require.NoError(t, err)
	for _, l := range []int64{0, 7, math.MaxInt64} {
		require.NoError(t, ix.AddLocation(l, 3, 1<<32|1028))
		require.NoError(t, ix.AddLocation(l, math.MaxInt64, 1<<32|2048))
	}
	require.NoError(t, ix.Close())
	for _, l := range []int64{0, 7, math.MaxInt64} {
		out := mustRun(t, "db", "floor", dir, strconv.FormatInt(l, 10))
		require.True(t, strings.HasPrefix(out, "9223372036854775807 "), "ledger %d: %s", l, out)
	}
	code, _, errOut := runCmd("db", "floor", dir, "--", "-1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "LEDGER -1 is negative")
}

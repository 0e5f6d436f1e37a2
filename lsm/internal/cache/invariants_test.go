//go:build invariants

package cache

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReleaseTwicePanicsWithInvariants checks that the invariants build
// catches a handle released more often than it was acquired (CI runs the
// lsm packages with -tags invariants). Without the check the second Release
// would silently drive the reference count negative.
func TestReleaseTwicePanicsWithInvariants(t *testing.T) {
	for _, capacity := range []int64{0, 1 << 20} { // detached, cached
		c := newTestCache(t, Options{Capacity: capacity, NumShardBits: OneShard})
		h, err := c.insertBytes(1, 0, KindData, PriorityLow, []byte("block"))
		require.NoError(t, err)
		h.Release()
		require.Panics(t, h.Release, "capacity %d", capacity)
	}
}

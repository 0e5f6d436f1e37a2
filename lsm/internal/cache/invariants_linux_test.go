//go:build invariants && linux

package cache

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// readFaults reports whether reading b[0] faults.
func readFaults(b []byte) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			faulted = true
		}
	}()
	sink = b[0]
	return false
}

// sink keeps readFaults' load from being optimized away.
var sink byte

// TestReleasedBlockFaults: in invariants builds the bytes of a block whose
// last handle is released after its eviction are protected, so a reader
// that kept them past its Release faults at once instead of reading the
// next block that memory holds.
func TestReleasedBlockFaults(t *testing.T) {
	c := newTestCache(t, Options{Capacity: 1 << 20})
	h, err := c.insertBytes(1, 0, KindData, PriorityLow, valueFor(1, 0, 5000))
	require.NoError(t, err)
	stale := h.Value()
	c.EvictFile(1)
	require.False(t, readFaults(stale), "valid while the handle is held")
	h.Release()
	require.True(t, readFaults(stale), "a read after the last release must fault")
	require.NoError(t, c.Close())
}

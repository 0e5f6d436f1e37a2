//go:build invariants && linux

package manual

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// readByte reads b[0], turning a fault into a false result.
func readByte(b []byte) (v byte, ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return b[0], true
}

// TestStaleReadFaults: in invariants builds freed memory is protected, so
// a read through a slice kept past Free faults instead of returning bytes
// that may by then belong to another block.
func TestStaleReadFaults(t *testing.T) {
	a := New(Options{})
	b, err := a.Alloc(64 << 10)
	require.NoError(t, err)
	fill(b.Bytes(), 3)
	v, ok := readByte(b.Bytes())
	require.True(t, ok)
	require.Equal(t, byte(3), v)
	stale := b.Bytes()
	a.Free(b)
	_, ok = readByte(stale)
	require.False(t, ok, "a read of freed memory must fault")

	// Still faulting after other allocations: the run is in quarantine.
	var more []Buf
	for i := 0; i < 8; i++ {
		m, err := a.Alloc(64 << 10)
		require.NoError(t, err)
		more = append(more, m)
	}
	_, ok = readByte(stale)
	require.False(t, ok)
	for _, m := range more {
		a.Free(m)
	}
	require.NoError(t, a.Close())
}

// TestQuarantinedDoubleFreePanics: a run freed twice while in quarantine
// is caught.
func TestQuarantinedDoubleFreePanics(t *testing.T) {
	a := New(Options{})
	b, err := a.Alloc(5000)
	require.NoError(t, err)
	a.Free(b)
	require.Panics(t, func() { a.Free(b) })
	require.NoError(t, a.Close())
}

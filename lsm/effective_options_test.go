package lsm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSettings: the effective options, a shared cache's capacity included.
func TestSettings(t *testing.T) {
	cache, err := NewBlockCache(3<<20, -1, 0)
	require.NoError(t, err)
	opts := smallOptions(NewMemFS())
	opts.BlockCache = cache
	d, err := Open("db", opts)
	require.NoError(t, err)
	defer d.Close()
	got := map[string]string{}
	for _, s := range d.Settings() {
		got[s.Name] = s.Value
	}
	require.Equal(t, "65536", got["writeBufferSize"])
	require.Equal(t, "3145728", got["blockCacheCapacity"])
	require.Equal(t, "true", got["blockCacheShared"])
	require.Equal(t, "2", got["level0FileNumCompactionTrigger"])
	require.Equal(t, "20", got["level0SlowdownWritesTrigger"], "a default filled in")
}

package bookie

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestActiveLedgersInRange lists the existing ledgers of every directory
// in a range, as upstream's getActiveLedgersInRange: [first, last), except
// that first <= 0 with last MaxInt64 is every ledger, MaxInt64 included.
func TestActiveLedgersInRange(t *testing.T) {
	env := newTestEnv("/data/a", "/data/b")
	s := env.open(t)
	defer s.Close()
	for _, id := range []int64{0, 1, 2, 5, 9, math.MaxInt64 - 1, math.MaxInt64} {
		require.NoError(t, s.SetMasterKey(id, []byte("k")))
	}
	_, err := s.DeleteLedger(5)
	require.NoError(t, err)
	list := func(first, last int64) []int64 {
		ids, err := s.ActiveLedgersInRange(first, last)
		require.NoError(t, err)
		return ids
	}
	require.Equal(t, []int64{0, 1, 2, 9, math.MaxInt64 - 1, math.MaxInt64}, list(0, math.MaxInt64))
	require.Equal(t, []int64{1, 2, 9, math.MaxInt64 - 1}, list(1, math.MaxInt64))
	require.Equal(t, []int64{2, 9}, list(2, 10))
	require.Empty(t, list(3, 3))
	require.NoError(t, s.Close())
	_, err = s.ActiveLedgersInRange(0, 10)
	require.ErrorIs(t, err, ErrClosed)
}

// TestMasterKeyZeros: as upstream's LedgerMetadataIndex.setMasterKey, a
// key of zeros or an empty key is no key: a ledger whose key is one takes
// any other key, and one given for a ledger with a key is accepted and
// changes nothing (the bookie sends an empty key for reads that create a
// ledger's record); another key is refused.
func TestMasterKeyZeros(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	defer s.Close()
	key := func(l int64) []byte {
		info, ok, err := s.LedgerInfo(l)
		require.NoError(t, err)
		require.True(t, ok)
		return info.MasterKey
	}
	zeros := make([]byte, 20)
	require.NoError(t, s.SetMasterKey(1, []byte("k1")))
	require.NoError(t, s.SetMasterKey(1, nil))
	require.NoError(t, s.SetMasterKey(1, zeros))
	require.Equal(t, []byte("k1"), key(1))
	require.ErrorIs(t, s.SetMasterKey(1, []byte("k2")), ErrWrongMasterKey)

	require.NoError(t, s.SetMasterKey(2, zeros))
	require.Equal(t, zeros, key(2))
	require.NoError(t, s.SetMasterKey(2, []byte("k2")))
	require.Equal(t, []byte("k2"), key(2))

	require.NoError(t, s.SetMasterKey(3, []byte{}))
	require.NoError(t, s.SetMasterKey(3, zeros))
	require.Equal(t, zeros, key(3))
}

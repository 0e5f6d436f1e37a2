package bookie

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestReplayIgnoresReadOnly: a read-only storage (forced by the
// configuration, or by a full disk) still takes a journal's replay, which
// holds acknowledged writes; its ordinary writes stay refused.
func TestReplayIgnoresReadOnly(t *testing.T) {
	env := newTestEnv()
	env.tweak = func(o *Options) { o.ForceReadOnly = true }
	s := env.open(t)
	require.True(t, errors.Is(s.AddEntry(1, 0, payload(1, 0, 0)), ErrReadOnly))
	require.NoError(t, s.ReplayMasterKey(1, []byte("k")))
	added, err := s.ReplayEntry(1, 0, payload(1, 0, 0))
	require.NoError(t, err)
	require.True(t, added)
	require.NoError(t, s.ReplayFence(1))
	require.NoError(t, s.ReplayExplicitLAC(1, []byte("lac")))
	require.NoError(t, s.Checkpoint())
	requireEntry(t, s, 1, 0, payload(1, 0, 0))
	info, ok, err := s.LedgerInfo(1)
	require.NoError(t, err)
	require.True(t, ok && info.Exists && info.Fenced)
	require.Equal(t, "k", string(info.MasterKey))
	require.Equal(t, "lac", string(info.ExplicitLAC))
	require.True(t, errors.Is(s.AddEntry(1, 1, payload(1, 1, 0)), ErrReadOnly))
	require.NoError(t, s.Close())
}

// TestReplayEntryIdempotent: an entry the storage holds with the same
// bytes, in a cache or checkpointed, is not written again; other bytes
// replace it.
func TestReplayEntryIdempotent(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	require.NoError(t, s.AddEntry(1, 0, payload(1, 0, 0)))
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.AddEntry(1, 1, payload(1, 1, 0)))
	for e := int64(0); e < 2; e++ {
		added, err := s.ReplayEntry(1, e, payload(1, e, 0))
		require.NoError(t, err)
		require.False(t, added, "entry %d", e)
	}
	added, err := s.ReplayEntry(1, 0, payload(1, 0, 1))
	require.NoError(t, err)
	require.True(t, added)
	added, err = s.ReplayEntry(2, 0, payload(2, 0, 0)) // an unknown ledger: created
	require.NoError(t, err)
	require.True(t, added)
	require.NoError(t, s.Checkpoint())
	require.Equal(t, int64(1+3), s.Metrics()[0].FlushEntries)
	requireEntry(t, s, 1, 0, payload(1, 0, 1))
	requireEntry(t, s, 2, 0, payload(2, 0, 0))
	require.NoError(t, s.Close())
}

// TestReplayMasterKeyRules: upstream's rules — an empty key never
// conflicts, a ledger without a key takes one, another key is refused.
func TestReplayMasterKeyRules(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	require.NoError(t, s.ReplayMasterKey(1, nil))
	exists, err := s.LedgerExists(1)
	require.NoError(t, err)
	require.True(t, exists)
	require.NoError(t, s.ReplayMasterKey(1, []byte("a")))
	require.NoError(t, s.ReplayMasterKey(1, nil))
	require.NoError(t, s.ReplayMasterKey(1, []byte("a")))
	require.True(t, errors.Is(s.ReplayMasterKey(1, []byte("b")), ErrWrongMasterKey))
	info, _, err := s.LedgerInfo(1)
	require.NoError(t, err)
	require.Equal(t, "a", string(info.MasterKey))
	require.True(t, errors.Is(s.ReplayFence(9), ErrNoLedger))
	require.NoError(t, s.Close())
}

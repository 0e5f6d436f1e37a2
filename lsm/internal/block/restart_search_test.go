package block

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// TestRestartSearchByLedgerShape: 64 KiB blocks of entry locations holding
// one ledger, a few, or many small ones. Seeks (SeekGE and SeekLT) of
// present and absent keys must agree with a sorted model, and the restart
// search must stay well under a binary search's ~9 probes: the guesses of
// restart_search.go are exact in a one-ledger block and recover from the
// key jumps at ledger boundaries. (When the search interpolated between
// the first and last restarts only, blocks of 5,000-entry ledgers took 12.5
// probes per seek.)
func TestRestartSearchByLedgerShape(t *testing.T) {
	for _, tc := range []struct {
		entriesPerLedger uint64 // 0: one ledger
		maxProbes        float64
	}{{0, 4.5}, {5000, 8}, {1000, 8}, {300, 8}, {100, 7}, {10, 5}, {3, 5}} {
		t.Run(fmt.Sprintf("entries-per-ledger=%d", tc.entriesPerLedger), func(t *testing.T) {
			bld := NewBuilder(24, true)
			bld.ShareValuePrefixes = true
			bld.CompactEntries = true
			var keys [][]byte
			for e := uint64(0); bld.EstimatedSize() < 64<<10; e++ {
				// Every other entry id, so that the odd ones are absent.
				k := entryLocationKey(123, 2*(1_000_000+e))
				if n := tc.entriesPerLedger; n > 0 {
					k = entryLocationKey(123+e/n, 2*(e%n))
				}
				keys = append(keys, k)
				bld.Add(k, base.MakeTrailer(0, base.KindSet), binary.BigEndian.AppendUint64(nil, 1<<32|(1028*e+4)))
			}
			data := append([]byte(nil), bld.Finish()...)
			var it Iter
			require.NoError(t, it.Init(data))
			rng := rand.New(rand.NewSource(int64(tc.entriesPerLedger)))
			const seeks = 4000
			for i := 0; i < seeks; i++ {
				target := append([]byte(nil), keys[rng.Intn(len(keys))]...)
				if i%2 == 1 {
					binary.BigEndian.PutUint64(target[8:], binary.BigEndian.Uint64(target[8:])+1) // absent
				}
				// The model: the first key >= target, and the last < target.
				j := sort.Search(len(keys), func(j int) bool { return bytes.Compare(keys[j], target) >= 0 })
				seek := base.SeekTrailer(base.SeqNumMax)
				if it.SeekGE(target, seek) {
					require.Less(t, j, len(keys))
					require.Equal(t, keys[j], it.UserKey(), "SeekGE %x", target)
				} else {
					require.NoError(t, it.Error())
					require.Equal(t, len(keys), j, "SeekGE %x found nothing", target)
				}
				if it.SeekLT(target, seek) {
					require.Greater(t, j, 0)
					require.Equal(t, keys[j-1], it.UserKey(), "SeekLT %x", target)
				} else {
					require.NoError(t, it.Error())
					require.Zero(t, j, "SeekLT %x found nothing", target)
				}
			}
			probes := float64(it.probes) / (2 * seeks)
			t.Logf("%d restarts, %.2f probes per seek", it.numRestarts, probes)
			require.LessOrEqual(t, probes, tc.maxProbes)
		})
	}
}

func TestKeyPosMinus(t *testing.T) {
	a := keyPosOf([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	b := keyPosOf([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	require.Equal(t, 1.0, a.minus(b), "the borrow crosses the halves")
	require.Equal(t, -1.0, b.minus(a))
	require.Equal(t, 0.0, a.minus(a))
	require.Equal(t, keyPos{hi: 0x0102000000000000}, keyPosOf([]byte{1, 2}), "short suffixes are zero-padded")
}

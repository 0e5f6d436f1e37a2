package base

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func TestTrailerPacking(t *testing.T) {
	for _, seq := range []SeqNum{0, 1, 12345, SeqNumMax} {
		for _, k := range []Kind{KindDelete, KindSet, KindRangeDelete, KindMax} {
			tr := MakeTrailer(seq, k)
			require.Equal(t, seq, tr.SeqNum())
			require.Equal(t, k, tr.Kind())
		}
	}
	require.Equal(t, "SET", KindSet.String())
	require.Equal(t, "UNKNOWN", Kind(77).String())
}

// TestInternalOrder checks the order against its definition on random keys:
// user key ascending, then sequence number descending, then kind descending.
func TestInternalOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var keys []InternalKey
	for i := 0; i < 500; i++ {
		uk := make([]byte, rng.Intn(3))
		for j := range uk {
			uk[j] = byte('a' + rng.Intn(2))
		}
		keys = append(keys, MakeInternalKey(uk, SeqNum(rng.Intn(4)), Kind(rng.Intn(3))))
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Compare(keys[j]) < 0 })
	for i := 1; i < len(keys); i++ {
		a, b := keys[i-1], keys[i]
		switch {
		case string(a.UserKey) != string(b.UserKey):
			require.Less(t, string(a.UserKey), string(b.UserKey))
		case a.SeqNum() != b.SeqNum():
			require.Greater(t, a.SeqNum(), b.SeqNum())
		default:
			require.GreaterOrEqual(t, a.Kind(), b.Kind())
		}
	}
	// A seek key sorts before every entry of its user key visible at seq.
	seek := InternalKey{UserKey: []byte("a"), Trailer: SeekTrailer(2)}
	require.Negative(t, seek.Compare(MakeInternalKey([]byte("a"), 2, KindSet)))
	require.Positive(t, seek.Compare(MakeInternalKey([]byte("a"), 3, KindDelete)))
}

func TestCorruptionMark(t *testing.T) {
	err := CorruptionErrorf("block at %d", 7)
	require.True(t, errors.Is(err, ErrCorruption))
	require.Contains(t, err.Error(), "block at 7")
	require.True(t, errors.Is(MarkCorruption(errors.New("x")), ErrCorruption))
	require.NoError(t, MarkCorruption(nil))
}

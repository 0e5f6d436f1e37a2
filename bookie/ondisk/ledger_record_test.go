package ondisk

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLedgerRecord(t *testing.T) {
	for _, info := range []LedgerInfo{
		{},
		{Exists: true},
		{Exists: true, Fenced: true, MasterKey: []byte("key"), ExplicitLAC: []byte{}, Floor: 1 << 40},
		{PurgePending: true, ExplicitLAC: []byte("x")},
	} {
		got, err := DecodeLedgerInfo(EncodeLedgerInfo(&info))
		require.NoError(t, err)
		require.Equal(t, info, got)
	}
	good := EncodeLedgerInfo(&LedgerInfo{Exists: true, MasterKey: []byte("key")})
	for i := range good {
		_, _ = DecodeLedgerInfo(good[:i]) // never panics
	}
	for _, bad := range [][]byte{nil, {2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, append(good[:len(good):len(good)], 0)} {
		_, err := DecodeLedgerInfo(bad)
		require.Error(t, err)
	}
	_, err := DecodeLedgerKey([]byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	require.Error(t, err)
}

package journal

import (
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

func TestLastMarkFileName(t *testing.T) {
	require.Equal(t, "lastMark", LastMarkFileName(0, 1))
	require.Equal(t, "lastMark.0", LastMarkFileName(0, 2))
	require.Equal(t, "lastMark.1", LastMarkFileName(1, 2))
	require.Equal(t, "l1/current/lastMark", LastMarkPath("l1", "lastMark"))
}

// TestReadLastMark: the greatest mark across the ledger directories wins;
// a missing file is no problem (a first start), a short one is skipped and
// reported; bytes after the first 16 are ignored.
func TestReadLastMark(t *testing.T) {
	fs := vfs.NewMem()
	dirs := []string{"l1", "l2", "l3", "l4"}
	for _, d := range dirs {
		require.NoError(t, fs.MkdirAll(d+"/current", 0o755))
	}
	m, problems := ReadLastMark(fs, dirs, "lastMark")
	require.Equal(t, LogMark{}, m)
	require.Empty(t, problems)

	writeTestFile(t, fs, LastMarkPath("l1", "lastMark"), appendLogMark(nil, LogMark{FileID: 5, Offset: 900}))
	writeTestFile(t, fs, LastMarkPath("l2", "lastMark"), append(appendLogMark(nil, LogMark{FileID: 5, Offset: 1024}), 1, 2, 3))
	writeTestFile(t, fs, LastMarkPath("l3", "lastMark"), appendLogMark(nil, LogMark{FileID: 4, Offset: 1 << 20}))
	writeTestFile(t, fs, LastMarkPath("l4", "lastMark"), []byte{0, 0, 0, 9})
	m, problems = ReadLastMark(fs, dirs, "lastMark")
	require.Equal(t, LogMark{FileID: 5, Offset: 1024}, m)
	require.Len(t, problems, 1)
	require.ErrorContains(t, problems[0], "l4/current/lastMark holds 4 bytes")
}

func TestLogMarkOrder(t *testing.T) {
	a, b, c := LogMark{1, 900}, LogMark{1, 1024}, LogMark{2, 512}
	require.True(t, a.Less(b))
	require.True(t, b.Less(c))
	require.False(t, c.Less(a))
	require.Equal(t, 0, b.Compare(LogMark{1, 1024}))
	require.Equal(t, "2.txn@512", c.String())
}

func TestParseFileName(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   int64
		ok   bool
		err  bool
	}{
		{"18f3a2b4c5d.txn", 0x18f3a2b4c5d, true, false},
		{"ABC.txn", 0xabc, true, false},
		{"1.synced", 0, false, false},
		{"VERSION", 0, false, false},
		{"zz.txn", 0, false, true},
		{".txn", 0, false, true},
	} {
		id, ok, err := ParseFileName(tc.name)
		require.Equal(t, tc.err, err != nil, tc.name)
		require.Equal(t, tc.ok, ok, tc.name)
		require.Equal(t, tc.id, id, tc.name)
	}
	require.Equal(t, "18f3a2b4c5d.txn", FileName(0x18f3a2b4c5d))
}

package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFileNameRoundTrip(t *testing.T) {
	cases := []struct {
		kind    FileKind
		fileNum uint64
		name    string
	}{
		{FileKindTable, 7, "000007.sst"},
		{FileKindLog, 123456, "123456.log"},
		{FileKindManifest, 1, "MANIFEST-000001"},
		{FileKindTemp, 42, "000042.tmp"},
		{FileKindSyncedLength, 9, "000009.synced"},
		{FileKindTable, 1234567, "1234567.sst"},
		{FileKindLog, 1<<64 - 1, "18446744073709551615.log"},
		{FileKindCurrent, 0, "CURRENT"},
		{FileKindLock, 0, "LOCK"},
	}
	for _, c := range cases {
		require.Equal(t, c.name, FileName(c.kind, c.fileNum))
		kind, fileNum, ok := ParseFileName(c.name)
		require.True(t, ok, c.name)
		require.Equal(t, c.kind, kind, c.name)
		require.Equal(t, c.fileNum, fileNum, c.name)
	}
	require.Equal(t, "/db/000007.sst", FilePath("/db", FileKindTable, 7))
}

func TestParseFileNameRejects(t *testing.T) {
	for _, name := range []string{
		"", "1.sst", "0000001.sst", "000001.SST", "000001.sst.bak", "000001", ".sst",
		"-00001.log", "+00001.log", "00000a.log", "MANIFEST-", "MANIFEST-1", "MANIFEST-00000x",
		"MANIFEST-000001.tmp", "manifest-000001", "CURRENT.tmp", "LOCK2", "current",
		"18446744073709551616.log", // overflows uint64
	} {
		_, _, ok := ParseFileName(name)
		require.False(t, ok, "%q", name)
	}
}

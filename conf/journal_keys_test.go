package conf

import (
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/journal"
	"github.com/stretchr/testify/require"
)

// TestJournalKeys: upstream's journal keys fill journal.Options (negated
// booleans, "none" as -1, sizes in bytes), the directories resolve as
// upstream's getJournalDirNames (then data/journal), the values round-trip
// through Settings, and upstream's rules and ours refuse bad values.
func TestJournalKeys(t *testing.T) {
	c, err := Load(LoadOptions{Overrides: map[string]string{
		"journalSyncData": "false", "journalWriteData": "no", "journalAdaptiveGroupWrites": "off",
		"journalMaxGroupWaitMSec": "0", "journalBufferedWritesThreshold": "1000", "journalBufferedEntriesThreshold": "7",
		"journalFlushWhenQueueEmpty": "true", "journalMaxSizeMB": "3", "journalPreAllocSizeMB": "1",
		"journalWriteBufferSizeKB": "8", "journalAlignmentSize": "4096", "journalMaxBackups": "0",
		"journalFormatVersionToWrite": "5", "journalPageCacheFlushIntervalMSec": "250",
		"journalDirectory": "/j",
	}})
	require.NoError(t, err)
	require.Equal(t, journal.Options{
		JournalDirectories: []string{"/j"}, NoSyncData: true, NoWriteData: true, NoAdaptiveGroupWrites: true,
		MaxGroupWait: -1, BufferedWritesThreshold: 1000, BufferedEntriesThreshold: 7,
		FlushWhenQueueEmpty: true, MaxFileSize: 3 << 20, PreAllocSize: 1 << 20, WriteBufferSize: 8 << 10,
		AlignmentSize: 4096, MaxBackupJournals: -1, FormatVersionToWrite: 5, PageCacheFlushInterval: 250 * time.Millisecond,
	}, c.Journal)
	settings := c.Settings()
	for k, v := range map[string]string{"journalSyncData": "false", "journalWriteData": "false", "journalMaxGroupWaitMSec": "0",
		"journalMaxBackups": "0", "journalMaxSizeMB": "3", "journalWriteBufferSizeKB": "8", "journalAdaptiveGroupWrites": "false"} {
		require.Equal(t, v, settings[k], k)
	}
	again, err := Load(LoadOptions{Overrides: settings})
	require.NoError(t, err)
	require.Equal(t, c.Journal, again.Journal, "Settings round-trip")

	for _, tc := range []struct {
		set  map[string]string
		dirs []string
	}{
		{map[string]string{}, []string{"data/journal"}},
		{map[string]string{"ledgerDirectories": "/x/l1,/y/l2"}, []string{"/x/journal"}},
		{map[string]string{"journalDirectory": "/old"}, []string{"/old"}},
		{map[string]string{"journalDirectory": "/old", "journalDirectories": "/a, /b/"}, []string{"/a", "/b"}},
	} {
		c, err := Load(LoadOptions{Overrides: tc.set})
		require.NoError(t, err)
		require.Equal(t, tc.dirs, c.Journal.JournalDirectories, "%v", tc.set)
	}

	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"journalAlignmentSize": "1000"}, `journalAlignmentSize: 1000 is not a multiple of 512 (upstream: "Invalid journal alignment size")`},
		{map[string]string{"journalAlignmentSize": "4194304", "journalPreAllocSizeMB": "2"}, `journalAlignmentSize: 4194304 is more than journalPreAllocSizeMB (2 MiB)`},
		{map[string]string{"journalFormatVersionToWrite": "3"}, `journalFormatVersionToWrite: "3" is out of range [4, 6]`},
		{map[string]string{"journalFormatVersionToWrite": "7"}, `journalFormatVersionToWrite: "7" is out of range [4, 6]`},
		{map[string]string{"journalBufferedWritesThreshold": "0"}, `journalBufferedWritesThreshold: "0" is out of range`},
		{map[string]string{"journalPageCacheFlushIntervalMSec": "0"}, `journalPageCacheFlushIntervalMSec: 0 ms must be positive`},
		{map[string]string{"journalSyncData": "maybe"}, `journalSyncData: "maybe" is not a boolean`},
		{map[string]string{"journalDirectories": "/j,/j"}, `journalDirectories: "/j" is listed twice`},
		{map[string]string{"journalDirectories": "/data", "ledgerDirectories": "/data"}, `journalDirectories: "/data" is also a ledger directory`},
		{map[string]string{"journalDirectories": "/idx", "ledgerDirectories": "/l", "indexDirectories": "/idx"}, `journalDirectories: "/idx" is also an index directory`},
	} {
		_, err := Load(LoadOptions{Overrides: tc.set})
		require.Error(t, err, "%v", tc.set)
		require.Contains(t, err.Error(), tc.want, "%v", tc.set)
	}
}

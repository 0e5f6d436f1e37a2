package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// v6Dir holds a journal directory this package's writer wrote (format
// version 6), committed: every build must replay it.
const v6Dir = "testdata/v6"

// writeV6Journal writes v6Dir: an empty file 10.txn first, so that the
// writer's files are 11.txn on (ids do not depend on the clock), every
// record kind, batches padded to 512 bytes, a roll to 12.txn past 2600 bytes, and a
// lastMark in the ledger directory naming a checkpoint in 11.txn.
func writeV6Journal(t *testing.T) {
	require.NoError(t, os.RemoveAll(v6Dir))
	dir := CurrentDir(filepath.Join(v6Dir, "journal"))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName(0x10)), encodeHeader(V6), 0o644))
	opts := Options{
		FS:                  vfs.Default,
		JournalDirectories:  []string{filepath.Join(v6Dir, "journal")},
		LedgerDirectories:   []string{filepath.Join(v6Dir, "ledgers")},
		FlushWhenQueueEmpty: true,
		MaxFileSize:         2600,
	}
	s, err := Open(opts, nil)
	require.NoError(t, err)
	require.NoError(t, s.AddMasterKey(3, []byte("master-key-3")).Wait())
	for e := int64(0); e < 3; e++ {
		require.NoError(t, s.Add(3, e, fmt.Appendf(nil, "ledger 3 entry %d", e)).Wait())
	}
	require.NoError(t, s.SetCheckpointed(s.CurrentMark()))
	require.NoError(t, s.AddExplicitLAC(3, []byte("lac-3")).Wait())
	require.NoError(t, s.AddFence(3).Wait())
	for e := int64(3); e < 6; e++ {
		require.NoError(t, s.Add(3, e, []byte(strings.Repeat("x", 100))).Wait())
	}
	require.NoError(t, s.ForceLedger(3).Wait())
	require.NoError(t, s.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, "LOCK")))
}

// TestJournalV6 replays the committed journal (from its lastMark and from
// the start) and dumps its first file, and compares both with
// testdata/journal_v6. A reader change that breaks journals an older build
// wrote fails it. -regenerate rewrites the journal (then -update).
//
//	files | replay [from-start] | dump FILE
func TestJournalV6(t *testing.T) {
	if golden.Regenerating() {
		writeV6Journal(t)
	}
	journalDir := filepath.Join(v6Dir, "journal")
	golden.Run(t, "testdata/journal_v6", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "files":
			var lines []string
			for _, d := range []string{CurrentDir(journalDir), CurrentDir(filepath.Join(v6Dir, "ledgers"))} {
				names, err := vfs.Default.List(d)
				require.NoError(t, err)
				for _, n := range names {
					info, err := os.Stat(filepath.Join(d, n))
					require.NoError(t, err)
					lines = append(lines, fmt.Sprintf("%s %d bytes", filepath.Join(d, n), info.Size()))
				}
			}
			return strings.Join(lines, "\n")
		case "replay":
			var from LogMark
			if !c.Has("from-start") {
				var problems []error
				from, problems = ReadLastMark(vfs.Default, []string{filepath.Join(v6Dir, "ledgers")}, "lastMark")
				require.Empty(t, problems)
			}
			return fmt.Sprintf("from %s\n", from) + replayListing(vfs.Default, journalDir, from)
		case "dump":
			data, err := os.ReadFile(filepath.Join(CurrentDir(journalDir), c.String(t, "file", "")))
			require.NoError(t, err)
			d := golden.NewDump(data)
			d.Bytes(4, "magic %q", d.Peek(4))
			d.Bytes(4, "format version")
			d.Bytes(SectorHeaderSize-VersionHeaderSize, "header zeros")
			for d.Remaining() >= 4 {
				if string(d.Peek(4)) == "\xff\xff\xff\x00" {
					d.Bytes(4, "padding mask")
					n := int(d.Peek(4)[3]) | int(d.Peek(4)[2])<<8
					d.Bytes(4, "padding: %d zeros follow", n)
					d.Bytes(n, "zeros")
					continue
				}
				dumpRecord(d)
			}
			return d.String()
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}

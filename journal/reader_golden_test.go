package journal

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestReplayRules pins what Replay makes of journal files built byte by
// byte: where records end, what is a torn tail (dropped with a WARN) and
// what is corruption (refused), with and without a synced-length file.
// Rewrite with -update and review the diff.
//
//	replay [from=FILE:OFFSET]
//	file ID [version=V]     starts journal file ID (hex) with its header (V1: none)
//	entry L E PAYLOAD       an entry record
//	master-key L KEY | fence L | lac L BYTES
//	record HEX              a record's bytes (the length field is added)
//	pad ALIGN               a padding record up to ALIGN
//	zeros N | raw HEX       bytes as they are
//	cut N                   drops the file's last N bytes
//	synced N|end            the file's synced-length file says N (end: its length now)
func TestReplayRules(t *testing.T) {
	golden.Run(t, "testdata/replay_rules", func(t *testing.T, c *golden.Case) string {
		fs := vfs.NewMem()
		b := newJournalBuilder(t, fs, "j")
		for _, line := range c.Lines() {
			b.apply(line)
		}
		b.flush()
		var from LogMark
		if s := c.String(t, "from", ""); s != "" {
			id, off, ok := strings.Cut(s, ":")
			require.True(t, ok, "from=FILE:OFFSET")
			from.FileID = parseHex(t, id)
			from.Offset, _ = strconv.ParseInt(off, 0, 64)
		}
		return replayListing(fs, "j", from)
	})
}

// replayListing replays a journal directory and lists what it delivers.
func replayListing(fs vfs.FS, dir string, from LogMark) string {
	var out []string
	res, err := Replay(fs, dir, from, func(r *Record) error {
		out = append(out, fmt.Sprintf("%s %s ledger %d entry %d payload %s (v%d, ends %d)",
			r.Pos, r.Kind, r.LedgerID, r.EntryID, golden.Short(r.Payload), r.Version, r.End.Offset))
		return nil
	})
	for _, tt := range res.TornTails {
		out = append(out, "WARN "+strings.ReplaceAll(tt.String(), dir+"/current/", ""))
	}
	out = append(out, fmt.Sprintf("files %d records %d end %s", res.Files, res.Records, res.End))
	if err != nil {
		out = append(out, "error: "+strings.ReplaceAll(err.Error(), dir+"/current/", ""))
	}
	return strings.Join(out, "\n")
}

func parseHex(t testing.TB, s string) int64 {
	v, err := strconv.ParseUint(s, 16, 64)
	require.NoError(t, err)
	return int64(v)
}

// journalBuilder writes journal files byte by byte for tests.
type journalBuilder struct {
	t      testing.TB
	fs     vfs.FS
	dir    string
	id     int64
	data   []byte
	synced int64 // -1: no synced-length file
}

func newJournalBuilder(t testing.TB, fs vfs.FS, journalDir string) *journalBuilder {
	dir := CurrentDir(journalDir)
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	return &journalBuilder{t: t, fs: fs, dir: dir, id: -1, synced: -1}
}

func (b *journalBuilder) apply(line string) {
	t := b.t
	f := strings.Fields(line)
	arg := func(i int) string {
		require.Greater(t, len(f), i, "%q: missing argument", line)
		return f[i]
	}
	num := func(i int) int64 {
		v, err := strconv.ParseInt(arg(i), 0, 64)
		require.NoError(t, err, line)
		return v
	}
	bytesArg := func(i int) []byte {
		v, err := golden.ParseBytes(arg(i))
		require.NoError(t, err, line)
		return v
	}
	switch f[0] {
	case "file":
		b.flush()
		b.id, b.data, b.synced = parseHex(t, arg(1)), nil, -1
		v := DefaultWriteVersion
		for _, kv := range f[2:] {
			if s, ok := strings.CutPrefix(kv, "version="); ok {
				v, _ = strconv.Atoi(s)
			}
		}
		if v >= V2 {
			b.data = encodeHeader(v)
			if v < V5 {
				b.data = b.data[:VersionHeaderSize]
			}
		}
	case "entry":
		b.data = appendEntryRecord(b.data, num(1), num(2), bytesArg(3))
	case "master-key":
		b.data = appendMasterKeyRecord(b.data, num(1), bytesArg(2))
	case "fence":
		b.data = appendFenceRecord(b.data, num(1))
	case "lac":
		b.data = appendExplicitLACRecord(b.data, num(1), bytesArg(2))
	case "record":
		r := bytesArg(1)
		b.data = append(appendLength(b.data, len(r)), r...)
	case "pad":
		b.data = appendPadding(b.data, int64(len(b.data)), int(num(1)))
	case "zeros":
		b.data = appendZeros(b.data, int(num(1)))
	case "raw":
		b.data = append(b.data, bytesArg(1)...)
	case "cut":
		b.data = b.data[:len(b.data)-int(num(1))]
	case "synced":
		if arg(1) == "end" {
			b.synced = int64(len(b.data))
		} else {
			b.synced = num(1)
		}
	default:
		t.Fatalf("unknown builder command %q", line)
	}
}

// flush writes the file being built.
func (b *journalBuilder) flush() {
	if b.id < 0 {
		return
	}
	writeTestFile(b.t, b.fs, filepath.Join(b.dir, FileName(b.id)), b.data)
	if b.synced >= 0 {
		writeTestFile(b.t, b.fs, filepath.Join(b.dir, SyncedFileName(b.id)), appendSyncedMark(nil, b.synced))
	}
	b.id = -1
}

func writeTestFile(t testing.TB, fs vfs.FS, path string, data []byte) {
	f, err := fs.Create(path)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

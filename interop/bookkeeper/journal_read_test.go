package bookkeeper

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// BookKeeper reads the journals this repository writes: the journal
// package's files, written through its public API under several settings,
// and a journal `serve` wrote before a SIGKILL, are read by BookKeeper
// 4.18.2's own journal reader (ReadJournal: Journal.listJournalIds, the
// journal's LastLogMark, Journal.scanJournal, each record decoded as
// BookieImpl's replay decodes it); and BookKeeper's bookie replays serve's
// journal (JournalBookie --verify).

// journalCase is one journal set written by the test, and a case of
// ReadJournal's --cases.
type journalCase struct {
	Name        string   `json:"name"`
	JournalDirs []string `json:"journalDirs"`
	LedgerDirs  []string `json:"ledgerDirs"`
	From        string   `json:"from"` // "start" or "mark"
}

// bkJournalLine is a line of ReadJournal's output: a journal's header
// (IDs set), a record (Kind set) or a file's end (End set).
type bkJournalLine struct {
	Case     string  `json:"case"`
	Journal  int     `json:"journal"`
	Dir      string  `json:"dir"`
	IDs      []int64 `json:"ids"`
	LastMark *struct {
		FileID int64 `json:"fileId"`
		Offset int64 `json:"offset"`
	} `json:"lastMark"`
	FileID        int64  `json:"fileId"`
	Version       int    `json:"version"`
	Offset        int64  `json:"offset"`
	Length        int    `json:"length"`
	LedgerID      int64  `json:"ledgerId"`
	EntryID       int64  `json:"entryId"`
	Kind          string `json:"kind"`
	PayloadLength int    `json:"payloadLength"`
	PayloadSHA256 string `json:"payloadSha256"`
	From          int64  `json:"from"`
	End           *int64 `json:"end"`
	Records       int    `json:"records"`
}

// bkJournal is what ReadJournal read of one journal directory.
type bkJournal struct {
	header  bkJournalLine
	records []bkJournalLine
	files   []bkJournalLine
}

// readJournals runs ReadJournal on cases and returns, per case, what it
// read of each journal.
func readJournals(t *testing.T, p *Programs, cases []journalCase) map[string][]*bkJournal {
	t.Helper()
	spec, err := json.Marshal(cases)
	require.NoError(t, err)
	specPath := filepath.Join(t.TempDir(), "cases.json")
	require.NoError(t, os.WriteFile(specPath, spec, 0o644))
	cmd := p.Command("ReadJournal", []string{"-Xmx512m", "-XX:MaxDirectMemorySize=256m"}, "--cases", specPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "java ReadJournal: stderr (end):\n%s", tail(stderr.String(), 6000))

	out := map[string][]*bkJournal{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l bkJournalLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), "%s", sc.Text())
		js := out[l.Case]
		switch {
		case l.IDs != nil:
			require.Len(t, js, l.Journal, "journal headers in order")
			out[l.Case] = append(js, &bkJournal{header: l})
		case l.Kind != "":
			js[l.Journal].records = append(js[l.Journal].records, l)
		case l.End != nil:
			js[l.Journal].files = append(js[l.Journal].files, l)
		default:
			t.Fatalf("ReadJournal printed %s", sc.Text())
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// writtenRecord is a record the test had the journal package write, as
// ReadJournal prints it.
type writtenRecord struct {
	Kind          string
	LedgerID      int64
	EntryID       int64
	PayloadLength int
	PayloadSHA256 string
}

func (r writtenRecord) String() string {
	return fmt.Sprintf("%s ledger %d entry %d (%d bytes, %.12s)", r.Kind, r.LedgerID, r.EntryID, r.PayloadLength, r.PayloadSHA256)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Meta-entry ids of the format (docs/format.md, "Journal").
const (
	metaMasterKey   = -0x1000
	metaFence       = -0x2000
	metaExplicitLAC = -0x8000
)

// journalWriter writes random records through a journal.Set and keeps,
// per journal, the records it expects a reader to find, in order.
type journalWriter struct {
	t       *testing.T
	rng     *rand.Rand
	opts    journal.Options
	set     *journal.Set
	ledgers []int64
	next    map[int64]int64
	want    [][]writtenRecord // per journal
	pending []journal.Completion
	large   int // large entries left to write
}

func newJournalWriter(t *testing.T, rng *rand.Rand, opts journal.Options) *journalWriter {
	w := &journalWriter{t: t, rng: rng, opts: opts, next: map[int64]int64{},
		want: make([][]writtenRecord, len(opts.JournalDirectories)), large: 2}
	// Ledger 0, small and large ids, the largest (journal L mod n).
	w.ledgers = []int64{0, 1, 2, 3, 1 << 40, 1<<62 + rng.Int63n(1000), math.MaxInt64, math.MaxInt64 - 1}
	w.open()
	return w
}

func (w *journalWriter) open() {
	set, err := journal.Open(w.opts, nil)
	require.NoError(w.t, err)
	w.set = set
}

// reopen closes the journals and opens them again: a new file in each.
func (w *journalWriter) reopen() {
	w.wait()
	require.NoError(w.t, w.set.Close())
	w.open()
}

func (w *journalWriter) wait() {
	for _, c := range w.pending {
		require.NoError(w.t, c.Wait())
	}
	w.pending = w.pending[:0]
}

func (w *journalWriter) expect(ledger int64, r writtenRecord) {
	i := int(ledger % int64(len(w.want)))
	w.want[i] = append(w.want[i], r)
}

// payloadSize: mostly small, some empty, some past upstream's 64 KiB
// read buffer, and a few large entries.
func (w *journalWriter) payloadSize() int {
	switch n := w.rng.Intn(100); {
	case n < 8:
		return 0
	case n < 80:
		return 1 + w.rng.Intn(300)
	case n < 97:
		return 300 + w.rng.Intn(80<<10)
	case w.large > 0:
		w.large--
		return 1<<20 + w.rng.Intn(2<<20)
	default:
		return w.rng.Intn(4 << 10)
	}
}

// step writes one random record (or a force-ledger request, which writes
// none) and sometimes waits for what is pending, so that batches, and so
// padding, vary.
func (w *journalWriter) step() {
	ledger := w.ledgers[w.rng.Intn(len(w.ledgers))]
	var c journal.Completion
	switch n := w.rng.Intn(100); {
	case n < 80:
		entry := w.next[ledger]
		w.next[ledger]++
		if w.rng.Intn(50) == 0 {
			entry = math.MaxInt64 - w.rng.Int63n(3) // the largest ids too
		}
		payload := make([]byte, w.payloadSize())
		w.rng.Read(payload)
		c = w.set.Add(ledger, entry, payload)
		w.expect(ledger, writtenRecord{"entry", ledger, entry, len(payload), sha256Hex(payload)})
	case n < 86:
		key := make([]byte, w.rng.Intn(65))
		w.rng.Read(key)
		c = w.set.AddMasterKey(ledger, key)
		w.expect(ledger, writtenRecord{"master-key", ledger, metaMasterKey, len(key), sha256Hex(key)})
	case n < 91:
		c = w.set.AddFence(ledger)
		w.expect(ledger, writtenRecord{"fence", ledger, metaFence, 0, sha256Hex(nil)})
	case n < 96:
		lac := make([]byte, w.rng.Intn(65))
		w.rng.Read(lac)
		c = w.set.AddExplicitLAC(ledger, lac)
		if w.version() >= 6 { // below version 6 it is not written, as upstream
			w.expect(ledger, writtenRecord{"explicit-lac", ledger, metaExplicitLAC, len(lac), sha256Hex(lac)})
		}
	default:
		c = w.set.ForceLedger(ledger) // never a record, as upstream
	}
	w.pending = append(w.pending, c)
	if w.rng.Intn(20) == 0 {
		w.wait()
	}
}

func (w *journalWriter) version() int {
	if w.opts.FormatVersionToWrite == 0 {
		return 6
	}
	return w.opts.FormatVersionToWrite
}

// checkpoint records the journals' current position as upstream's
// SyncThread does after a storage flush (nothing is removed: the test
// keeps every file).
func (w *journalWriter) checkpoint() {
	w.wait()
	require.NoError(w.t, w.set.SetCheckpointed(w.set.CurrentMark()))
}

func (w *journalWriter) close() {
	w.wait()
	require.NoError(w.t, w.set.Close())
}

// ourRecords reads journal dir with the journal package (Replay from
// mark) as ReadJournal prints records.
func ourRecords(t *testing.T, dir string, from journal.LogMark) []bkJournalLine {
	var out []bkJournalLine
	_, err := journal.Replay(vfs.Default, dir, from, func(r *journal.Record) error {
		out = append(out, bkJournalLine{FileID: r.Pos.FileID, Offset: r.Pos.Offset, Version: r.Version,
			Length: int(r.End.Offset - r.Pos.Offset - 4), LedgerID: r.LedgerID, EntryID: r.EntryID,
			Kind: r.Kind.String(), PayloadLength: len(r.Payload), PayloadSHA256: sha256Hex(r.Payload)})
		return nil
	})
	require.NoError(t, err)
	return out
}

func recordsOf(lines []bkJournalLine) []writtenRecord {
	out := make([]writtenRecord, len(lines))
	for i, l := range lines {
		out[i] = writtenRecord{l.Kind, l.LedgerID, l.EntryID, l.PayloadLength, l.PayloadSHA256}
	}
	return out
}

// requireSameRecords fails t at the first record where got and want
// differ, naming it.
func requireSameRecords(t *testing.T, what string, want, got []writtenRecord) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		require.Equal(t, want[i], got[i], "%s: record %d of %d", what, i, len(want))
	}
	require.Equal(t, len(want), len(got), "%s: records", what)
}

// TestBookKeeperReadsOurJournal writes journals with the journal package
// under several settings — the defaults; journalAlignmentSize 4096 with
// 1 MB pre-allocation; two journal directories rolling at
// journalMaxSizeMB=1, reopened (a new file each time) and checkpointed
// (lastMark.0, lastMark.1); format versions 5 and 4 — with every record
// kind (entries empty to 3 MB, ledger 0 to 2^63-1, master keys, fences,
// explicit LACs, force-ledger requests), and has BookKeeper 4.18.2's
// journal reader read them: every journal's records, in order, are the
// ones written, at the offsets our reader finds them; its files are the
// ones we list; its last log mark is ours; and read from the mark (as
// its bookie replays) it finds what our replay finds.
func TestBookKeeperReadsOurJournal(t *testing.T) {
	p := Build(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	type setting struct {
		name     string
		journals int
		opts     journal.Options
		records  int
		reopens  int
		marks    int
	}
	settings := []setting{
		{name: "default", journals: 1, records: 300},
		{name: "align-4096", journals: 1, records: 300,
			opts: journal.Options{AlignmentSize: 4096, PreAllocSize: 1 << 20}},
		{name: "rolling-two-journals", journals: 2, records: 1200, reopens: 2, marks: 2,
			opts: journal.Options{MaxFileSize: 1 << 20, PreAllocSize: 1 << 20, MaxBackupJournals: 1 << 20}},
		{name: "version-5", journals: 1, records: 200, opts: journal.Options{FormatVersionToWrite: 5, PreAllocSize: 1 << 20}},
		{name: "version-4", journals: 1, records: 200, opts: journal.Options{FormatVersionToWrite: 4, PreAllocSize: 1 << 20}},
	}
	var cases []journalCase
	wants := map[string][][]writtenRecord{}
	for _, s := range settings {
		dir := filepath.Join(root, s.name)
		opts := s.opts
		opts.LedgerDirectories = []string{filepath.Join(dir, "ledger0"), filepath.Join(dir, "ledger1")}
		for i := range s.journals {
			opts.JournalDirectories = append(opts.JournalDirectories, filepath.Join(dir, fmt.Sprintf("journal%d", i)))
		}
		w := newJournalWriter(t, rng, opts)
		for i := range s.records {
			w.step()
			if s.reopens > 0 && i%(s.records/(s.reopens+1)) == s.records/(s.reopens+1)-1 && i < s.records-1 {
				w.reopen()
			}
			if s.marks > 0 && i%(s.records/(s.marks+1)) == s.records/(s.marks+1)/2 {
				w.checkpoint()
			}
		}
		w.close()
		wants[s.name] = w.want
		c := journalCase{Name: s.name, JournalDirs: opts.JournalDirectories, LedgerDirs: opts.LedgerDirectories, From: "start"}
		cases = append(cases, c)
		if s.marks > 0 {
			c.Name, c.From = s.name+"/from-mark", "mark"
			cases = append(cases, c)
		}
	}

	read := readJournals(t, p, cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			name, _, fromMark := strings.Cut(c.Name, "/")
			version := 6
			for _, s := range settings {
				if s.name == name && s.opts.FormatVersionToWrite != 0 {
					version = s.opts.FormatVersionToWrite
				}
			}
			got := read[c.Name]
			require.Len(t, got, len(c.JournalDirs))
			for i, dir := range c.JournalDirs {
				bk := got[i]
				ids, err := journal.ListFiles(vfs.Default, dir)
				require.NoError(t, err)
				require.Equal(t, ids, bk.header.IDs, "journal %d: the files BookKeeper lists", i)
				ourMark, problems := journal.ReadLastMark(vfs.Default, c.LedgerDirs, journal.LastMarkFileName(i, len(c.JournalDirs)))
				require.Empty(t, problems)
				require.Equal(t, journal.LogMark{FileID: bk.header.LastMark.FileID, Offset: bk.header.LastMark.Offset}, ourMark,
					"journal %d: the last log mark BookKeeper reads", i)
				from := journal.LogMark{}
				if fromMark {
					from = ourMark
				}
				ours := ourRecords(t, dir, from)
				require.Equal(t, len(ours), len(bk.records), "journal %d: records read by BookKeeper and by us", i)
				for k := range ours {
					o, b := ours[k], bk.records[k]
					require.Equal(t, [3]int64{o.FileID, o.Offset, int64(o.Length)}, [3]int64{b.FileID, b.Offset, int64(b.Length)},
						"journal %d record %d (%s %d/%d): file, offset and length", i, k, b.Kind, b.LedgerID, b.EntryID)
				}
				want := wants[name][i]
				if fromMark {
					want = recordsOf(ours) // what our replay from the mark finds, itself checked from the start
					require.Less(t, len(want), len(wants[name][i]), "the mark is past some records")
				}
				requireSameRecords(t, fmt.Sprintf("journal %d", i), want, recordsOf(bk.records))
				withRecords := 0
				for _, f := range bk.files {
					if f.Records > 0 {
						require.Equal(t, version, f.Version, "journal %d file %x: the version BookKeeper reads", i, f.FileID)
						withRecords++
					}
				}
				t.Logf("journal %d: %d records in %d files (%d with records read), last mark %s", i, len(bk.records), len(ids), withRecords, ourMark)
				if name == "rolling-two-journals" && !fromMark {
					require.Greater(t, withRecords, 3, "journal %d rolled and was reopened", i)
				}
			}
		})
	}
}

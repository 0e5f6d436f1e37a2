package bookkeeper

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	Error         string `json:"error"`
	ReadJournal   string `json:"readjournal"`
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
	out, _, err := replayRecords(dir, from)
	require.NoError(t, err)
	return out
}

// replayRecords is ourRecords, returning Replay's result and error with
// the records delivered before it.
func replayRecords(dir string, from journal.LogMark) ([]bkJournalLine, journal.ReplayResult, error) {
	var out []bkJournalLine
	res, err := journal.Replay(vfs.Default, dir, from, func(r *journal.Record) error {
		out = append(out, bkJournalLine{FileID: r.Pos.FileID, Offset: r.Pos.Offset, Version: r.Version,
			Length: int(r.End.Offset - r.Pos.Offset - 4), LedgerID: r.LedgerID, EntryID: r.EntryID,
			Kind: r.Kind.String(), PayloadLength: len(r.Payload), PayloadSHA256: sha256Hex(r.Payload)})
		return nil
	})
	return out, res, err
}

// requireSamePositions fails t unless ours and BookKeeper's records are
// at the same files and offsets, with the same lengths.
func requireSamePositions(t *testing.T, what string, ours, bk []bkJournalLine) {
	t.Helper()
	require.Equal(t, len(ours), len(bk), "%s: records read by BookKeeper and by us", what)
	for k, o := range ours {
		b := bk[k]
		require.Equal(t, [3]int64{o.FileID, o.Offset, int64(o.Length)}, [3]int64{b.FileID, b.Offset, int64(b.Length)},
			"%s record %d (%s %d/%d): file, offset and length", what, k, b.Kind, b.LedgerID, b.EntryID)
	}
}

// shortRecords returns, per file, its first record that upstream's
// readjournal cannot format: it reads a LAC (8 bytes) after the ids of
// every record but a master key and a fence, so an entry of under 8
// payload bytes (or an explicit LAC of under 4) stops it.
func shortRecords(records []bkJournalLine) map[int64]bkJournalLine {
	out := map[int64]bkJournalLine{}
	for _, r := range records {
		if _, ok := out[r.FileID]; !ok && r.Length < 24 && r.Kind != "master-key" && r.Kind != "fence" {
			out[r.FileID] = r
		}
	}
	return out
}

// cutJournal damages the copy of a single-journal setting at dir as a
// crash or a bad disk might: one of its records (or the padding after
// it) is cut at a random byte, the file truncated there or zeroed from
// there to its end, and the synced-length files are removed, so that our
// reader reads it by upstream's rules alone, as it reads a journal
// BookKeeper wrote. It returns what it did.
func cutJournal(t *testing.T, rng *rand.Rand, dir string) string {
	recs := ourRecords(t, dir, journal.LogMark{})
	r := recs[rng.Intn(len(recs))]
	at := r.Offset + rng.Int63n(int64(4+r.Length+16))
	path := filepath.Join(journal.CurrentDir(dir), journal.FileName(r.FileID))
	synced, err := filepath.Glob(filepath.Join(journal.CurrentDir(dir), "*.synced"))
	require.NoError(t, err)
	for _, f := range synced {
		require.NoError(t, os.Remove(f))
	}
	if rng.Intn(2) == 0 {
		require.NoError(t, os.Truncate(path, at))
		return fmt.Sprintf("%s truncated at %d (in the record at %d, %d bytes)", journal.FileName(r.FileID), at, r.Offset, 4+r.Length)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, st.Size()-at), at)
	require.NoError(t, err)
	return fmt.Sprintf("%s zeroed from %d (in the record at %d, %d bytes)", journal.FileName(r.FileID), at, r.Offset, 4+r.Length)
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
// its bookie replays) it finds what our replay finds. Upstream's
// readjournal command reads each file, unless it holds a record it cannot
// format (shortRecords: an entry of under 8 payload bytes, which upstream
// never journals; docs/upstream.md), where it fails. Damaged copies
// (cutJournal) are read the same by both readers: the same records to the
// same end, or a refusal by both.
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
		large    int // entries of 1 to 3 MB (default 2)
	}
	settings := []setting{
		{name: "default", journals: 1, records: 300},
		{name: "align-4096", journals: 1, records: 300,
			opts: journal.Options{AlignmentSize: 4096, PreAllocSize: 1 << 20}},
		{name: "rolling-two-journals", journals: 2, records: 1200, reopens: 2, marks: 2, large: 8,
			opts: journal.Options{MaxFileSize: 1 << 20, PreAllocSize: 1 << 20, MaxBackupJournals: 1 << 20}},
		{name: "version-5", journals: 1, records: 200, opts: journal.Options{FormatVersionToWrite: 5, PreAllocSize: 1 << 20}},
		{name: "version-4", journals: 1, records: 200, opts: journal.Options{FormatVersionToWrite: 4, PreAllocSize: 1 << 20}},
	}
	var cases []journalCase
	wants := map[string][][]writtenRecord{}
	filesWithRecords := map[string]int{}
	for _, s := range settings {
		dir := filepath.Join(root, s.name)
		opts := s.opts
		opts.LedgerDirectories = []string{filepath.Join(dir, "ledger0"), filepath.Join(dir, "ledger1")}
		for i := range s.journals {
			opts.JournalDirectories = append(opts.JournalDirectories, filepath.Join(dir, fmt.Sprintf("journal%d", i)))
		}
		w := newJournalWriter(t, rng, opts)
		if s.large > 0 {
			w.large = s.large
		}
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

	// Damaged copies of the single-journal settings (cutJournal).
	cuts := map[string]string{} // case -> what was done
	cutFrom := map[string]string{}
	for k := range 8 {
		s := settings[[]int{0, 1, 3, 4}[rng.Intn(4)]]
		name := fmt.Sprintf("cut-%d", k)
		dst := filepath.Join(root, name)
		require.NoError(t, os.CopyFS(dst, os.DirFS(filepath.Join(root, s.name))))
		c := journalCase{Name: name, JournalDirs: []string{filepath.Join(dst, "journal0")},
			LedgerDirs: []string{filepath.Join(dst, "ledger0"), filepath.Join(dst, "ledger1")}, From: "start"}
		cuts[name] = s.name + ": " + cutJournal(t, rng, c.JournalDirs[0])
		cutFrom[name] = s.name
		cases = append(cases, c)
	}

	read := readJournals(t, p, cases)
	for _, c := range cases {
		if cut, ok := cuts[c.Name]; ok {
			t.Run(c.Name, func(t *testing.T) {
				// Both readers stop at the same record, or both refuse
				// the same file (upstream's replay then fails).
				bk := read[c.Name][0]
				ours, res, err := replayRecords(c.JournalDirs[0], journal.LogMark{})
				bkErr := ""
				for _, f := range bk.files {
					bkErr += f.Error
				}
				t.Logf("%s: BookKeeper read %d records (error: %q); we read %d (error: %v, torn tails: %v)",
					cut, len(bk.records), bkErr, len(ours), err, res.TornTails)
				require.Equal(t, err != nil, bkErr != "", "our reader's and BookKeeper's refusals agree")
				requireSamePositions(t, "journal 0", ours, bk.records)
				requireSameRecords(t, "journal 0", recordsOf(ours), recordsOf(bk.records))
				if err == nil {
					written := wants[cutFrom[c.Name]][0]
					require.LessOrEqual(t, len(ours), len(written))
					// The record cut may read whole (zeros in its
					// payload): all but the last are the ones written.
					n := max(len(ours)-1, 0)
					requireSameRecords(t, "journal 0", written[:n], recordsOf(ours)[:n])
				}
			})
			continue
		}
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
				requireSamePositions(t, fmt.Sprintf("journal %d", i), ours, bk.records)
				want := wants[name][i]
				if fromMark {
					want = recordsOf(ours) // what our replay from the mark finds, itself checked from the start
					require.Less(t, len(want), len(wants[name][i]), "the mark is past some records")
				}
				requireSameRecords(t, fmt.Sprintf("journal %d", i), want, recordsOf(bk.records))
				withRecords := 0
				short := shortRecords(bk.records)
				for _, f := range bk.files {
					require.Empty(t, f.Error, "journal %d file %x", i, f.FileID)
					if !fromMark {
						// Upstream's readjournal reads a LAC after the ids
						// of every record but a master key and a fence.
						if r, ok := short[f.FileID]; ok {
							require.Contains(t, f.ReadJournal, "IndexOutOfBoundsException",
								"journal %d file %x: readjournal on a %d-byte %s record", i, f.FileID, r.Length, r.Kind)
						} else {
							require.Equal(t, "ok", f.ReadJournal, "journal %d file %x: readjournal", i, f.FileID)
						}
					}
					if f.Records > 0 {
						require.Equal(t, version, f.Version, "journal %d file %x: the version BookKeeper reads", i, f.FileID)
						withRecords++
					}
				}
				t.Logf("journal %d: %d records in %d files (%d with records read), last mark %s", i, len(bk.records), len(ids), withRecords, ourMark)
				filesWithRecords[c.Name] += withRecords
			}
			if c.Name == "rolling-two-journals" {
				// 3 opens of 2 journals, and rolls.
				require.Greater(t, filesWithRecords[c.Name], 8, "files with records")
			}
		})
	}
}

// serveAck is an entry serve answered 200 for.
type serveAck struct {
	ledger, entry int64
	payload       []byte
}

// TestBookKeeperReadsServeJournal runs the built binary's serve with two
// journal directories (journalMaxSizeMB=1, so they roll; no checkpoint of
// its own: flushInterval is an hour and the write cache is large), 4
// writers PUT entries (8 bytes, the LAC alone, to 300 KB; ledger 0 and a
// large id among theirs) over the data API, and serve is SIGKILLed while
// they write. BookKeeper 4.18.2's journal reader then reads the records
// ours reads, at the same offsets, and finds every entry serve
// acknowledged, byte for byte, in its ledger's journal (ledger mod 2),
// after its ledger's master key and in entry order; its readjournal
// command reads every file; and
// BookKeeper's own bookie (JournalBookie --verify: BookieImpl over a
// DbLedgerStorage in fresh ledger directories) replays a copy of the
// journals and reads every acknowledged entry back.
func TestBookKeeperReadsServeJournal(t *testing.T) {
	p := Build(t)
	bin := buildBookieIndex(t)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	journalDirs := []string{filepath.Join(root, "journal0"), filepath.Join(root, "journal1")}
	ledgerDirs := []string{filepath.Join(root, "ledger0")}
	align := []int{512, 4096}[rng.Intn(2)]
	conf := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(conf, []byte(strings.Join([]string{
		"ledgerDirectories=" + strings.Join(ledgerDirs, ","),
		"journalDirectories=" + strings.Join(journalDirs, ","),
		"journalMaxSizeMB=1",
		"journalPreAllocSizeMB=1",
		fmt.Sprint("journalAlignmentSize=", align),
		"journalMaxBackups=1000",
		"flushInterval=3600000",
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
		"prometheusStatsHttpEnable=false",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_writeCacheMaxSizeMb=64",
		"dbStorage_readAheadCacheMaxSizeMb=4",
		"nettyMaxFrameSizeBytes=1048576",
	}, "\n")+"\n"), 0o600))
	srv := (&migrationRun{bin: bin, conf: conf}).serve(t)

	const writers = 4
	wrng := make([]*rand.Rand, writers)
	for w := range wrng {
		wrng[w] = rand.New(rand.NewSource(rng.Int63()))
	}
	life := time.Duration(300+rng.Intn(700)) * time.Millisecond
	t.Logf("journalAlignmentSize=%d, SIGKILL %s after the first 200", align, life)
	client := &http.Client{Timeout: 10 * time.Second}
	var mu sync.Mutex
	var acked []serveAck
	firstAck := make(chan struct{})
	var firstOnce sync.Once
	var wg sync.WaitGroup
	for w := range writers {
		ledgers := []int64{int64(w*100 + 1), int64(w*100 + 2)}
		switch w {
		case 0:
			ledgers = append(ledgers, 0)
		case 1:
			ledgers = append(ledgers, 1<<50+int64(wrng[w].Intn(1000)))
		}
		wg.Go(func() {
			r := wrng[w]
			next := map[int64]int64{}
			for {
				ledger := ledgers[r.Intn(len(ledgers))]
				entry := next[ledger]
				// A BookKeeper client's entry: the LAC, then the rest
				// (BookKeeper's storage reads the LAC of every add, so
				// its replay fails on a shorter one: docs/upstream.md).
				size := 8 + r.Intn(8<<10)
				switch n := r.Intn(100); {
				case n < 5:
					size = 8
				case n < 15:
					size = 8 + r.Intn(300<<10)
				}
				payload := make([]byte, size)
				binary.BigEndian.PutUint64(payload, uint64(entry-1))
				r.Read(payload[8:])
				req, err := http.NewRequest(http.MethodPut,
					fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", srv.base, ledger, entry), bytes.NewReader(payload))
				require.NoError(t, err)
				resp, err := client.Do(req)
				if err != nil {
					return // killed
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					continue // not acknowledged (a full write cache): the entry id is tried again
				}
				next[ledger]++
				mu.Lock()
				acked = append(acked, serveAck{ledger, entry, payload})
				mu.Unlock()
				firstOnce.Do(func() { close(firstAck) })
			}
		})
	}
	select {
	case <-firstAck:
	case <-time.After(60 * time.Second):
		t.Fatalf("no PUT acknowledged in 60 s:\n%s", srv.log.String())
	}
	time.Sleep(life)
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGKILL))
	<-srv.done
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, acked)

	read := readJournals(t, p, []journalCase{{Name: "serve", JournalDirs: journalDirs, LedgerDirs: ledgerDirs, From: "start"}})["serve"]
	require.Len(t, read, len(journalDirs))
	type key struct{ ledger, entry int64 }
	found := map[key]string{}
	files := 0
	for i, bk := range read {
		files += len(bk.header.IDs)
		keyed := map[int64]bool{}
		last := map[int64]int64{}
		for _, r := range bk.records {
			require.Equal(t, int64(i), r.LedgerID%int64(len(read)), "journal %d holds ledger %d", i, r.LedgerID)
			switch r.Kind {
			case "master-key":
				require.Zero(t, r.PayloadLength, "ledger %d: the data API's ledgers have no master key", r.LedgerID)
				keyed[r.LedgerID] = true
			case "entry":
				require.True(t, keyed[r.LedgerID], "journal %d: ledger %d entry %d before its ledger's master key (BookKeeper's replay would skip it)", i, r.LedgerID, r.EntryID)
				if prev, ok := last[r.LedgerID]; ok {
					require.Greater(t, r.EntryID, prev, "journal %d: ledger %d's entries in order", i, r.LedgerID)
				}
				last[r.LedgerID] = r.EntryID
				found[key{r.LedgerID, r.EntryID}] = r.PayloadSHA256
			default:
				t.Fatalf("journal %d: a %s record at %x.txn offset %d; serve writes entries and master keys", i, r.Kind, r.FileID, r.Offset)
			}
		}
	}
	// Our reader reads the killed journals as BookKeeper's does: the same
	// records at the same offsets, up to the same end.
	for i, bk := range read {
		ours := ourRecords(t, journalDirs[i], journal.LogMark{})
		requireSamePositions(t, fmt.Sprintf("journal %d", i), ours, bk.records)
		requireSameRecords(t, fmt.Sprintf("journal %d", i), recordsOf(ours), recordsOf(bk.records))
		for _, f := range bk.files {
			require.Equal(t, "ok", f.ReadJournal, "journal %d file %x: upstream's readjournal", i, f.FileID)
		}
	}
	for _, a := range acked {
		sum, ok := found[key{a.ledger, a.entry}]
		require.True(t, ok, "ledger %d entry %d (%d bytes) was acknowledged; BookKeeper's reader does not find it", a.ledger, a.entry, len(a.payload))
		require.Equal(t, sha256Hex(a.payload), sum, "ledger %d entry %d: the bytes BookKeeper reads", a.ledger, a.entry)
	}
	t.Logf("BookKeeper's reader found all %d acknowledged entries among %d entry records in %d journal files", len(acked), len(found), files)

	// BookKeeper's bookie replays a copy of the journals into its own
	// storage and reads every acknowledged entry.
	verify := t.TempDir()
	exp := map[string]any{"journalDirs": []string{"journal0", "journal1"}}
	byLedger := map[int64][]map[string]any{}
	for _, a := range acked {
		sum, _ := entryHash(a.ledger, a.entry, a.payload)
		byLedger[a.ledger] = append(byLedger[a.ledger], map[string]any{"id": a.entry, "sha256": sum})
	}
	var ledgers []map[string]any
	for id, entries := range byLedger {
		ledgers = append(ledgers, map[string]any{"id": id, "masterKey": "", "fenced": false, "explicitLac": nil, "entries": entries})
	}
	exp["ledgers"] = ledgers
	b, err := json.Marshal(exp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(verify, "expected.json"), b, 0o644))
	for i, d := range journalDirs {
		require.NoError(t, os.CopyFS(filepath.Join(verify, fmt.Sprintf("journal%d", i)), os.DirFS(d)))
	}
	lines := strings.Split(strings.TrimSpace(p.Run(t, "JournalBookie", "--verify", verify)), "\n")
	t.Log("BookKeeper's bookie: ", lines[len(lines)-1])
}

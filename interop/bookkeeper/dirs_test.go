package bookkeeper

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// expectedDirs is a writer's expected.json: the directories' layout and,
// per ledger, what BookKeeper itself reads back.
type expectedDirs struct {
	Writer       string         `json:"writer"`
	Scenario     string         `json:"scenario"`
	Seed         int64          `json:"seed"`
	LogSizeLimit int64          `json:"logSizeLimit"`
	LedgerDirs   []string       `json:"ledgerDirs"`
	IndexDirs    []string       `json:"indexDirs"`
	JournalDirs  []string       `json:"journalDirs"`
	Facts        map[string]any `json:"scenarioFacts"`
	// Conf is the upstream configuration keys the writer set beyond the
	// directories and logSizeLimit (a path relative to the description's
	// directory), as the bookie's bk_server.conf holds them.
	Conf    map[string]string `json:"conf"`
	Ledgers []expectedLedger  `json:"ledgers"`
}

type expectedLedger struct {
	ID             int64   `json:"id"`
	Status         string  `json:"status"`
	InLedgersIndex bool    `json:"inLedgersIndex"`
	Fenced         bool    `json:"fenced"`
	MasterKey      *string `json:"masterKey"`
	ExplicitLAC    *string `json:"explicitLac"`
	LastEntry      int64   `json:"lastEntry"`
	// The journal scenario's: whether a checkpoint stored the fence, and
	// the adds in flight when the process died.
	FenceCheckpointed bool `json:"fenceCheckpointed"`
	// ExplicitLACCheckpointed (journal scenario): whether a checkpoint
	// stored the explicit LAC; absent in descriptions written before it
	// was recorded.
	ExplicitLACCheckpointed *bool           `json:"explicitLacCheckpointed"`
	Entries                 []expectedEntry `json:"entries"`
	InFlight                []expectedEntry `json:"inFlight"`
}

type expectedEntry struct {
	ID     int64  `json:"id"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	// Checkpointed (journal scenario): a checkpoint stored the entry; the
	// others are only in the journal.
	Checkpointed *bool `json:"checkpointed"`
}

func readExpected(t *testing.T, dir string) *expectedDirs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	var e expectedDirs
	require.NoError(t, json.Unmarshal(b, &e))
	require.NotEmpty(t, e.LedgerDirs, "%s: no ledger directories", dir)
	if len(e.IndexDirs) == 0 {
		e.IndexDirs = e.LedgerDirs
	}
	return &e
}

// ledgerRecord is upstream's LedgerData message, the value of a ledgers
// index key: decoded here independently of the migration's decoder, as a
// check of both.
type ledgerRecord struct {
	exists, fenced bool
	masterKey      []byte
	explicitLAC    []byte // nil when absent
}

func decodeLedgerRecord(b []byte) (ledgerRecord, error) {
	var r ledgerRecord
	for off := 0; off < len(b); {
		tag, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return r, fmt.Errorf("bad tag at %d", off)
		}
		off += n
		switch wire := tag & 7; wire {
		case 0:
			v, n := binary.Uvarint(b[off:])
			if n <= 0 {
				return r, fmt.Errorf("bad varint at %d", off)
			}
			off += n
			switch tag >> 3 {
			case 1:
				r.exists = v != 0
			case 2:
				r.fenced = v != 0
			}
		case 2:
			l, n := binary.Uvarint(b[off:])
			if n <= 0 || uint64(len(b)-off-n) < l {
				return r, fmt.Errorf("bad length at %d", off)
			}
			off += n
			v := append([]byte{}, b[off:off+int(l)]...)
			off += int(l)
			switch tag >> 3 {
			case 3:
				r.masterKey = v
			case 4:
				r.explicitLAC = v
			}
		default:
			return r, fmt.Errorf("wire type %d at %d", wire, off)
		}
	}
	return r, nil
}

// record is an entry-log record, as entrylog.Scan reads it: the SHA-256
// of the whole entry (its 16-byte ids, then the payload).
type record struct {
	ledgerID, entryID int64
	sha256            string
	size              int
}

// bookieDirs is what the repository's read-only tools read of a
// BookKeeper bookie's directories: per ledger directory, the location
// index and the ledgers index (lsm/rocksdb) and every record of every
// entry log (bookie/entrylog).
type bookieDirs struct {
	locations map[[2]int64]int64 // (ledger, entry) → location, all directories
	dirOf     map[[2]int64]int
	ledgers   map[int64]ledgerRecord
	records   []map[int64]record // per directory: location → record
	logs      int
	emptyLogs int
	tables    int
}

func readBookieDirs(t *testing.T, root string, e *expectedDirs) *bookieDirs {
	t.Helper()
	d := &bookieDirs{
		locations: map[[2]int64]int64{},
		dirOf:     map[[2]int64]int{},
		ledgers:   map[int64]ledgerRecord{},
	}
	for i := range e.LedgerDirs {
		ledgerCur := filepath.Join(root, e.LedgerDirs[i], "current")
		indexCur := filepath.Join(root, e.IndexDirs[i], "current")

		locs, err := rocksdb.Open(vfs.Default, filepath.Join(indexCur, "locations"))
		require.NoError(t, err, "the RocksDB reader opens BookKeeper's location index")
		p := locs.Props()
		d.tables += len(p.Tables)
		require.NoError(t, locs.Scan(func(k, v []byte) error {
			if len(k) != 16 || len(v) != 8 {
				return fmt.Errorf("location key %x value %x", k, v)
			}
			key := [2]int64{int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[8:]))}
			d.locations[key] = int64(binary.BigEndian.Uint64(v))
			d.dirOf[key] = i
			return nil
		}))
		require.NoError(t, locs.Close())

		ledgers, err := rocksdb.Open(vfs.Default, filepath.Join(indexCur, "ledgers"))
		require.NoError(t, err, "the RocksDB reader opens BookKeeper's ledgers index")
		require.NoError(t, ledgers.Scan(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("ledgers key %x", k)
			}
			id := int64(binary.BigEndian.Uint64(k))
			if id < 0 {
				return nil // upstream's storage flags
			}
			r, err := decodeLedgerRecord(v)
			if err != nil {
				return fmt.Errorf("ledger %d: %v", id, err)
			}
			d.ledgers[id] = r
			return nil
		}))
		require.NoError(t, ledgers.Close())

		ids, err := entrylog.ListLogs(vfs.Default, ledgerCur)
		require.NoError(t, err)
		recs := map[int64]record{}
		for _, id := range ids {
			res, err := entrylog.Scan(vfs.Default, filepath.Join(ledgerCur, entrylog.LogFileName(id)), func(r *entrylog.Record) error {
				h := sha256.New()
				var ids [16]byte
				binary.BigEndian.PutUint64(ids[:8], uint64(r.LedgerID))
				binary.BigEndian.PutUint64(ids[8:], uint64(r.EntryID))
				h.Write(ids[:])
				h.Write(r.Payload)
				recs[r.Location] = record{r.LedgerID, r.EntryID, hex.EncodeToString(h.Sum(nil)), 16 + len(r.Payload)}
				return nil
			})
			require.NoError(t, err, "entry log %x of %s", id, ledgerCur)
			require.NoError(t, res.Tail, "entry log %x of %s", id, ledgerCur)
			if res.Size == 0 {
				// The next log BookKeeper's allocator created ahead of
				// time; its header is written when it becomes current.
				d.emptyLogs++
				continue
			}
			require.Equal(t, entrylog.FormatBKLO, res.Format, "entry log %x of %s", id, ledgerCur)
			d.logs++
		}
		d.records = append(d.records, recs)
	}
	return d
}

// checkEntry checks that the index names the entry and that the record
// there is it.
func (d *bookieDirs) checkEntry(t *testing.T, ledgerID int64, e expectedEntry) {
	t.Helper()
	key := [2]int64{ledgerID, e.ID}
	loc, ok := d.locations[key]
	require.True(t, ok, "ledger %d entry %d: not in the location index", ledgerID, e.ID)
	rec, ok := d.records[d.dirOf[key]][loc]
	require.True(t, ok, "ledger %d entry %d: no record at %s", ledgerID, e.ID, entrylog.FormatLocation(loc))
	require.Equal(t, record{ledgerID, e.ID, e.SHA256, e.Size}, rec, "ledger %d entry %d at %s", ledgerID, e.ID, entrylog.FormatLocation(loc))
}

func hexOrNil(s *string) []byte {
	if s == nil {
		return nil
	}
	b, err := hex.DecodeString(*s)
	if err != nil {
		panic(err)
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// checkStorageDirs checks a storage scenario's directories (clean,
// separate-index, crash) against its description: every ledger's record
// in the ledgers index, every entry the location index names, nothing
// else in either index.
func checkStorageDirs(t *testing.T, root string, e *expectedDirs) {
	d := readBookieDirs(t, root, e)
	want := map[[2]int64]bool{}
	records := 0
	for _, l := range e.Ledgers {
		rec, ok := d.ledgers[l.ID]
		require.Equal(t, l.InLedgersIndex, ok, "ledger %d (%s): in the ledgers index", l.ID, l.Status)
		if ok {
			records++
			require.True(t, rec.exists, "ledger %d", l.ID)
			require.Equal(t, l.Fenced, rec.fenced, "ledger %d: fenced", l.ID)
			require.Equal(t, hexOrNil(l.MasterKey), nonNil(rec.masterKey), "ledger %d: master key", l.ID)
			require.Equal(t, hexOrNil(l.ExplicitLAC), rec.explicitLAC, "ledger %d: explicit LAC", l.ID)
		}
		last := int64(-1)
		for _, en := range l.Entries {
			d.checkEntry(t, l.ID, en)
			want[[2]int64{l.ID, en.ID}] = true
			last = max(last, en.ID)
		}
		require.Equal(t, l.LastEntry, last, "ledger %d: last entry", l.ID)
	}
	require.Len(t, d.ledgers, records, "the ledgers index holds only the ledgers described")
	var extra [][2]int64
	for k := range d.locations {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		return extra[i][0] < extra[j][0] || extra[i][0] == extra[j][0] && extra[i][1] < extra[j][1]
	})
	require.Empty(t, extra, "locations of entries the description does not hold")
	t.Logf("%s (seed %d): %d ledgers (%d in the ledgers index), %d entries, %d entry logs (and %d empty), %d tables",
		e.Scenario, e.Seed, len(e.Ledgers), records, len(want), d.logs, d.emptyLogs, d.tables)
}

// checkJournalDirs checks the journal scenario's directories without
// replaying the journal: the storage holds exactly the checkpointed
// entries, each ledger directory has the journal's log mark, and the
// journal directory has a journal file; then it migrates a copy and
// replays the journal into it (checkMigrateKilledBookie).
func checkJournalDirs(t *testing.T, root string, e *expectedDirs) {
	d := readBookieDirs(t, root, e)
	checkpointed := 0
	for _, l := range e.Ledgers {
		for _, en := range l.Entries {
			require.NotNil(t, en.Checkpointed)
			if *en.Checkpointed {
				d.checkEntry(t, l.ID, en)
				checkpointed++
			} else {
				_, ok := d.locations[[2]int64{l.ID, en.ID}]
				require.False(t, ok, "ledger %d entry %d: only in the journal, yet in the location index", l.ID, en.ID)
			}
		}
		if l.FenceCheckpointed {
			require.True(t, d.ledgers[l.ID].fenced, "ledger %d: the checkpointed fence", l.ID)
		}
	}
	require.Len(t, d.locations, checkpointed, "the location index holds only checkpointed entries")
	require.NotEmpty(t, e.JournalDirs)
	for i, jd := range e.JournalDirs {
		name := journal.LastMarkFileName(i, len(e.JournalDirs))
		for _, dir := range e.LedgerDirs {
			b, err := os.ReadFile(filepath.Join(root, dir, "current", name))
			require.NoError(t, err)
			require.Len(t, b, 16, "%s: journal id and offset", name)
		}
		txns, err := filepath.Glob(filepath.Join(root, jd, "current", "*.txn"))
		require.NoError(t, err)
		require.NotEmpty(t, txns, "journal files in %s", jd)
	}
	t.Logf("journal (seed %d): %d ledgers, %d entries checkpointed, %d only in the journal", e.Seed, len(e.Ledgers),
		checkpointed, countEntries(e)-checkpointed)
	checkMigrateKilledBookie(t, root, e)
}

func countEntries(e *expectedDirs) int {
	n := 0
	for _, l := range e.Ledgers {
		n += len(l.Entries)
	}
	return n
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func checkDirs(t *testing.T, root string) {
	e := readExpected(t, root)
	if e.Scenario == "journal" {
		checkJournalDirs(t, root, e)
	} else {
		checkStorageDirs(t, root, e)
	}
}

// TestCommittedDirs reads the committed copies of the writers' output
// (testdata/dirs, made by the commands in testdata/README.md) with the
// repository's read-only tools: the RocksDB reader reads their indexes
// and the entry-log scanner their logs, and both agree with what
// BookKeeper read back when they were written.
func TestCommittedDirs(t *testing.T) {
	scenarios, err := filepath.Glob(filepath.Join("testdata", "dirs", "*", "expected.json"))
	require.NoError(t, err)
	require.Len(t, scenarios, 4, "clean, separate-index, crash, journal")
	for _, p := range scenarios {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) { checkDirs(t, dir) })
	}
}

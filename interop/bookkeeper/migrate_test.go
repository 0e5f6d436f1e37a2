package bookkeeper

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The migration of what BookKeeper itself wrote, checked from outside as
// an operator runs it (docs/migration.md): `bookie-index migrate --conf`
// with a bk_server.conf naming the directories, `bookie-index serve` on
// them, every entry read back through the data API and every ledger's
// metadata through `bookie-index db ledgers`; then the roll back of
// docs/migration.md (the new indexes moved away, the RocksDB backups
// renamed back), after which every file BookKeeper wrote is as it was and
// BookKeeper's own DbLedgerStorage (or bookie, for the journal scenario)
// opens the directories and reads every entry of the description.

// buildBookieIndex builds cmd/bookie-index into a temporary directory of
// t and returns the binary's path.
func buildBookieIndex(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds and runs the bookie-index binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the bookie-index binary")
	}
	bin := filepath.Join(t.TempDir(), "bookie-index")
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/bookie-index/bookie-index/cmd/bookie-index")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// migrationRun is one scenario's directories, copied, and what the test
// learns of them.
type migrationRun struct {
	bin  string
	root string
	e    *expectedDirs
	conf string
	// before is every file of the copy before the migration: path → hash.
	before map[string]string
}

// bkServerConf writes root/bk_server.conf as the bookie's operator would
// have it: the directories of the description (absolute), its
// logSizeLimit and the upstream keys the writer set (a path relative to
// the description's directory made absolute), and serve's admin listener
// on a free loopback port.
func bkServerConf(t *testing.T, root string, e *expectedDirs) string {
	abs := func(names []string) string {
		var p []string
		for _, n := range names {
			p = append(p, filepath.Join(root, n))
		}
		return strings.Join(p, ",")
	}
	lines := []string{
		"ledgerDirectories=" + abs(e.LedgerDirs),
		"indexDirectories=" + abs(e.IndexDirs),
		fmt.Sprint("logSizeLimit=", e.LogSizeLimit),
		"httpServerHost=127.0.0.1",
		"httpServerPort=0",
	}
	if e.LogSizeLimit == 0 {
		lines = slicesDelete(lines, 2)
	}
	if len(e.JournalDirs) > 0 {
		lines = append(lines, "journalDirectories="+abs(e.JournalDirs))
	}
	keys := make([]string, 0, len(e.Conf))
	for k := range e.Conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := e.Conf[k]
		if strings.HasSuffix(k, "RocksdbConf") || k == "defaultRocksdbConf" {
			v = filepath.Join(root, v)
		}
		lines = append(lines, k+"="+v)
	}
	p := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return p
}

func slicesDelete(s []string, i int) []string { return append(s[:i:i], s[i+1:]...) }

// treeHashes returns every regular file under root (relative path →
// size and SHA-256), but bk_server.conf.
func treeHashes(t *testing.T, root string) map[string]string {
	m := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "bk_server.conf" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[filepath.ToSlash(rel)] = fmt.Sprintf("%d %x", len(b), sum[:8])
		return nil
	}))
	return m
}

// newMigrationRun copies the scenario at src (a directory with
// expected.json) and writes its bk_server.conf.
func newMigrationRun(t *testing.T, bin, src string) *migrationRun {
	root := copyDir(t, src)
	e := readExpected(t, root)
	r := &migrationRun{bin: bin, root: root, e: e}
	r.conf = bkServerConf(t, root, e)
	r.before = treeHashes(t, root)
	return r
}

// run runs the binary with args and returns its stdout and stderr; it
// fails t unless it exits 0.
func (r *migrationRun) run(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(r.bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "bookie-index %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String(), stderr.String()
}

// migrateSummary is the sum of migrate's summary lines over the
// directories.
type migrateSummary struct {
	dirs, ledgers, deleted, locations, purged, purgedLedgers, skipped int
}

var migrateDoneLine = regexp.MustCompile(`: done in \S+: (\d+) ledgers \((\d+) deleted dropped\), (\d+) locations in \d+ tables, (\d+) locations of (\d+) ledgers no longer held purged, (\d+) skipped, \d+ verified by lookup`)

// migrate runs `bookie-index migrate --conf` and sums its summary.
func (r *migrationRun) migrate(t *testing.T) migrateSummary {
	out, errOut := r.run(t, "migrate", "--conf", r.conf)
	t.Logf("migrate:\n%s", out)
	var s migrateSummary
	for _, m := range migrateDoneLine.FindAllStringSubmatch(out, -1) {
		n := make([]int, len(m))
		for i := 1; i < len(m); i++ {
			n[i], _ = strconv.Atoi(m[i])
		}
		s.dirs++
		s.ledgers += n[1]
		s.deleted += n[2]
		s.locations += n[3]
		s.purged += n[4]
		s.purgedLedgers += n[5]
		s.skipped += n[6]
	}
	require.Equal(t, len(r.e.LedgerDirs), s.dirs, "a summary line per directory:\n%s\n%s", out, errOut)
	require.NotContains(t, out, "warning", "migrate warned")
	return s
}

// ledgerLine is a line of `bookie-index db ledgers --json`.
type ledgerLine struct {
	Ledger       int64  `json:"ledger"`
	Exists       bool   `json:"exists"`
	Fenced       bool   `json:"fenced"`
	PurgePending bool   `json:"purge_pending"`
	MasterKey    string `json:"master_key"`
	HasLAC       bool   `json:"has_explicit_lac"`
	ExplicitLAC  string `json:"explicit_lac"`
}

// ledgersIndexes reads every migrated ledgers index with `bookie-index db
// ledgers --json`.
func (r *migrationRun) ledgersIndexes(t *testing.T) map[int64]ledgerLine {
	all := map[int64]ledgerLine{}
	for _, d := range r.e.IndexDirs {
		out, _ := r.run(t, "db", "ledgers", filepath.Join(r.root, d, "current", "ledgers"), "--json")
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			var l ledgerLine
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l), "db ledgers: %s", sc.Text())
			_, dup := all[l.Ledger]
			require.False(t, dup, "ledger %d in two directories", l.Ledger)
			all[l.Ledger] = l
		}
	}
	return all
}

// inStorage says whether BookKeeper's ledgers index holds ledger l. In
// the journal scenario: whether a checkpoint stored it (it had entries
// then); the others are only in the journal.
func (r *migrationRun) inStorage(l expectedLedger) bool {
	if r.e.Scenario != "journal" {
		return l.InLedgersIndex
	}
	for _, en := range l.Entries {
		if en.Checkpointed != nil && *en.Checkpointed {
			return true
		}
	}
	return l.InLedgersIndex
}

// checkLedgersIndexes checks the ledgers indexes serve left against the
// description: exactly the ledgers BookKeeper itself reads back (in the
// journal scenario, after its journal's replay: every ledger), each with
// its fence, master key and explicit LAC, and the ledger written through
// serve.
func (r *migrationRun) checkLedgersIndexes(t *testing.T) {
	got := r.ledgersIndexes(t)
	held := 0
	for _, l := range r.e.Ledgers {
		g, ok := got[l.ID]
		want := l.InLedgersIndex || r.e.Scenario == "journal"
		require.Equal(t, want, ok, "ledger %d (%s): in the ledgers index", l.ID, l.Status)
		if !ok {
			continue
		}
		held++
		require.True(t, g.Exists, "ledger %d", l.ID)
		require.False(t, g.PurgePending, "ledger %d", l.ID)
		mk := ""
		if l.MasterKey != nil {
			mk = *l.MasterKey
		}
		require.Equal(t, mk, g.MasterKey, "ledger %d: master key", l.ID)
		require.Equal(t, l.Fenced, g.Fenced, "ledger %d: fenced", l.ID)
		require.Equal(t, l.ExplicitLAC != nil, g.HasLAC, "ledger %d: explicit LAC present", l.ID)
		if l.ExplicitLAC != nil {
			require.Equal(t, *l.ExplicitLAC, g.ExplicitLAC, "ledger %d: explicit LAC", l.ID)
		}
	}
	g, ok := got[afterMigrationLedger]
	require.True(t, ok && g.Exists, "the ledger written through serve")
	require.Len(t, got, held+1, "the ledgers indexes hold only the ledgers described and the one written through serve")
}

// server is a running `bookie-index serve`.
type server struct {
	cmd  *exec.Cmd
	base string
	log  *lockedBuffer
	done chan error
}

type lockedBuffer struct {
	mu  chan struct{}
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.String()
}

var listeningLine = regexp.MustCompile(`msg="admin HTTP server listening" addr=(\S+)`)

// serve starts `bookie-index serve --conf` and waits until it listens.
func (r *migrationRun) serve(t *testing.T) *server {
	t.Helper()
	cmd := exec.Command(r.bin, "serve", "--conf", r.conf)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &server{cmd: cmd, log: &lockedBuffer{mu: make(chan struct{}, 1)}, done: make(chan error, 1)}
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(s.log, sc.Text())
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
			}
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case addr := <-addrs:
		s.base = "http://" + addr
	case err := <-s.done:
		t.Fatalf("serve exited: %v\n%s", err, s.log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen within 60 s:\n%s", s.log.String())
	}
	return s
}

// stop stops serve as an operator does (SIGTERM) and fails t unless it
// exits 0.
func (s *server) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-s.done:
		require.NoError(t, err, "serve's exit:\n%s", s.log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not stop within 60 s:\n%s", s.log.String())
	}
}

func (s *server) get(t *testing.T, path string) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.Get(s.base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b, resp.Header
}

// entrySHA256 is the SHA-256 of an entry as the client sent it: the
// ledger and entry ids, then the payload the data API answers.
func entrySHA256(ledgerID, entryID int64, payload []byte) string {
	var ids [16]byte
	binary.BigEndian.PutUint64(ids[:8], uint64(ledgerID))
	binary.BigEndian.PutUint64(ids[8:], uint64(entryID))
	h := sha256.New()
	h.Write(ids[:])
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil))
}

// storedEntries is what BookKeeper's storage (its entry logs and
// location index) holds of ledger l: every entry of the description, but
// for the journal scenario only those a checkpoint stored (the others are
// only in the journal).
func (r *migrationRun) storedEntries(l expectedLedger) []expectedEntry {
	var out []expectedEntry
	for _, en := range l.Entries {
		if en.Checkpointed == nil || *en.Checkpointed {
			out = append(out, en)
		}
	}
	return out
}

// getEntry reads an entry through serve's data API: its payload, or nil
// with a 404.
func (s *server) getEntry(t *testing.T, ledgerID, entryID int64) []byte {
	t.Helper()
	code, body, h := s.get(t, fmt.Sprintf("/api/v1/ledger/entry?ledgerId=%d&entryId=%d", ledgerID, entryID))
	if code == http.StatusNotFound {
		return nil
	}
	require.Equal(t, http.StatusOK, code, "ledger %d entry %d: %s", ledgerID, entryID, body)
	require.Equal(t, strconv.FormatInt(entryID, 10), h.Get("X-Entry-Id"))
	if body == nil {
		body = []byte{}
	}
	return body
}

// checkServed reads every ledger of the description through serve's data
// API: every entry byte-exact, the last entry, the entry after it absent;
// a purged ledger has none. In the journal scenario serve has replayed
// BookKeeper's journal from BookKeeper's last log mark (as BookKeeper's
// own start does): every acknowledged entry reads back, and each add in
// flight at the kill either does, byte-exact, or is absent.
func (r *migrationRun) checkServed(t *testing.T, s *server) int {
	read := 0
	for _, l := range r.e.Ledgers {
		last := int64(-1)
		for _, en := range l.Entries {
			body := s.getEntry(t, l.ID, en.ID)
			require.NotNil(t, body, "ledger %d (%s) entry %d: absent", l.ID, l.Status, en.ID)
			require.Equal(t, en.Size, 16+len(body), "ledger %d entry %d: size", l.ID, en.ID)
			require.Equal(t, en.SHA256, entrySHA256(l.ID, en.ID, body), "ledger %d entry %d: bytes", l.ID, en.ID)
			last = max(last, en.ID)
			read++
		}
		for _, en := range l.InFlight {
			if body := s.getEntry(t, l.ID, en.ID); body != nil {
				require.Equal(t, en.SHA256, entrySHA256(l.ID, en.ID, body), "ledger %d entry %d (in flight): bytes", l.ID, en.ID)
				last = max(last, en.ID)
				read++
			}
		}
		if r.e.Scenario != "journal" {
			require.Equal(t, l.LastEntry, last, "ledger %d: the description's last entry", l.ID)
		}
		code, body, _ := s.get(t, fmt.Sprintf("/api/v1/ledger/last_entry?ledgerId=%d", l.ID))
		if last < 0 {
			require.Equal(t, http.StatusNotFound, code, "ledger %d (%s): last entry: %s", l.ID, l.Status, body)
		} else {
			require.Equal(t, http.StatusOK, code, "ledger %d (%s): last entry: %s", l.ID, l.Status, body)
			var le struct {
				EntryID int64 `json:"entryId"`
			}
			require.NoError(t, json.Unmarshal(body, &le))
			require.Equal(t, last, le.EntryID, "ledger %d (%s): last entry", l.ID, l.Status)
		}
		if last < 1<<62 {
			require.Nil(t, s.getEntry(t, l.ID, last+1), "ledger %d (%s): entry %d after the last", l.ID, l.Status, last+1)
		}
	}
	return read
}

// afterMigration are the writes a run makes through serve once it has
// checked the migration: a ledger BookKeeper never had, and entries after
// the last of one it has. A roll back loses them for BookKeeper.
const afterMigrationLedger = 1<<50 + 7

func (r *migrationRun) writeThroughServe(t *testing.T, s *server) {
	put := func(ledgerID, entryID int64) {
		req, err := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", s.base, ledgerID, entryID),
			strings.NewReader(fmt.Sprintf("written through serve after the migration: ledger %d entry %d", ledgerID, entryID)))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	}
	for e := int64(0); e < 20; e++ {
		put(afterMigrationLedger, e)
	}
	for _, l := range r.e.Ledgers {
		if l.Status == "live" && len(l.Entries) > 0 && l.LastEntry < 1<<62 && !l.Fenced {
			for e := l.LastEntry + 1; e < l.LastEntry+4; e++ {
				put(l.ID, e)
			}
			break
		}
	}
	req, err := http.NewRequest(http.MethodPut, s.base+"/api/v1/bookie/checkpoint", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// rollBack runs docs/migration.md's roll back: `bookie-index migrate
// --roll-back --conf`.
func (r *migrationRun) rollBack(t *testing.T) {
	out, _ := r.run(t, "migrate", "--roll-back", "--conf", r.conf)
	t.Logf("migrate --roll-back:\n%s", out)
	require.Equal(t, len(r.e.IndexDirs), strings.Count(out, ": rolled back in "), "%s", out)
	require.Contains(t, out, "start BookKeeper")
	require.NotContains(t, out, "warning")
}

// journalDirs are the journal directories serve used: the description's,
// else (as conf resolves an unset journalDirectories) "journal" beside the
// first ledger directory.
func (r *migrationRun) journalDirs() []string {
	if len(r.e.JournalDirs) > 0 {
		return r.e.JournalDirs
	}
	return []string{"journal"}
}

// checkRolledBack checks that every file BookKeeper wrote is as it was
// before the migration, and that the others are what the roll back moved
// aside (bookie-index.rolled-back/) and the journal's lock file.
func (r *migrationRun) checkRolledBack(t *testing.T) {
	after := treeHashes(t, r.root)
	for p, h := range r.before {
		got, ok := after[p]
		require.True(t, ok, "%s: gone after the roll back", p)
		require.Equal(t, h, got, "%s: changed by the migration, serve or the roll back", p)
	}
	var extra []string
	for p := range after {
		if _, ok := r.before[p]; ok || strings.Contains(p, ".rolled-back/") {
			continue
		}
		extra = append(extra, p)
	}
	sort.Strings(extra)
	for _, p := range extra {
		ok := false
		for _, j := range r.journalDirs() {
			ok = ok || p == j+"/current/LOCK"
		}
		require.True(t, ok, "%s: a file BookKeeper did not write, left in its directories", p)
	}
}

// migrateAndCheck runs the whole check on a copy of the scenario at src;
// p, if not nil, runs BookKeeper on the rolled-back copy.
func migrateAndCheck(t *testing.T, bin, src string, p *Programs) {
	newMigrationRun(t, bin, src).check(t, p)
}

// check migrates the copy, serves it, reads it back, rolls it back and
// (p not nil) has BookKeeper read it.
func (r *migrationRun) check(t *testing.T, p *Programs) {
	e := r.e
	sum := r.migrate(t)

	wantLedgers, wantLocations, allLocations := 0, 0, 0
	for _, l := range e.Ledgers {
		if r.inStorage(l) {
			wantLedgers++
		}
		wantLocations += len(r.storedEntries(l))
		allLocations += len(l.Entries) + len(l.InFlight)
	}
	if e.Scenario == "journal" {
		// What BookKeeper's storage holds, and what its journal adds if
		// the migration replays it.
		require.GreaterOrEqual(t, sum.ledgers, wantLedgers, "ledgers migrated")
		require.LessOrEqual(t, sum.ledgers, len(e.Ledgers), "ledgers migrated")
		require.GreaterOrEqual(t, sum.locations, wantLocations, "locations migrated")
		require.LessOrEqual(t, sum.locations, allLocations, "locations migrated")
	} else {
		require.Equal(t, wantLedgers, sum.ledgers, "ledgers migrated")
		require.Equal(t, wantLocations, sum.locations, "locations migrated")
	}
	require.Zero(t, sum.skipped, "locations skipped")

	// The offline check reads every entry log of BookKeeper's to its end
	// and every migrated location.
	out, _ := r.run(t, "check", "--conf", r.conf)
	require.NotContains(t, out, "problem", "check:\n%s", out)
	require.Equal(t, len(e.LedgerDirs), strings.Count(out, ": OK in "), "check:\n%s", out)

	s := r.serve(t)
	read := r.checkServed(t, s)
	r.writeThroughServe(t, s)
	s.stop(t)
	r.checkLedgersIndexes(t)
	t.Logf("%s (seed %d): %d ledgers migrated (%d deleted dropped), %d locations (%d of %d ledgers no longer held purged); served: %d entries byte-exact",
		e.Scenario, e.Seed, sum.ledgers, sum.deleted, sum.locations, sum.purged, sum.purgedLedgers, read)

	r.rollBack(t)
	r.checkRolledBack(t)
	if p == nil {
		return
	}
	if e.Scenario == "journal" {
		p.Run(t, "JournalBookie", "--verify", r.root)
	} else {
		p.Run(t, "WriteBookie", "--verify", r.root)
	}
	t.Logf("%s: BookKeeper read every entry of the rolled-back directories", e.Scenario)
}

// programsIfPresent returns the module's programs, or nil when java or
// mvn is missing (and BOOKKEEPER_INTEROP is not required): the committed
// directories are migrated all the same, and the roll back checked file
// by file.
func programsIfPresent(t *testing.T) *Programs {
	var p *Programs
	t.Run("build", func(t *testing.T) { p = Build(t) })
	return p
}

// TestMigrateCommittedDirs migrates each committed scenario
// (testdata/dirs) with the bookie-index binary, serves it and reads
// everything back, rolls it back, and (with Java) has BookKeeper read
// every entry of the rolled-back directories.
func TestMigrateCommittedDirs(t *testing.T) {
	bin := buildBookieIndex(t)
	p := programsIfPresent(t)
	scenarios, err := filepath.Glob(filepath.Join("testdata", "dirs", "*", "expected.json"))
	require.NoError(t, err)
	require.NotEmpty(t, scenarios)
	for _, sc := range scenarios {
		dir := filepath.Dir(sc)
		t.Run(filepath.Base(dir), func(t *testing.T) { migrateAndCheck(t, bin, dir, p) })
	}
}

// TestMigrateRefusesRunningBookKeeper: while BookKeeper's DbLedgerStorage
// has the directories open (its RocksDB databases hold their LOCK files),
// migrate refuses every directory, naming it, and changes nothing; once
// BookKeeper is stopped, the migration goes through.
func TestMigrateRefusesRunningBookKeeper(t *testing.T) {
	p := Build(t)
	bin := buildBookieIndex(t)
	r := newMigrationRun(t, bin, filepath.Join("testdata", "dirs", "clean"))
	bk := p.Start(t, "holding", "WriteBookie", "--hold", r.root)

	cmd := exec.Command(r.bin, "migrate", "--conf", r.conf)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Equal(t, 1, cmd.ProcessState.ExitCode(), "%s", out)
	for i, d := range r.e.IndexDirs {
		cur := filepath.Join(r.root, d, "current")
		require.Contains(t, string(out), fmt.Sprintf("migrate [%d/%d] %s: bookie: migrate: %s is in use: stop the bookie (BookKeeper, or bookie-index serve) first",
			i+1, len(r.e.IndexDirs), filepath.Join(r.root, d), filepath.Join(cur, "locations")))
		names, err := os.ReadDir(cur)
		require.NoError(t, err)
		for _, n := range names {
			require.NotContains(t, n.Name(), "migrat", "%s: the refused migration left it", n.Name())
			require.NotContains(t, n.Name(), "rocksdb-backup", "%s: the refused migration left it", n.Name())
		}
	}
	require.Contains(t, string(out), fmt.Sprintf("%d of %d directories failed", len(r.e.IndexDirs), len(r.e.IndexDirs)))
	bk.Stop(t)

	// BookKeeper's shutdown flushed its databases: the files changed, not
	// what they hold.
	r.before = treeHashes(t, r.root)
	r.check(t, p)
}

// The RocksDB OPTIONS files of the config-file mode variants (the
// *_rocksdb.conf files a bookie's bk_server.conf names): RocksDB options,
// as an operator writes them.
const (
	// optionsTinyMemtables: BookKeeper's bookie-conf options but the
	// smallest memtables (4 KiB, which RocksDB raises to 64 KiB, as
	// bookie-index does), 1 KiB blocks and a compaction at 2 L0 tables,
	// so that the databases are several flushed and compacted tables.
	optionsTinyMemtables = `[DBOptions]
  create_if_missing=true
  max_background_jobs=4
  max_total_wal_size=65536
[CFOptions "default"]
  compression=kLZ4Compression
  write_buffer_size=4096
  max_write_buffer_number=2
  level0_file_num_compaction_trigger=2
  target_file_size_base=65536
  max_bytes_for_level_base=1048576
  level_compaction_dynamic_level_bytes=true
[TableOptions/BlockBasedTable "default"]
  block_size=1024
  format_version=5
  checksum=kxxHash
  filter_policy=rocksdb.BloomFilter:10:false
`
	// optionsRocksDBDefaults: nothing but what a database needs, so
	// RocksDB 9's defaults (format_version 6, XXH3, Snappy).
	optionsRocksDBDefaults = `[DBOptions]
  create_if_missing=true
[CFOptions "default"]
[TableOptions/BlockBasedTable "default"]
`
	// optionsPartitioned: a partitioned index and filter, format_version
	// 6, XXH3, small blocks and memtables.
	optionsPartitioned = `[DBOptions]
  create_if_missing=true
[CFOptions "default"]
  compression=kLZ4Compression
  write_buffer_size=65536
[TableOptions/BlockBasedTable "default"]
  index_type=kTwoLevelIndexSearch
  partition_filters=true
  metadata_block_size=512
  block_size=512
  format_version=6
  checksum=kXXH3
  filter_policy=bloomfilter:10:false
`
)

// writerVariant is one way of running the writer: a scenario and the
// options of a bookie whose directories are migrated.
type writerVariant struct {
	name string
	args []string
	// options, if set, is a RocksDB OPTIONS file for both databases
	// (config-file mode).
	options string
}

// directIO is upstream's direct-I/O entry logger (DirectEntryLogger: 4
// KiB-aligned writes, padding, its own header), with read buffers that
// fit the test's direct memory: with the defaults a reader's buffer
// (8 MiB) is larger than a read thread's share of the total, and
// BookKeeper fails its own reads ("Cached reader already closed").
const directIO = "dbStorage_directIOEntryLogger=true,dbStorage_directIOEntryLoggerReadBufferSizeMB=1," +
	"dbStorage_directIOEntryLoggerTotalReadBufferSizeMB=32,dbStorage_directIOEntryLoggerTotalWriteBufferSizeMB=8"

var writerVariants = []writerVariant{
	{name: "clean", args: []string{"--scenario", "clean"}},
	{name: "crash", args: []string{"--scenario", "crash"}},
	{name: "separate-index", args: []string{"--scenario", "separate-index"}},
	{name: "one-dir", args: []string{"--scenario", "crash", "--dirs", "1"}},
	{name: "three-dirs", args: []string{"--scenario", "crash", "--dirs", "3"}},
	{name: "four-dirs-separate-index", args: []string{"--scenario", "separate-index", "--dirs", "4"}},
	{name: "entry-log-per-ledger", args: []string{"--scenario", "crash", "--gc-must-compact", "false", "--set", "entryLogPerLedgerEnabled=true"}},
	{name: "direct-io", args: []string{"--scenario", "clean", "--set", directIO}},
	{name: "direct-io-crash", args: []string{"--scenario", "crash", "--set", directIO}},
	{name: "no-preallocation", args: []string{"--scenario", "crash", "--set", "entryLogFilePreallocationEnabled=false"}},
	{name: "large-logs", args: []string{"--scenario", "clean", "--ledgers", "60", "--log-size-limit", "4194304", "--gc-must-compact", "false"}},
	{name: "rocksdb-keys", args: []string{"--scenario", "crash", "--set",
		"dbStorage_rocksDB_writeBufferSizeMB=1,dbStorage_rocksDB_sstSizeInMB=1,dbStorage_rocksDB_format_version=6," +
			"dbStorage_rocksDB_checksum_type=kXXH3,dbStorage_rocksDB_lz4CompressionEnabled=false,dbStorage_rocksDB_blockSize=4096," +
			"dbStorage_rocksDB_bloomFilterBitsPerKey=0,dbStorage_rocksDB_numLevels=4,dbStorage_rocksDB_numFilesInLevel0=2"}},
	{name: "rocksdb-one-level-index", args: []string{"--scenario", "separate-index", "--set", "dbStorage_rocksDB_partitionedIndexAndFiltersEnabled=false"}},
	{name: "options-file-tiny-memtables", args: []string{"--scenario", "separate-index"}, options: optionsTinyMemtables},
	{name: "options-file-rocksdb-defaults", args: []string{"--scenario", "clean"}, options: optionsRocksDBDefaults},
	{name: "options-file-partitioned", args: []string{"--scenario", "crash"}, options: optionsPartitioned},
}

var variantFlag = flag.String("variant", "", "TestMigrateFresh, TestMigrateKilledBookieFresh: the writer variants to run (comma-separated names, or all); default: one chosen by the seed")

// pickVariants returns the variants -variant names: all of them, some, or
// by default one chosen by the seed.
func pickVariants(t *testing.T, variants []writerVariant, seed int64) []writerVariant {
	switch *variantFlag {
	case "":
		rng := rand.New(rand.NewPCG(uint64(seed), 0))
		return []writerVariant{variants[rng.IntN(len(variants))]}
	case "all":
		return variants
	}
	var run []writerVariant
	for _, name := range strings.Split(*variantFlag, ",") {
		i := slices.IndexFunc(variants, func(v writerVariant) bool { return v.name == name })
		require.GreaterOrEqual(t, i, 0, "no variant %q", name)
		run = append(run, variants[i])
	}
	return run
}

// writeVariant runs the writer for v with seed into a new directory and
// returns it (for a crash, BookKeeper has read back a copy).
func writeVariant(t *testing.T, p *Programs, v writerVariant, seed int64) string {
	dir := filepath.Join(t.TempDir(), "bookie")
	args := append([]string{"--seed", strconv.FormatInt(seed, 10), "--out", dir}, v.args...)
	if v.options != "" {
		opts := filepath.Join(t.TempDir(), "rocksdb.conf")
		require.NoError(t, os.WriteFile(opts, []byte(v.options), 0o644))
		args = append(args, "--rocksdb-conf", opts)
	}
	p.Run(t, "WriteBookie", args...)
	if slices.Contains(v.args, "crash") {
		p.Run(t, "WriteBookie", "--verify", copyDir(t, dir))
	}
	return dir
}

// TestMigrateFresh has BookKeeper write new directories (a new seed, and
// variants of its options: more or fewer directories, separate index
// directories, one entry log per ledger, the direct-I/O entry logger, no
// log preallocation, larger logs, dbStorage_rocksDB_* keys, config-file
// mode OPTIONS files) and runs the whole migration check on each. By
// default one variant chosen by the seed runs (TestWriterFresh migrates
// the plain scenarios); -variant all runs every one (-variant a,b some).
func TestMigrateFresh(t *testing.T) {
	p := Build(t)
	bin := buildBookieIndex(t)
	seed := testSeed(t)
	run := pickVariants(t, writerVariants, seed)
	for i, v := range run {
		t.Run(v.name, func(t *testing.T) {
			t.Logf("replay with: go test ./interop/bookkeeper -run 'TestMigrateFresh' -seed %d -variant %s", seed, v.name)
			migrateAndCheck(t, bin, writeVariant(t, p, v, seed+int64(i)), p)
		})
	}
}

// TestRollBackRefusedAfterCompaction: once serve's garbage collector has
// compacted BookKeeper's entry logs into its own (here: a ledger deleted,
// a forced collection with every log below the thresholds), the roll back
// refuses, naming the logs BookKeeper's kept index points into that are
// gone, and changes nothing; --force rolls back all the same, saying so.
func TestRollBackRefusedAfterCompaction(t *testing.T) {
	bin := buildBookieIndex(t)
	r := newMigrationRun(t, bin, filepath.Join("testdata", "dirs", "clean"))
	f, err := os.OpenFile(r.conf, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("majorCompactionThreshold=0.99\nminorCompactionThreshold=0.98\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r.migrate(t)

	s := r.serve(t)
	var victim expectedLedger
	for _, l := range r.e.Ledgers {
		if l.Status == "live" && len(l.Entries) > len(victim.Entries) {
			victim = l
		}
	}
	req, err := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/api/v1/ledger?ledgerId=%d", s.base, victim.ID), nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	req, err = http.NewRequest(http.MethodPut, s.base+"/api/v1/bookie/checkpoint", nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	req, err = http.NewRequest(http.MethodPut, s.base+"/api/v1/bookie/gc", strings.NewReader(`{"forceMajor": true, "forceMinor": true}`))
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, body, _ := s.get(t, "/api/v1/bookie/gc")
		if strings.Contains(string(body), `"false"`) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the forced collection did not end: %s", body)
		time.Sleep(100 * time.Millisecond)
	}
	s.stop(t)

	before := treeHashes(t, r.root)
	cmd := exec.Command(r.bin, "migrate", "--roll-back", "--conf", r.conf)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Equal(t, 1, cmd.ProcessState.ExitCode(), "%s", out)
	require.Contains(t, string(out), "roll back would lose data for BookKeeper")
	require.Contains(t, string(out), "entry logs BookKeeper's index names are gone from")
	require.Contains(t, string(out), "--force rolls back all the same")
	withoutLocks := func(m map[string]string) map[string]string {
		for p := range m {
			if filepath.Base(p) == "LOCK" {
				delete(m, p) // a lock names its last holder
			}
		}
		return m
	}
	require.Equal(t, withoutLocks(before), withoutLocks(treeHashes(t, r.root)), "a refused roll back changes nothing")

	out2, _ := r.run(t, "migrate", "--roll-back", "--force", "--conf", r.conf)
	require.Contains(t, out2, "warning: rolled back all the same (--force): entry logs BookKeeper's index names are gone")
	require.Contains(t, out2, "start BookKeeper")
	t.Logf("refused:\n%s\nforced:\n%s", out, out2)
}

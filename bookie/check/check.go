package check

import (
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// DefaultMaxFindings bounds the location findings a Result lists.
const DefaultMaxFindings = 1000

// checkProgressLocations is how many locations a check verifies between
// two progress reports.
const checkProgressLocations = 1 << 20

// Options configure Directory.
type Options struct {
	// LedgerDir and IndexDir are the directories as configured; the entry
	// logs are in LedgerDir/current, the indexes in IndexDir/current.
	// IndexDir defaults to LedgerDir.
	LedgerDir, IndexDir string
	// FS holds the entry logs and the indexes, as bookie.Options.FS does
	// for the storage. Default vfs.Default (the operating system).
	FS vfs.FS
	// Engine configures how the location index is read (its block
	// cache); it is opened ReadOnly. Nil means lsm.DefaultOptions(). Its
	// FS must be unset, vfs.Default or FS.
	Engine *lsm.Options
	// MaxFindings bounds the location findings the result lists (the
	// entry logs' are at most one per log, all listed); the counts are
	// complete. Default DefaultMaxFindings.
	MaxFindings int
	// Progress, if set, is called after each entry log and every million
	// locations.
	Progress func(Progress)
	// Logger receives the engines' and entry logs' own lines (a torn WAL
	// tail replayed read-only, say); the findings are in the result.
	// Default: discarded.
	Logger *slog.Logger
}

// Progress reports a check's progress.
type Progress struct {
	// LogsDone of Logs entry logs are scanned, holding Records records.
	LogsDone, Logs int
	Records        int64
	// Locations of the index are verified so far.
	Locations int64
	Elapsed   time.Duration
}

// FindingKind says what a check found.
type FindingKind uint8

// The kinds of findings. All are problems but FindingTornTail,
// FindingUnknownLedger, FindingIndexCrashLeftover and FindingStaleMarker,
// which are warnings.
const (
	// FindingBadLog: an entry log that cannot be scanned at all (a bad
	// header, a file that names another log).
	FindingBadLog FindingKind = iota + 1
	// FindingDamagedRecord: a record of an entry log that does not decode
	// (a checksum mismatch, a size out of range, a truncation), where the
	// index names a record at or after it: the bytes were synced, so this
	// is damage, not a torn write. The scan of the log stops there; the
	// locations after it are verified one by one.
	FindingDamagedRecord
	// FindingTornTail: the scan of an entry log stopped before its end,
	// and no location names a record there or after it. A crash during a
	// checkpoint leaves such a tail (the index never names it); damage to
	// records that no read needs looks the same. A warning: nothing the
	// index names is affected.
	FindingTornTail
	// FindingMissingRecord: a location that names no record of its entry:
	// its log does not exist, it is past the log's end or inside its
	// header, or the record there is another entry's.
	FindingMissingRecord
	// FindingDamagedEntry: a location that names its entry's record, but
	// the record is damaged (checksum mismatch, truncated).
	FindingDamagedEntry
	// FindingBadIndexRecord: a key or value of the location index that
	// does not decode, has a negative id, or a location that can name no
	// record.
	FindingBadIndexRecord
	// FindingUnknownLedger: a location of a ledger the ledgers index has
	// no record of. Reads cannot reach it (the ledger does not exist) and
	// a rebuild drops it. A warning: no read returns a wrong answer.
	FindingUnknownLedger
	// FindingBelowFloor: a location of an existing ledger below the floor
	// of its current life: a copy from before the ledger was deleted,
	// which the purge should have removed; reads would return it.
	FindingBelowFloor
	// FindingRefused: the storage refuses to open the directory: a
	// migration from BookKeeper's RocksDB indexes is half done, or the
	// directory holds BookKeeper data not converted yet. Nothing else is
	// checked.
	FindingRefused
	// FindingBadLayout: a copy of the directory layout (current/LAYOUT)
	// that does not decode: the storage refuses to open.
	FindingBadLayout
	// FindingBadIndexFile: damage in a file of an index (a table block, a
	// WAL, the manifest) or files recovery set aside in lost/, as `db
	// check` finds them (lsm.DB.CheckProblems).
	FindingBadIndexFile
	// FindingIndexCrashLeftover: what a crash leaves in an index and the
	// next open cleans up without losing a synced write (a WAL's or the
	// manifest's torn tail past its synced length, an orphan table the
	// manifest proves unused). A warning.
	FindingIndexCrashLeftover
	// FindingBadStorageFile: a damaged file of the storage around the
	// logs: lastId (not a log id as the storage writes it, or below the
	// newest log's id), an entry log's ledgers map (does not decode,
	// names another log, or disagrees with its log), the compaction
	// marker (not a log id).
	FindingBadStorageFile
	// FindingStaleMarker: a migration marker without its whole text
	// (what a crash while a migration wrote it leaves): the storage
	// ignores it, `migrate` removes it. A warning.
	FindingStaleMarker

	numFindingKinds = iota + 1
)

// findingNames are the kinds' names, singular and plural.
var findingNames = [numFindingKinds][2]string{
	FindingBadLog:         {"unreadable entry log", "unreadable entry logs"},
	FindingDamagedRecord:  {"damaged entry-log record", "damaged entry-log records"},
	FindingTornTail:       {"torn entry-log tail", "torn entry-log tails"},
	FindingMissingRecord:  {"location naming no record of its entry", "locations naming no record of their entry"},
	FindingDamagedEntry:   {"location naming a damaged record", "locations naming a damaged record"},
	FindingBadIndexRecord: {"bad index record", "bad index records"},
	FindingUnknownLedger:  {"location of a ledger the ledgers index does not hold", "locations of ledgers the ledgers index does not hold"},
	FindingBelowFloor:     {"location below its ledger's floor", "locations below their ledger's floor"},

	FindingRefused:            {"reason the storage refuses the directory", "reasons the storage refuses the directory"},
	FindingBadLayout:          {"unreadable directory layout", "unreadable directory layouts"},
	FindingBadIndexFile:       {"damaged index file", "damaged index files"},
	FindingIndexCrashLeftover: {"crash leftover in an index", "crash leftovers in the indexes"},
	FindingBadStorageFile:     {"damaged storage file", "damaged storage files"},
	FindingStaleMarker:        {"migration marker without its text", "migration markers without their text"},
}

// String names the kind.
func (k FindingKind) String() string {
	if k == 0 || int(k) >= len(findingNames) {
		return fmt.Sprintf("FindingKind(%d)", uint8(k))
	}
	return findingNames[k][0]
}

// Problem reports whether findings of this kind make a check fail.
func (k FindingKind) Problem() bool {
	switch k {
	case FindingTornTail, FindingUnknownLedger, FindingIndexCrashLeftover, FindingStaleMarker:
		return false
	}
	return true
}

// Finding is one thing a check found.
type Finding struct {
	Kind FindingKind
	// Path is the entry log concerned (for a location, the log it names;
	// "" for a bad index record), or the file concerned (the findings of
	// the files around the logs: an index's table, WAL or manifest, a
	// LAYOUT copy, lastId, a ledgers map, a marker); Offset the position
	// in the log of the record (its size field), and Unscanned the bytes
	// after it that the scan could not read (log findings only).
	Path              string
	Offset, Unscanned int64
	// LedgerID, EntryID and Location are the location concerned
	// (location findings only); Key is the index key (bad index records).
	LedgerID, EntryID, Location int64
	Key                         []byte
	// Err says what is wrong; Why, if set, why it is a problem rather
	// than what a crash leaves, or the reverse (entry-log findings).
	Err error
	Why string
}

// String prints the finding on one line. Err names the file and offset
// (entry-log and file findings) or the entry and location (location
// findings).
func (f *Finding) String() string {
	var s string
	switch f.Kind {
	case FindingMissingRecord, FindingDamagedEntry:
		s = fmt.Sprintf("%s: %v (%s)", f.Kind, f.Err, f.Path)
	case FindingUnknownLedger, FindingBelowFloor:
		s = fmt.Sprintf("%s: entry %d of ledger %d at %s: %v", f.Kind, f.EntryID, f.LedgerID, entrylog.FormatLocation(f.Location), f.Err)
	case FindingBadIndexRecord:
		s = fmt.Sprintf("%s: key %s: %v", f.Kind, hex.EncodeToString(f.Key), f.Err)
	default:
		s = fmt.Sprintf("%s: %v", f.Kind, f.Err)
	}
	if f.Why != "" {
		s += " (" + f.Why + ")"
	}
	return s
}

// Result describes a checked directory.
type Result struct {
	// LogDir holds the entry logs; LocationsPath is the location index.
	LogDir, LocationsPath string
	// Logs were scanned, holding Records intact records in LogBytes
	// bytes (the files' sizes).
	Logs              int
	Records, LogBytes int64
	// Locations is the number of locations verified.
	Locations int64
	// Findings lists the findings of the files around the logs (the
	// layout, the markers, lastId, the indexes' files, the ledgers maps),
	// then the entry logs' findings (at most one per log, by log id),
	// then the first MaxFindings locations' findings, in key order.
	Findings []Finding
	// Duration is the time the check took.
	Duration time.Duration

	counts [numFindingKinds]int64
}

// Count returns the number of findings of a kind (all of them, listed or
// not).
func (r *Result) Count(k FindingKind) int64 {
	if int(k) >= len(r.counts) {
		return 0
	}
	return r.counts[k]
}

// Problems returns the number of findings that are problems.
func (r *Result) Problems() int64 {
	var n int64
	for k := FindingKind(1); k < numFindingKinds; k++ {
		if k.Problem() {
			n += r.counts[k]
		}
	}
	return n
}

// plural prints a count and a noun that takes an s.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Unlisted returns the number of findings counted but not listed in
// Findings (beyond MaxFindings).
func (r *Result) Unlisted() int64 {
	var n int64
	for _, c := range r.counts {
		n += c
	}
	return n - int64(len(r.Findings))
}

// Summary prints the counts on one line.
func (r *Result) Summary() string {
	s := fmt.Sprintf("%s (%d bytes, %s), %s verified", plural(int64(r.Logs), "entry log"), r.LogBytes, plural(r.Records, "record"), plural(r.Locations, "location"))
	for k := FindingKind(1); k < numFindingKinds; k++ {
		switch n := r.counts[k]; n {
		case 0:
		case 1:
			s += ", 1 " + findingNames[k][0]
		default:
			s += fmt.Sprintf(", %d %s", n, findingNames[k][1])
		}
	}
	switch n := r.Problems(); n {
	case 0:
		return s + ": OK"
	case 1:
		return s + ": 1 problem"
	default:
		return s + fmt.Sprintf(": %d problems", n)
	}
}

// Directory checks a ledger directory offline, everything the storage
// reads when it opens the directory and serves from it:
//
//   - what makes the storage refuse the directory (a half-done migration,
//     BookKeeper data not converted), every copy of LAYOUT, lastId and
//     the compaction marker;
//   - both indexes as `db check` verifies them (every block of every
//     table, filters included; the WALs; the manifest; lost/);
//   - every entry log to its end, each record's checksum, and the log's
//     ledgers map against the log;
//   - every location of the entry location index: the record it names
//     must be its entry's (ledger and entry ids match) and intact
//     (checksum), its ledger must exist in the ledgers index, and it must
//     not be below the floor of the ledger's current life.
//
// Damage in an entry log is a problem where the log is known to have been
// written whole (its ledgers map, or a BookKeeper log's, covers it), where
// a location names a record at or after it, or where no interrupted write
// explains it in a log other than the last. Only a log that was being
// written when the storage stopped can end in a torn tail; such a tail
// that no location reaches is a warning, as is a location of a ledger the
// ledgers index does not hold (no read reaches it) and what a crash leaves
// in an index; every other finding is a problem. It writes nothing.
//
// It holds the indexes' locks for its length, so it fails, saying so, on
// a directory a running storage holds: run it on a closed storage. The
// error is for what kept the check from running to its end (a lock, an
// index that cannot be opened or read, an I/O error); what it found is in
// the result.
func Directory(opts Options) (*Result, error) {
	start := time.Now()
	o := opts
	if err := ondisk.FillDirs("bookie: check", ondisk.LedgerDirRequired, &o.LedgerDir, &o.IndexDir, &o.FS); err != nil {
		return nil, err
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultMaxFindings
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	engine, err := ondisk.LocationsEngineOptions(o.Engine, o.FS, o.Logger)
	if err != nil {
		return nil, err
	}
	engine.ReadOnly = true
	current := filepath.Join(o.IndexDir, "current")
	c := &checker{
		opts: &o,
		res: &Result{
			LogDir:        filepath.Join(o.LedgerDir, "current"),
			LocationsPath: filepath.Join(current, "locations"),
		},
		start: start,
	}
	finish := func() (*Result, error) {
		c.res.Findings = append(append(c.fileFindings, c.logFindings...), c.locationFindings...)
		c.res.Duration = time.Since(start)
		return c.res, nil
	}

	// What makes the storage refuse the directory before it reads
	// anything else: then nothing else is what the storage would read.
	if refused, err := c.checkMigration(current); err != nil {
		return nil, err
	} else if refused {
		return finish()
	}
	// The locks next: a running storage holds both indexes.
	locks, err := lockIndexes(o.FS, c.res.LocationsPath, filepath.Join(current, "ledgers"))
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, l := range locks {
			_ = l.Close()
		}
	}()
	if err := c.checkLayouts(current); err != nil {
		return nil, err
	}
	if c.ledgers, err = c.loadLedgers(filepath.Join(current, "ledgers")); err != nil {
		return nil, err
	}
	if err := c.scanLogs(); err != nil {
		return nil, err
	}
	if err := c.checkLastID(); err != nil {
		return nil, err
	}
	if err := c.checkCompactionMarker(); err != nil {
		return nil, err
	}
	if err := c.verifyLocations(&engine); err != nil {
		return nil, err
	}
	c.classifyTails()
	return finish()
}

// lockIndexes takes the locks of the location index (which must exist)
// and of the ledgers index (if it exists).
func lockIndexes(fs vfs.FS, locations, ledgers string) ([]io.Closer, error) {
	if _, err := fs.Stat(locations); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.Newf("bookie: check: no entry location index at %s", locations)
		}
		return nil, errors.Wrap(err, "bookie: check")
	}
	var locks []io.Closer
	for _, dir := range []string{locations, ledgers} {
		if _, err := fs.Stat(dir); errors.Is(err, os.ErrNotExist) && dir == ledgers {
			continue
		}
		l, err := lsm.LockDir(fs, dir)
		if err != nil {
			for _, held := range locks {
				_ = held.Close()
			}
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, errors.Wrapf(err, "bookie: check: %s is in use: stop the storage (bookie-index serve) first", dir)
			}
			return nil, errors.Wrapf(err, "bookie: check: cannot lock %s (is a storage running on it?)", dir)
		}
		locks = append(locks, l)
	}
	return locks, nil
}

// loadLedgers reads every record of the ledgers index at path, read-only
// (the caller holds its lock), and checks its files; nil if there is
// none, or if damage keeps it from being read whole (a finding).
func (c *checker) loadLedgers(path string) (map[int64]ondisk.LedgerInfo, error) {
	fs := c.opts.FS
	if _, err := fs.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	opts := ondisk.LedgersEngineOptions(nil, c.opts.Logger)
	opts.FS, opts.ReadOnly = fs, true
	db, err := lsm.Open(path, &opts)
	if err != nil {
		return nil, c.indexUnreadable(err, path, "opening the ledgers index %s", path)
	}
	defer db.Close()
	if err := c.checkIndexFiles(db, path); err != nil {
		return nil, err
	}
	ledgers := map[int64]ondisk.LedgerInfo{}
	if err := ondisk.ScanLedgers(db, path, func(id int64, info ondisk.LedgerInfo) { ledgers[id] = info }); err != nil {
		// Without every record, the locations are not checked against
		// the ledgers index.
		return nil, c.indexUnreadable(err, path, "reading the ledgers index %s after %d records", path, len(ledgers))
	}
	return ledgers, nil
}

// checkIndexFiles lists what `db check` finds in the files of the index
// db at path.
func (c *checker) checkIndexFiles(db *lsm.DB, path string) error {
	problems, err := db.CheckProblems()
	if err != nil {
		return errors.Wrapf(err, "bookie: check: checking %s", path)
	}
	for _, p := range problems {
		kind := FindingBadIndexFile
		if p.CrashLeftover {
			kind = FindingIndexCrashLeftover
		}
		c.addFile(Finding{Kind: kind, Path: p.Path, Err: errors.New(p.Problem)})
	}
	return nil
}

// checker is one Directory.
type checker struct {
	opts  *Options
	res   *Result
	start time.Time
	// logIDs are the entry logs' ids, ascending.
	logIDs []int64
	// tails are the logs whose scan stopped before their end, or that
	// could not be scanned, or that are shorter than their ledgers map
	// says, by log id.
	tails []logTail
	// lastNamed is, per log, the greatest record offset (of its size
	// field) a location names.
	lastNamed map[int64]int64
	// ledgers is what the ledgers index records of each ledger; nil
	// without a ledgers index.
	ledgers map[int64]ondisk.LedgerInfo
	// The findings, by where they were found.
	fileFindings, logFindings, locationFindings []Finding
}

// logTail is where the scan of a log stopped before its end; unreadable
// marks a log that could not be scanned at all.
type logTail struct {
	logID, offset, unscanned int64
	path                     string
	err                      error
	unreadable               bool
	// whole is where the log is known to have been written whole up to
	// (its ledgers map's size, a BookKeeper log's map offset), 0 if
	// unknown; wholeWhy says how it is known.
	whole    int64
	wholeWhy string
	// last: the newest log of the directory, the only one a crash can
	// have left with a torn tail (any later start writes a new log).
	last bool
	// shape says, for a log other than the last, what the bytes from
	// offset look like, and shapeWhy why.
	shape    entrylog.TailShape
	shapeWhy string
}

// addLog records a finding of an entry log's scan.
func (c *checker) addLog(f Finding) {
	c.res.counts[f.Kind]++
	c.logFindings = append(c.logFindings, f)
}

// addFile records a finding of a file around the logs.
func (c *checker) addFile(f Finding) {
	c.res.counts[f.Kind]++
	c.fileFindings = append(c.fileFindings, f)
}

// addLocation records a finding of a location, listing it while there is
// room.
func (c *checker) addLocation(f Finding) {
	c.res.counts[f.Kind]++
	if len(c.locationFindings) < c.opts.MaxFindings {
		c.locationFindings = append(c.locationFindings, f)
	}
}

func (c *checker) progress() {
	if c.opts.Progress != nil {
		c.opts.Progress(Progress{LogsDone: c.res.Logs, Logs: c.res.Logs, Records: c.res.Records, Locations: c.res.Locations, Elapsed: time.Since(c.start)})
	}
}

// checkMigration runs the storage's own guards against a half-done
// migration and unconverted BookKeeper data (ondisk, as Open does), and
// notes a migration marker without its text; refused reports that the
// storage would refuse the directory.
func (c *checker) checkMigration(current string) (refused bool, err error) {
	fs, o := c.opts.FS, c.opts
	for _, err := range []error{ondisk.CheckNoMigrationInProgress(fs, o.IndexDir), ondisk.CheckConverted(fs, o.LedgerDir, o.IndexDir)} {
		if err == nil {
			continue
		}
		if !errors.Is(err, ondisk.ErrUnconverted) && !errors.Is(err, ondisk.ErrMigrationInProgress) {
			return false, errors.Wrap(err, "bookie: check")
		}
		c.addFile(Finding{Kind: FindingRefused, Path: current, Err: err})
		return true, nil
	}
	marker := filepath.Join(current, ondisk.MigrateMarker)
	if _, err := fs.Stat(marker); err == nil {
		c.addFile(Finding{Kind: FindingStaleMarker, Path: marker,
			Err: errors.Newf("%s exists without its text: a migration that a crash interrupted while it wrote it; the storage ignores it and `bookie-index migrate` removes it", marker)})
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, errors.Wrap(err, "bookie: check")
	}
	return false, nil
}

// checkLayouts decodes every copy of the directory layout the directory
// pair holds (ondisk.ReadLayout, as the storage's layout guard reads
// them). Whether the copies agree with each other and with the
// configured list is the whole storage's matter (bookie.CheckLayout).
func (c *checker) checkLayouts(indexCurrent string) error {
	dirs := []string{c.res.LogDir}
	if indexCurrent != c.res.LogDir {
		dirs = append(dirs, indexCurrent)
	}
	for _, dir := range dirs {
		_, err := ondisk.ReadLayout(c.opts.FS, dir)
		switch {
		case err == nil:
		case errors.Is(err, ondisk.ErrLayoutCorrupt):
			c.addFile(Finding{Kind: FindingBadLayout, Path: filepath.Join(dir, ondisk.LayoutFileName), Err: err})
		default:
			return errors.Wrap(err, "bookie: check")
		}
	}
	return nil
}

// checkLastID checks lastId: a log id, written as the storage writes it
// (lower-case hexadecimal and a newline), at or above every log's id (it
// is written before the log is created). The storage refuses to open
// when it is not a log id.
func (c *checker) checkLastID() error {
	fs, dir := c.opts.FS, c.res.LogDir
	path := filepath.Join(dir, entrylog.LastIDFileName)
	id, ok, err := c.checkLogIDFile(path, func() (int64, bool, error) { return entrylog.ReadLastID(fs, dir) }, entrylog.EncodeLastID)
	if err != nil || !ok {
		return err
	}
	if n := len(c.logIDs); n > 0 && c.logIDs[n-1] > id {
		c.addFile(Finding{Kind: FindingBadStorageFile, Path: path,
			Err: errors.Newf("%s names log %#x, below log %#x, which exists: the storage records a log's id there before it creates the log", path, id, c.logIDs[n-1])})
	}
	return nil
}

// checkCompactionMarker checks the garbage collector's compaction marker,
// if there is one: a log id, as the storage writes it. The storage
// finishes the compaction it names at its next open.
func (c *checker) checkCompactionMarker() error {
	fs, dir := c.opts.FS, c.res.LogDir
	path := filepath.Join(dir, ondisk.CompactionMarkerName)
	_, _, err := c.checkLogIDFile(path, func() (int64, bool, error) { return ondisk.ReadCompactionMarker(fs, dir) }, ondisk.EncodeCompactionMarker)
	return err
}

// checkLogIDFile checks the file at path, which holds a log id: read
// reads it as the storage does (ok false: there is none), and its bytes
// must be encode's, as the storage writes them. ok is true if it holds a
// log id as the storage writes it; what is wrong is a finding.
func (c *checker) checkLogIDFile(path string, read func() (int64, bool, error), encode func(int64) []byte) (id int64, ok bool, err error) {
	id, ok, err = read()
	switch {
	case errors.Is(err, entrylog.ErrCorruption):
		c.addFile(Finding{Kind: FindingBadStorageFile, Path: path, Err: err})
		return 0, false, nil
	case err != nil:
		return 0, false, errors.Wrap(err, "bookie: check")
	case !ok:
		return 0, false, nil
	}
	// The storage reads the file leniently; its bytes say whether it is
	// exactly what the storage writes (a few bytes: a larger file is not).
	data, err := vfs.ReadFile(c.opts.FS, path, 64)
	if errors.Is(err, vfs.ErrFileTooLarge) {
		c.addFile(Finding{Kind: FindingBadStorageFile, Path: path, Err: errors.Newf("%v: damaged", err)})
		return 0, false, nil
	}
	if err != nil {
		return 0, false, errors.Wrap(err, "bookie: check")
	}
	if want := encode(id); string(data) != string(want) {
		c.addFile(Finding{Kind: FindingBadStorageFile, Path: path,
			Err: errors.Newf("%s holds %q, not %q as the storage writes log id %#x: damaged", path, data, want, id)})
		return 0, false, nil
	}
	return id, true, nil
}

// scanLogs scans every entry log to its end (or its first bad record),
// and checks its ledgers map.
func (c *checker) scanLogs() error {
	fs, dir := c.opts.FS, c.res.LogDir
	ids, err := entrylog.ListLogs(fs, dir)
	if err != nil {
		return errors.Wrap(err, "bookie: check: no entry logs to read")
	}
	c.logIDs = ids
	for i, id := range ids {
		if err := c.scanLog(id, i == len(ids)-1); err != nil {
			return err
		}
		if c.opts.Progress != nil {
			c.opts.Progress(Progress{LogsDone: i + 1, Logs: len(ids), Records: c.res.Records, Elapsed: time.Since(c.start)})
		}
	}
	c.res.Logs = len(ids)
	return nil
}

// scanLog scans one log and checks it against its ledgers map.
func (c *checker) scanLog(id int64, last bool) error {
	fs, dir := c.opts.FS, c.res.LogDir
	path := filepath.Join(dir, entrylog.LogFileName(id))
	m, err := c.readLedgersMap(id)
	if err != nil {
		return err
	}
	// The usage of the records the map covers, to compare with it.
	usage := map[int64]int64{}
	boundary := m == nil || m.Size == entrylog.HeaderSize
	scan, err := entrylog.Scan(fs, path, func(r *entrylog.Record) error {
		end := entrylog.LocationOffset(r.Location) - entrylog.SizeFieldSize + r.Size
		if m != nil && end <= m.Size {
			usage[r.LedgerID] += r.Size
			boundary = boundary || end == m.Size
		}
		return nil
	})
	c.res.LogBytes += scan.Size
	c.res.Records += scan.Records
	switch {
	case errors.Is(err, entrylog.ErrCorruption):
		c.tails = append(c.tails, logTail{logID: id, path: path, err: err, unreadable: true})
		return nil
	case err != nil:
		return errors.Wrap(err, "bookie: check")
	}
	t := logTail{logID: id, path: path, last: last, offset: scan.ValidEnd, unscanned: scan.Size - scan.ValidEnd, err: scan.Tail}
	switch {
	case scan.Format == entrylog.FormatBKLO:
		// Upstream appends a rotated log's ledgers map after its last
		// entry and then points the header at it: the entries before it
		// were written whole.
		h, err := entrylog.ReadBKHeader(fs, path)
		if err != nil {
			return errors.Wrap(err, "bookie: check")
		}
		if h.LedgersMapOffset >= entrylog.HeaderSize {
			t.whole = h.LedgersMapOffset
			t.wholeWhy = fmt.Sprintf("its header names a ledgers map at offset %d: BookKeeper rotated the log, whole", h.LedgersMapOffset)
		}
	case m != nil:
		// Written after the log was synced whole (rotation, Close) or
		// after a scan (the garbage collector's, up to where it stopped).
		// Of a BookKeeper log (above), the map is the collector's copy of
		// upstream's: only whether it decodes is checked.
		t.whole = m.Size
		t.wholeWhy = fmt.Sprintf("its ledgers map %s says it was written whole up to offset %d", entrylog.MetadataFileName(id), m.Size)
		c.compareLedgersMap(id, m, usage, boundary, scan)
	}
	switch {
	case scan.Tail != nil:
	case t.whole > scan.Size:
		// Cut at a record boundary: a scan sees nothing wrong.
		t.err = errors.Wrapf(entrylog.ErrCorruption, "entrylog: %s: the log ends at offset %d", path, scan.Size)
		t.offset, t.unscanned = scan.Size, 0
	default:
		return nil
	}
	switch {
	case last || t.offset < t.whole || scan.Tail == nil:
	case t.offset < entrylog.HeaderSize:
		t.shape, t.shapeWhy = entrylog.TailCut, "the log is shorter than its header: its creation was cut short"
	default:
		if t.shape, t.shapeWhy, err = entrylog.ExamineTail(fs, path, t.offset); err != nil {
			return errors.Wrap(err, "bookie: check")
		}
	}
	c.tails = append(c.tails, t)
	return nil
}

// readLedgersMap reads log id's ledgers map (the garbage collector's side
// file), noting one that does not decode or names another log; nil if
// there is none or it is unusable.
func (c *checker) readLedgersMap(id int64) (*entrylog.Metadata, error) {
	path := filepath.Join(c.res.LogDir, entrylog.MetadataFileName(id))
	m, err := entrylog.ReadMetadata(c.opts.FS, path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, entrylog.ErrCorruption):
		c.addFile(Finding{Kind: FindingBadStorageFile, Path: path, Err: err})
		return nil, nil
	case err != nil:
		return nil, errors.Wrap(err, "bookie: check")
	case m.LogID != id:
		c.addFile(Finding{Kind: FindingBadStorageFile, Path: path, Err: errors.Newf("%s names log %#x at offset 8", path, m.LogID)})
		return nil, nil
	}
	return m, nil
}

// compareLedgersMap checks that log id's ledgers map m says what the log
// holds: the garbage collector removes a log when the ledgers of its map
// are gone, so a map missing a ledger would lose its entries. usage is
// the scan's, of the records up to m.Size; boundary says a record ends
// at m.Size.
func (c *checker) compareLedgersMap(id int64, m *entrylog.Metadata, usage map[int64]int64, boundary bool, scan entrylog.ScanResult) {
	path := filepath.Join(c.res.LogDir, entrylog.MetadataFileName(id))
	bad := func(format string, args ...any) {
		c.addFile(Finding{Kind: FindingBadStorageFile, Path: path, Err: errors.Newf("%s: "+format, append([]any{path}, args...)...)})
	}
	switch {
	case scan.ValidEnd < m.Size:
		return // the log's damage is reported
	case scan.ValidEnd > m.Size:
		bad("covers the log up to offset %d, but its records go on to offset %d: garbage collection would not see the ledgers after it", m.Size, scan.ValidEnd)
		return
	case !boundary:
		bad("covers the log up to offset %d, inside a record", m.Size)
		return
	}
	for _, u := range m.Ledgers {
		if n := usage[u.LedgerID]; n != u.Bytes {
			bad("ledger %d has %d bytes in the map, %d in the log", u.LedgerID, u.Bytes, n)
			return
		}
		delete(usage, u.LedgerID)
	}
	for ledger, n := range usage {
		bad("ledger %d has %d bytes in the log and none in the map: garbage collection would not keep them", ledger, n)
		return
	}
}

// verifyLocations reads the record every location names, after checking
// the index's files.
func (c *checker) verifyLocations(engine *lsm.Options) error {
	path := c.res.LocationsPath
	c.lastNamed = map[int64]int64{}
	db, err := lsm.Open(path, engine)
	if err != nil {
		return c.indexUnreadable(err, path, "opening the entry location index %s", path)
	}
	defer db.Close()
	if err := c.checkIndexFiles(db, path); err != nil {
		return err
	}
	logs, err := entrylog.Open(c.res.LogDir, &entrylog.Options{FS: c.opts.FS, Logger: c.opts.Logger, ReadOnly: true})
	if err != nil {
		return errors.Wrap(err, "bookie: check")
	}
	defer logs.Close()
	it, err := db.NewIter(nil)
	if err != nil {
		return c.indexUnreadable(err, path, "reading %s", path)
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := c.verifyLocation(logs, it.Key(), it.Value()); err != nil {
			_ = it.Close()
			return err
		}
		c.res.Locations++
		if c.res.Locations%checkProgressLocations == 0 {
			c.progress()
		}
	}
	if err := errors.CombineErrors(it.Error(), it.Close()); err != nil {
		return c.indexUnreadable(err, path, "reading %s stopped after %d locations; the rest are not verified", path, c.res.Locations)
	}
	c.progress()
	return nil
}

// indexUnreadable reports damage that keeps an index from being opened or
// read to its end (the storage could not either) as a finding, and
// returns any other error, both wrapped with what was being done.
func (c *checker) indexUnreadable(err error, path, format string, args ...any) error {
	err = errors.Wrapf(err, "bookie: check: "+format, args...)
	if !errors.Is(err, lsm.ErrCorruption) {
		return err
	}
	f := Finding{Kind: FindingBadIndexFile, Path: path, Err: err}
	// A table's errors name their file and offset.
	var located interface{ FileOffset() (string, int64) }
	if errors.As(err, &located) {
		f.Path, f.Offset = located.FileOffset()
		f.Offset = max(f.Offset, 0)
	}
	c.addFile(f)
	return nil
}

// verifyLocation checks one index record and the entry-log record it
// names. Only an error that keeps the check from going on is returned.
func (c *checker) verifyLocation(logs *entrylog.Logger, key, value []byte) error {
	ledgerID, entryID, err := entrylocation.DecodeKey(key)
	var location int64
	if err == nil {
		location, err = entrylocation.DecodeLocation(value)
	}
	switch {
	case err != nil:
	case ledgerID < 0 || entryID < 0:
		err = errors.Newf("negative id: entry %d of ledger %d (ids are 0 to 2^63-1)", entryID, ledgerID)
	case location <= 0 || entrylog.LocationOffset(location) < entrylog.HeaderSize+entrylog.SizeFieldSize:
		err = errors.Newf("location %d %s of entry %d of ledger %d is no record's", location, entrylog.FormatLocation(location), entryID, ledgerID)
	}
	if err != nil {
		c.addLocation(Finding{Kind: FindingBadIndexRecord, Key: append([]byte(nil), key...), LedgerID: ledgerID, EntryID: entryID, Location: location, Err: err})
		return nil
	}
	if c.ledgers != nil {
		info, ok := c.ledgers[ledgerID]
		switch {
		case !ok:
			c.addLocation(Finding{Kind: FindingUnknownLedger, LedgerID: ledgerID, EntryID: entryID, Location: location,
				Err: errors.Newf("the ledgers index has no record of ledger %d", ledgerID)})
		case info.Exists && !info.PurgePending && location < info.Floor:
			c.addLocation(Finding{Kind: FindingBelowFloor, LedgerID: ledgerID, EntryID: entryID, Location: location,
				Err: errors.Newf("the ledger's current life starts at %s", entrylog.FormatLocation(info.Floor))})
		}
	}
	logID, offset := entrylog.LocationLogID(location), entrylog.LocationOffset(location)-entrylog.SizeFieldSize
	if last, ok := c.lastNamed[logID]; !ok || offset > last {
		c.lastNamed[logID] = offset
	}
	_, err = logs.ReadEntry(ledgerID, entryID, location)
	f := Finding{Path: filepath.Join(c.res.LogDir, entrylog.LogFileName(logID)), Offset: offset, LedgerID: ledgerID, EntryID: entryID, Location: location, Err: err}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, entrylog.ErrBadLocation):
		f.Kind = FindingMissingRecord
	case errors.Is(err, entrylog.ErrCorruption):
		f.Kind = FindingDamagedEntry
	default:
		return errors.Wrap(err, "bookie: check")
	}
	c.addLocation(f)
	return nil
}

// classifyTails reports the unreadable logs and where the scans of logs
// stopped. Damage, where:
//   - the log is known to have been written whole past that offset (its
//     ledgers map covers it; BookKeeper's map follows it);
//   - a location names a record at or after it (the index names only
//     synced bytes, and a log is written in order, so the bytes there were
//     synced);
//   - the log is not the newest and no interrupted write explains the
//     bytes there (entrylog.ExamineTail): the storage writes each log
//     once, in order, and a crash or a failed write can cut short only
//     the record being written.
//
// Else a torn tail: the newest log may have been the one being written
// when the storage stopped, and any log may end in a record a crash or a
// failed write cut short.
func (c *checker) classifyTails() {
	for _, t := range c.tails {
		f := Finding{Kind: FindingTornTail, Path: t.path, Offset: t.offset, Unscanned: t.unscanned, Err: t.err}
		last, named := c.lastNamed[t.logID]
		switch {
		case t.unreadable:
			f.Kind = FindingBadLog
		case t.offset < t.whole:
			f.Kind, f.Why = FindingDamagedRecord, t.wholeWhy
		case named && last >= t.offset:
			f.Kind = FindingDamagedRecord
		case t.last:
			f.Why = "the newest log: it may have been the one being written when the storage stopped"
		case t.shape == entrylog.TailDamaged:
			f.Kind, f.Why = FindingDamagedRecord, "not the newest log, and "+t.shapeWhy
		default:
			f.Why = t.shapeWhy
		}
		c.addLog(f)
	}
}

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

// The kinds of findings. All are problems but FindingTornTail and
// FindingUnknownLedger, which are warnings.
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
}

// String names the kind.
func (k FindingKind) String() string {
	if k == 0 || int(k) >= len(findingNames) {
		return fmt.Sprintf("FindingKind(%d)", uint8(k))
	}
	return findingNames[k][0]
}

// Problem reports whether findings of this kind make a check fail.
func (k FindingKind) Problem() bool { return k != FindingTornTail && k != FindingUnknownLedger }

// Finding is one thing a check found.
type Finding struct {
	Kind FindingKind
	// Path is the entry log concerned (for a location, the log it names;
	// "" for a bad index record); Offset the position in it of the record
	// (its size field), and Unscanned the bytes after it that the scan
	// could not read (log findings only).
	Path              string
	Offset, Unscanned int64
	// LedgerID, EntryID and Location are the location concerned
	// (location findings only); Key is the index key (bad index records).
	LedgerID, EntryID, Location int64
	Key                         []byte
	// Err says what is wrong.
	Err error
}

// String prints the finding on one line. Err names the file and offset
// (entry-log findings) or the entry and location (location findings).
func (f *Finding) String() string {
	switch f.Kind {
	case FindingMissingRecord, FindingDamagedEntry:
		return fmt.Sprintf("%s: %v (%s)", f.Kind, f.Err, f.Path)
	case FindingUnknownLedger, FindingBelowFloor:
		return fmt.Sprintf("%s: entry %d of ledger %d at %s: %v", f.Kind, f.EntryID, f.LedgerID, entrylog.FormatLocation(f.Location), f.Err)
	case FindingBadIndexRecord:
		return fmt.Sprintf("%s: key %s: %v", f.Kind, hex.EncodeToString(f.Key), f.Err)
	default:
		return fmt.Sprintf("%s: %v", f.Kind, f.Err)
	}
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
	// Findings lists the entry logs' findings (at most one per log, by
	// log id), then the first MaxFindings locations' findings, in key
	// order.
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

// Directory checks a ledger directory offline: it scans every entry
// log to its end, reporting records that do not decode (file, offset),
// and verifies every location of the entry location index: the record it
// names must be its entry's (ledger and entry ids match) and intact
// (checksum), its ledger must exist in the ledgers index, and it must not
// be below the floor of the ledger's current life. A damaged tail that no
// location reaches is a warning (a crash's torn write looks like that), as
// is a location of a ledger the ledgers index does not hold (no read
// reaches it); every other finding is a problem. It writes nothing.
//
// It holds the indexes' locks for its length, so it fails, saying so, on
// a directory a running storage holds: run it on a closed storage. The
// error is for what kept the check from running to its end (a lock, an
// index that cannot be opened or read, an I/O error); what it found is in
// the result.
func Directory(opts Options) (*Result, error) {
	start := time.Now()
	o := opts
	if o.LedgerDir == "" {
		return nil, errors.Wrap(entrylocation.ErrInvalidArgument, "bookie: check: no ledger directory")
	}
	if o.IndexDir == "" {
		o.IndexDir = o.LedgerDir
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultMaxFindings
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var engine lsm.Options
	if o.Engine != nil {
		engine = *o.Engine
	}
	if err := ondisk.UseFS(&engine, o.FS, "Engine.FS"); err != nil {
		return nil, err
	}
	if engine.Logger == nil {
		engine.Logger = o.Logger
	}
	engine.EnsureDefaults()
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

	// The locks first: a running storage holds both indexes.
	locks, err := lockIndexes(o.FS, c.res.LocationsPath, filepath.Join(current, "ledgers"))
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, l := range locks {
			_ = l.Close()
		}
	}()
	if c.ledgers, err = loadLedgers(o.FS, filepath.Join(current, "ledgers"), o.Logger); err != nil {
		return nil, err
	}
	if err := c.scanLogs(); err != nil {
		return nil, err
	}
	if err := c.verifyLocations(&engine); err != nil {
		return nil, err
	}
	c.classifyTails()
	c.res.Findings = append(c.logFindings, c.locationFindings...)
	c.res.Duration = time.Since(start)
	return c.res, nil
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
// (the caller holds its lock); nil if there is none.
func loadLedgers(fs vfs.FS, path string, logger *slog.Logger) (map[int64]ondisk.LedgerInfo, error) {
	if _, err := fs.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	opts := ondisk.LedgersEngineOptions(nil, logger)
	opts.FS, opts.ReadOnly = fs, true
	db, err := lsm.Open(path, &opts)
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: check: opening the ledgers index %s", path)
	}
	defer db.Close()
	ledgers := map[int64]ondisk.LedgerInfo{}
	if err := ondisk.ScanLedgers(db, path, func(id int64, info ondisk.LedgerInfo) { ledgers[id] = info }); err != nil {
		return nil, err
	}
	return ledgers, nil
}

// checker is one Directory.
type checker struct {
	opts  *Options
	res   *Result
	start time.Time
	// tails are the logs whose scan stopped before their end, or that
	// could not be scanned, by log id.
	tails []logTail
	// lastNamed is, per log, the greatest record offset (of its size
	// field) a location names.
	lastNamed map[int64]int64
	// ledgers is what the ledgers index records of each ledger; nil
	// without a ledgers index.
	ledgers map[int64]ondisk.LedgerInfo
	// The findings, by where they were found.
	logFindings, locationFindings []Finding
}

// logTail is where the scan of a log stopped before its end; unreadable
// marks a log that could not be scanned at all.
type logTail struct {
	logID, offset, unscanned int64
	path                     string
	err                      error
	unreadable               bool
}

// addLog records a finding of an entry log's scan.
func (c *checker) addLog(f Finding) {
	c.res.counts[f.Kind]++
	c.logFindings = append(c.logFindings, f)
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

// scanLogs scans every entry log to its end (or its first bad record).
func (c *checker) scanLogs() error {
	fs, dir := c.opts.FS, c.res.LogDir
	ids, err := entrylog.ListLogs(fs, dir)
	if err != nil {
		return errors.Wrap(err, "bookie: check: no entry logs to read")
	}
	for i, id := range ids {
		path := filepath.Join(dir, entrylog.LogFileName(id))
		scan, err := entrylog.Scan(fs, path, func(*entrylog.Record) error { return nil })
		c.res.LogBytes += scan.Size
		c.res.Records += scan.Records
		switch {
		case errors.Is(err, entrylog.ErrCorruption):
			c.tails = append(c.tails, logTail{logID: id, path: path, err: err, unreadable: true})
		case err != nil:
			return errors.Wrap(err, "bookie: check")
		case scan.Tail != nil:
			c.tails = append(c.tails, logTail{logID: id, offset: scan.ValidEnd, unscanned: scan.Size - scan.ValidEnd, path: path, err: scan.Tail})
		}
		if c.opts.Progress != nil {
			c.opts.Progress(Progress{LogsDone: i + 1, Logs: len(ids), Records: c.res.Records, Elapsed: time.Since(c.start)})
		}
	}
	c.res.Logs = len(ids)
	return nil
}

// verifyLocations reads the record every location names.
func (c *checker) verifyLocations(engine *lsm.Options) error {
	db, err := lsm.Open(c.res.LocationsPath, engine)
	if err != nil {
		return errors.Wrapf(err, "bookie: check: opening the entry location index %s", c.res.LocationsPath)
	}
	defer db.Close()
	logs, err := entrylog.Open(c.res.LogDir, &entrylog.Options{FS: c.opts.FS, Logger: c.opts.Logger})
	if err != nil {
		return errors.Wrap(err, "bookie: check")
	}
	defer logs.Close()
	it, err := db.NewIter(nil)
	if err != nil {
		return errors.Wrapf(err, "bookie: check: reading %s", c.res.LocationsPath)
	}
	c.lastNamed = map[int64]int64{}
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
		return errors.Wrapf(err, "bookie: check: reading %s", c.res.LocationsPath)
	}
	c.progress()
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
// stopped: damage if a location names a record at or after that offset
// (the index names only synced bytes, and a log is written in order, so
// the bytes there were synced), else a torn tail.
func (c *checker) classifyTails() {
	for _, t := range c.tails {
		kind := FindingTornTail
		if last, ok := c.lastNamed[t.logID]; t.unreadable {
			kind = FindingBadLog
		} else if ok && last >= t.offset {
			kind = FindingDamagedRecord
		}
		c.addLog(Finding{Kind: kind, Path: t.path, Offset: t.offset, Unscanned: t.unscanned, Err: t.err})
	}
}

package rebuild

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// DefaultRunEntries bounds the locations a rebuild sorts in memory
// at a time (24 bytes each: 48 MiB).
const DefaultRunEntries = 2 << 20

// backupTimeLayout is upstream's yyyy-MM-dd'T'HH:mm:ss.SSSZ.
const backupTimeLayout = "2006-01-02T15:04:05.000-0700"

// Options configure LocationsIndex.
type Options struct {
	// LedgerDir and IndexDir are the directories as configured; the entry
	// logs are in LedgerDir/current, the indexes in IndexDir/current.
	// IndexDir defaults to LedgerDir.
	LedgerDir, IndexDir string
	// FS holds the entry logs and the indexes, as bookie.Options.FS does
	// for the storage; the rebuild's temporary files (sorted runs, tables) go on
	// it too. Default vfs.Default (the operating system).
	FS vfs.FS
	// Engine configures the new index (and the tables written for it);
	// nil means lsm.DefaultOptions(). Its FS must be unset, vfs.Default
	// or FS.
	Engine *lsm.Options
	// LedgersEngine configures the ledgers index's engine; nil, the
	// storage's defaults. Its FS, like Engine's, must be unset,
	// vfs.Default or FS.
	LedgersEngine *lsm.Options
	// RunEntries bounds the locations sorted in memory at a time; more
	// are sorted in runs spilled to files and merged. Default
	// DefaultRunEntries.
	RunEntries int
	// Progress, if set, is called after each entry log.
	Progress func(Progress)
	// Logger receives the rebuild's lines (torn logs) and, where their
	// options have no logger, both engines'. Default: discarded.
	Logger *slog.Logger
	// Now names the backup. Default time.Now.
	Now func() time.Time
	// RebuildLedgersIndex rebuilds the ledgers index too, from the entry
	// logs (upstream's rebuild-db-ledgers-index): the old one, if any, is
	// moved aside as ledgers.BACKUP-<timestamp>, and every ledger with a
	// record in the entry logs is recorded as existing and fenced, with
	// no master key and no explicit LAC. What the old one knew is lost: a
	// deleted ledger whose entries are still in the entry logs comes
	// back, and every entry of a ledger written again after a deletion is
	// indexed, whichever life it belongs to. Without it a missing or
	// unreadable ledgers index fails the rebuild before anything is
	// moved: an index built without one would hold no ledger.
	RebuildLedgersIndex bool
}

// Progress reports a rebuild's progress after each entry log.
type Progress struct {
	// LogsDone of Logs entry logs are scanned; LogID is the last one.
	LogsDone, Logs int
	LogID          int64
	// Records were read, Indexed of them kept (their ledger exists and
	// they are its entries' copies at or above its floor).
	Records, Indexed int64
	Elapsed          time.Duration
}

// Result describes a finished rebuild.
type Result struct {
	// LocationsPath is the new index; BackupPath the old one, moved aside
	// ("" if there was none).
	LocationsPath, BackupPath string
	// Logs were scanned, holding Records records; Indexed of them went
	// into the index, Entries distinct entries (later copies of an entry
	// replace earlier ones).
	Logs             int
	Records, Indexed int64
	Entries          int64
	// Ledgers is the number of existing ledgers in the ledgers index.
	Ledgers int
	// Runs is the number of sorted runs spilled to disk (0: all fit in
	// memory); Tables the number of tables ingested.
	Runs, Tables int
	// TornLogs lists the logs whose scan stopped before their end (a
	// torn record after a crash, or damage), with why.
	TornLogs []string
	Duration time.Duration
	// OldEntries is the number of entries of the old index, counted
	// before it was moved aside: -1 if there was none or it could not be
	// read (OldIndexError says why). A new index with fewer entries is
	// logged as a warning; the old one stays at BackupPath either way.
	OldEntries    int64
	OldIndexError error
	// LedgersBackupPath is the old ledgers index, moved aside by
	// RebuildLedgersIndex ("" if there was none or it was not rebuilt).
	LedgersBackupPath string
}

// FewerEntries reports whether the new index holds fewer entries than the
// old one did.
func (r *Result) FewerEntries() bool {
	return r.OldEntries >= 0 && r.Entries < r.OldEntries
}

// LocationsIndex rebuilds a directory's entry location index from
// its entry logs, offline (upstream's LocationsIndexRebuildOp). It moves
// the index aside as locations.BACKUP-<timestamp>, scans every entry log
// in ascending id, keeps the records of the ledgers the ledgers index
// says exist (and, for a ledger deleted and written again, only those of
// its current life), sorts them, writes them as tables with
// lsm.CreateTable and ingests them into a new, empty index: the tables go
// to the last level as they are, no compaction rewrites them.
//
// Of several copies of an entry the one written last wins (the greatest
// location), as upstream. The ledgers index is held open for the whole
// rebuild, so a running bookie (which holds it) makes the rebuild fail
// before anything is moved; so does a ledgers index that is missing or
// unreadable, unless RebuildLedgersIndex rebuilds it too.
func LocationsIndex(opts Options) (*Result, error) {
	start := time.Now()
	o := opts
	if err := ondisk.FillDirs("bookie: rebuild", ondisk.LedgerDirRequired, &o.LedgerDir, &o.IndexDir, &o.FS); err != nil {
		return nil, err
	}
	if o.RunEntries <= 0 {
		o.RunEntries = DefaultRunEntries
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	engine, err := ondisk.LocationsEngineOptions(o.Engine, o.FS, o.Logger)
	if err != nil {
		return nil, err
	}
	ledgersOpts := ondisk.LedgersEngineOptions(o.LedgersEngine, o.Logger)
	if err := ondisk.UseFS(&ledgersOpts, o.FS, "LedgersEngine.FS"); err != nil {
		return nil, err
	}

	current := filepath.Join(o.IndexDir, "current")
	logDir := filepath.Join(o.LedgerDir, "current")
	res := &Result{LocationsPath: filepath.Join(current, "locations"), OldEntries: -1}
	ledgersPath := filepath.Join(current, "ledgers")

	if _, err := o.FS.List(logDir); err != nil {
		return nil, errors.Wrapf(err, "bookie: rebuild: no entry logs to read in %s", logDir)
	}
	// The ledgers index first: it says which ledgers to keep, and its
	// lock keeps a running bookie away.
	var active map[int64]int64 // nil: every ledger (RebuildLedgersIndex)
	var ledgersLock io.Closer
	if o.RebuildLedgersIndex {
		if lsm.Exists(o.FS, ledgersPath) {
			l, err := o.FS.Lock(lsm.LockPath(ledgersPath))
			if err != nil {
				return nil, errors.Wrap(err, "bookie: rebuild (is the bookie running?)")
			}
			ledgersLock = l
			defer func() {
				if ledgersLock != nil {
					_ = ledgersLock.Close()
				}
			}()
		}
	} else {
		if !lsm.Exists(o.FS, ledgersPath) {
			return nil, errors.Wrapf(ondisk.ErrLedgersIndexMissing, "bookie: rebuild: the ledgers index %s is missing; nothing was moved "+
				"(an index rebuilt without it would hold no ledger): rebuild the ledgers index too, from the entry logs "+
				"(--rebuild-ledgers-index), if it is lost", ledgersPath)
		}
		ledgers, err := lsm.Open(ledgersPath, &ledgersOpts)
		if err == nil {
			defer ledgers.Close()
			active, err = activeLedgers(ledgers, ledgersPath)
		} else {
			err = errors.Wrapf(err, "bookie: opening the ledgers index %s", ledgersPath)
		}
		if errors.Is(err, vfs.ErrLockHeld) {
			return nil, errors.Wrap(err, "bookie: rebuild (is the bookie running?)")
		} else if err != nil {
			return nil, errors.Wrapf(ondisk.ErrLedgersIndexMissing, "bookie: rebuild: the ledgers index %s cannot be read (%v); nothing was moved: "+
				"repair it, or rebuild it too, from the entry logs (--rebuild-ledgers-index)", ledgersPath, err)
		}
		res.Ledgers = len(active)
	}
	ids, err := entrylog.ListLogs(o.FS, logDir)
	if err != nil {
		return nil, err
	}
	res.Logs = len(ids)

	stamp := o.Now()
	if _, err := o.FS.Stat(res.LocationsPath); err == nil {
		res.OldEntries, res.OldIndexError = countEntries(res.LocationsPath, &engine)
		if res.OldIndexError != nil {
			res.OldEntries = -1
			o.Logger.Warn("the old entry location index cannot be read; it is moved aside all the same", "path", res.LocationsPath, "err", res.OldIndexError)
		}
	}
	if ledgersLock != nil {
		res.LedgersBackupPath = ledgersPath + ".BACKUP-" + stamp.Format(backupTimeLayout)
		err := o.FS.Rename(ledgersPath, res.LedgersBackupPath)
		_ = ledgersLock.Close()
		ledgersLock = nil
		if err == nil {
			err = vfs.SyncDir(o.FS, current)
		}
		if err != nil {
			return nil, errors.Wrap(err, "bookie: rebuild: moving the ledgers index aside")
		}
		o.Logger.Info("moved the ledgers index aside", "from", ledgersPath, "to", res.LedgersBackupPath)
	}
	if _, err := o.FS.Stat(res.LocationsPath); err == nil {
		// Whoever holds the old index (a compact) keeps it where it is.
		lock, err := o.FS.Lock(lsm.LockPath(res.LocationsPath))
		if err != nil {
			return nil, errors.Wrap(err, "bookie: rebuild: the entry location index is in use")
		}
		res.BackupPath = res.LocationsPath + ".BACKUP-" + stamp.Format(backupTimeLayout)
		err = o.FS.Rename(res.LocationsPath, res.BackupPath)
		_ = lock.Close()
		if err != nil {
			return nil, errors.Wrap(err, "bookie: rebuild: moving the index aside")
		}
		// Durable before the new index is built in its place.
		if err := vfs.SyncDir(o.FS, current); err != nil {
			return nil, errors.Wrap(err, "bookie: rebuild: moving the index aside")
		}
		o.Logger.Info("moved the entry location index aside", "from", res.LocationsPath, "to", res.BackupPath)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, errors.Wrap(err, "bookie: rebuild")
	}
	var found map[int64]struct{}
	if active == nil {
		found = map[int64]struct{}{}
	}
	err = buildIndex(&o, &engine, res, active, found, ids, logDir, current, stamp, start)
	if err == nil && found != nil {
		err = writeLedgersIndex(ledgersPath, &ledgersOpts, found)
		res.Ledgers = len(found)
	}
	if err != nil {
		if res.BackupPath != "" {
			return nil, errors.Wrapf(err, "bookie: rebuild failed; the old index is at %s", res.BackupPath)
		}
		return nil, err
	}
	if res.FewerEntries() {
		o.Logger.Warn("the rebuilt entry location index holds fewer entries than the old one, which is kept",
			"entries", res.Entries, "oldEntries", res.OldEntries, "old", res.BackupPath)
	}
	return res, nil
}

// countEntries counts the entries of the index at path, read-only.
func countEntries(path string, engine *lsm.Options) (int64, error) {
	ro := *engine
	ro.ReadOnly = true
	db, err := lsm.Open(path, &ro)
	if err != nil {
		return 0, err
	}
	it, err := db.NewIter(nil)
	if err != nil {
		return 0, errors.CombineErrors(err, db.Close())
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, errors.CombineErrors(errors.CombineErrors(it.Error(), it.Close()), db.Close())
}

// activeLedgers reads the ledgers index db (at path) and returns the
// ledgers that exist and their floors.
func activeLedgers(db *lsm.DB, path string) (map[int64]int64, error) {
	active := map[int64]int64{}
	err := ondisk.ScanLedgers(db, path, func(id int64, info ondisk.LedgerInfo) {
		if info.Exists {
			active[id] = info.Floor
		}
	})
	return active, err
}

// writeLedgersIndex creates the ledgers index at path with a record for
// each ledger: existing and fenced (upstream's rebuild-db-ledgers-index:
// nothing can be added to a rebuilt ledger), no master key, no LAC.
func writeLedgersIndex(path string, opts *lsm.Options, ledgers map[int64]struct{}) error {
	db, err := lsm.Open(path, opts)
	if err != nil {
		return errors.Wrapf(err, "bookie: rebuild: creating the ledgers index %s", path)
	}
	ids := slices.Sorted(maps.Keys(ledgers))
	var b lsm.Batch
	for i, id := range ids {
		b.Set(ondisk.LedgerKey(id), ondisk.EncodeLedgerInfo(&ondisk.LedgerInfo{Exists: true, Fenced: true}))
		if b.Count() >= 10000 || i == len(ids)-1 {
			if err := db.Apply(&b, lsm.Sync); err != nil {
				_ = db.Close()
				return errors.Wrapf(err, "bookie: rebuild: writing the ledgers index %s", path)
			}
			b.Reset()
		}
	}
	return errors.Wrapf(db.Close(), "bookie: rebuild: closing the ledgers index %s", path)
}

// buildIndex scans the logs (keeping the records of the active ledgers,
// or, with found, of every ledger, which it collects), sorts, writes tables and ingests them into a
// new index at res.LocationsPath (LocationsIndex once the old index
// is out of the way), filling res.
func buildIndex(o *Options, engine *lsm.Options, res *Result, active map[int64]int64, found map[int64]struct{}, ids []int64, logDir, current string, stamp, start time.Time) error {
	tmpDir := filepath.Join(current, fmt.Sprintf("locations.rebuild-%d", stamp.UnixNano()))
	if err := o.FS.MkdirAll(tmpDir, 0o755); err != nil {
		return errors.Wrap(err, "bookie: rebuild")
	}
	defer func() {
		// Best effort: a leftover after a crash is only garbage.
		if o.FS.RemoveAll(tmpDir) == nil {
			_ = vfs.SyncDir(o.FS, current)
		}
	}()

	// Scan, in runs.
	run := make([]locationEntry, 0, min(o.RunEntries, 1<<16))
	var runPaths []string
	spill := func() error {
		run = sortRun(run)
		path := filepath.Join(tmpDir, fmt.Sprintf("run-%06d", len(runPaths)))
		if err := writeRun(o.FS, path, run); err != nil {
			return err
		}
		runPaths = append(runPaths, path)
		run = run[:0]
		return nil
	}
	for i, id := range ids {
		scan, err := entrylog.Scan(o.FS, filepath.Join(logDir, entrylog.LogFileName(id)), func(rec *entrylog.Record) error {
			res.Records++
			if rec.EntryID < 0 || rec.LedgerID < 0 {
				// An id the index refuses (no version of the storage
				// writes one).
				return nil
			}
			if found != nil {
				found[rec.LedgerID] = struct{}{}
			} else if floor, ok := active[rec.LedgerID]; !ok || rec.Location < floor {
				// Not an existing ledger's, or below its floor.
				return nil
			}
			res.Indexed++
			run = append(run, locationEntry{rec.LedgerID, rec.EntryID, rec.Location})
			if len(run) >= o.RunEntries {
				return spill()
			}
			return nil
		})
		if err != nil {
			return errors.Wrap(err, "bookie: rebuild")
		}
		if scan.Tail != nil {
			res.TornLogs = append(res.TornLogs, scan.Tail.Error())
			o.Logger.Warn("entry log scan stopped before the end", "log", id, "validEnd", scan.ValidEnd, "size", scan.Size, "err", scan.Tail)
		}
		if o.Progress != nil {
			o.Progress(Progress{LogsDone: i + 1, Logs: len(ids), LogID: id, Records: res.Records, Indexed: res.Indexed, Elapsed: time.Since(start)})
		}
	}

	// Write disjoint tables: straight from memory, or from the merge of
	// the runs.
	tw := newTableSink(o.FS, tmpDir, engine.TableOptions(), engine.TargetFileSizeBase)
	if len(runPaths) == 0 {
		for _, e := range sortRun(run) {
			if err := tw.add(&e); err != nil {
				tw.set.Abort()
				return err
			}
		}
	} else {
		if len(run) > 0 {
			if err := spill(); err != nil {
				return err
			}
		}
		res.Runs = len(runPaths)
		if err := mergeRuns(o.FS, runPaths, tw.add); err != nil {
			tw.set.Abort()
			return err
		}
	}
	tables, err := tw.set.Finish()
	if err != nil {
		return err
	}
	res.Tables, res.Entries = len(tables), tw.set.Entries()

	db, err := lsm.Open(res.LocationsPath, engine)
	if err != nil {
		return errors.Wrapf(err, "bookie: rebuild: creating the index %s", res.LocationsPath)
	}
	if err := db.Ingest(tables); err != nil {
		_ = db.Close()
		return errors.Wrapf(err, "bookie: rebuild: ingesting %d tables", len(tables))
	}
	if err := db.Close(); err != nil {
		return errors.Wrap(err, "bookie: rebuild: closing the new index")
	}
	res.Duration = time.Since(start)
	return nil
}

// tableSink writes location entries into an lsm.TableSet.
type tableSink struct {
	set *lsm.TableSet
}

func newTableSink(fs vfs.FS, dir string, opts lsm.TableOptions, targetSize int64) *tableSink {
	return &tableSink{set: lsm.NewTableSet(fs, dir, opts, targetSize)}
}

func (t *tableSink) add(e *locationEntry) error {
	key, value := entrylocation.EncodeKey(e.ledgerID, e.entryID), entrylocation.EncodeLocation(e.location)
	return errors.Wrap(t.set.Set(key[:], value[:]), "bookie: rebuild")
}

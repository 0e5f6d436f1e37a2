package migrate

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// DefaultSamples is how many locations the verification looks up in both
// databases.
const DefaultSamples = 1000

// ErrLimboLedgers is the errors.Is target of a migration refused because
// the ledgers database holds ledgers in limbo (Options.ClearLimbo).
var ErrLimboLedgers = errors.New("ledgers in limbo")

// Options configure FromRocksDB.
type Options struct {
	// IndexDir is the index directory as configured: the databases are
	// IndexDir/current/locations and IndexDir/current/ledgers.
	IndexDir string
	// LedgerDir is the ledger directory of the same pair (its entry logs,
	// lastId and the journal's lastMark files); "" means IndexDir.
	LedgerDir string
	// FS holds them. Default vfs.Default.
	FS vfs.FS
	// Engine configures the new location index (and its tables); nil,
	// lsm.DefaultOptions(). LedgersEngine the ledgers index; nil, the
	// storage's defaults. Their FS must be unset, vfs.Default or FS.
	Engine, LedgersEngine *lsm.Options
	// ClearLimbo migrates ledgers in limbo as ordinary ledgers. This
	// storage has no limbo state (upstream answers reads of a limbo
	// ledger's missing entries with "unknown" rather than "no such
	// entry"), so by default a directory holding one is refused with
	// ErrLimboLedgers: let upstream's data-integrity check finish first.
	ClearLimbo bool
	// Samples is how many locations (chosen at random, seeded) are looked
	// up in both databases before the switch. Default
	// DefaultSamples; negative: none.
	Samples int
	// Progress, if set, is called at each phase and every 64 Ki
	// locations.
	Progress func(Progress)
	// Logger receives warnings (skipped keys, torn WAL tails) and the
	// engines' lines where their options have none. Default: discarded.
	Logger *slog.Logger
}

// Progress reports a migration's progress.
type Progress struct {
	// Phase is "ledgers", "locations", "verify" or "switch".
	Phase string
	// Ledgers records were read; Locations read and Kept of them kept.
	Ledgers         int
	Locations, Kept int64
	Elapsed         time.Duration
}

// Result describes a migration.
type Result struct {
	// NothingToDo says the directory needed no migration (Reason says
	// why); nothing was changed.
	NothingToDo bool
	Reason      string
	// Resumed says a crashed run's verified indexes were switched in
	// (nothing was read from RocksDB this time; the counts are zero).
	Resumed bool
	// LocationsPath and LedgersPath are the new indexes; the Backup paths
	// the RocksDB databases, renamed.
	LocationsPath, LedgersPath             string
	LocationsBackupPath, LedgersBackupPath string
	// BookKeeperFiles are the files of BookKeeper's in the ledger
	// directory that this storage rewrites (lastId, lastMark,
	// lastMark.<i>): each was copied to its name + LastMarkBackupSuffix,
	// for a roll back.
	BookKeeperFiles []string
	// Ledgers were migrated (LimboCleared of them were in limbo);
	// DeletedLedgers had exists=false and were dropped.
	Ledgers, DeletedLedgers int
	LimboCleared            []int64
	// Entries locations were migrated; PurgedEntries of PurgedLedgers
	// ledgers the ledgers database no longer holds were dropped, as
	// upstream's next garbage collection would.
	Entries, PurgedEntries int64
	PurgedLedgers          int
	// Skipped counts locations this storage cannot hold (a negative id, a
	// location <= 0: upstream's "none"); SkippedKeys names the first ones.
	Skipped     int64
	SkippedKeys []string
	// Tables were ingested; Verified locations were looked up in both.
	Tables, Verified int
	// Torn lists the RocksDB log files whose last record was torn and
	// ignored (as RocksDB ignores it).
	Torn     []string
	Duration time.Duration
}

// migration is one FromRocksDB run.
type migration struct {
	o                  Options
	engine, ledgersOpt lsm.Options
	current, tmp       string
	res                *Result
	start              time.Time
}

// FromRocksDB converts a stopped BookKeeper bookie's indexes in
// IndexDir/current — the RocksDB databases locations (16-byte big-endian
// (ledgerId, entryId) keys to 8-byte big-endian locations, the same
// encoding as this storage's) and ledgers (8-byte ledger ids to
// upstream's LedgerData protobuf) — into this storage's indexes. Entry
// logs are not touched.
//
// The steps (docs/migration.md), each durable before the next:
//
//  1. build: without a marker, remove what an earlier run left (the
//     X.migrating indexes, ondisk.MigrateTempDir); write the new indexes
//     as locations.migrating and ledgers.migrating (tables written with
//     lsm.CreateTable in ondisk.MigrateTempDir, ingested); locations of ledgers
//     the ledgers database does not hold are dropped.
//  2. verify: the locations per ledger counted in the new index equal
//     those converted; Samples locations read the same through the
//     RocksDB reader; every ledger record decodes to what was converted.
//  3. mark: keep copies of BookKeeper's files this storage rewrites
//     (lastId, lastMark, lastMark.<i> of LedgerDir/current, as
//     <name>.bookkeeper); remove ondisk.MigrateTempDir,
//     write and sync ondisk.MigrateMarker, sync the directory.
//  4. switch, for ledgers then locations: rename X to X.rocksdb-backup,
//     sync; rename X.migrating to X, sync.
//  5. remove the marker, sync.
//
// A crash before the marker leaves the RocksDB databases in place,
// untouched; a rerun starts over. A crash after it leaves the marker,
// and a rerun finishes the switch without reading RocksDB again. A
// directory already converted, or with no indexes, is NothingToDo. A
// directory an open storage holds (lsm.LockDir fails) is refused.
func FromRocksDB(opts Options) (*Result, error) {
	m := &migration{o: opts, start: time.Now()}
	if err := ondisk.FillDirs("bookie: migrate", ondisk.IndexDirRequired, &m.o.LedgerDir, &m.o.IndexDir, &m.o.FS); err != nil {
		return nil, err
	}
	if m.o.Samples == 0 {
		m.o.Samples = DefaultSamples
	}
	if m.o.Logger == nil {
		m.o.Logger = slog.New(slog.DiscardHandler)
	}
	var err error
	if m.engine, err = ondisk.LocationsEngineOptions(m.o.Engine, m.o.FS, m.o.Logger); err != nil {
		return nil, err
	}
	m.ledgersOpt = ondisk.LedgersEngineOptions(m.o.LedgersEngine, m.o.Logger)
	if err := ondisk.UseFS(&m.ledgersOpt, m.o.FS, "LedgersEngine.FS"); err != nil {
		return nil, err
	}
	m.ledgersOpt.EnsureDefaults()

	fs := m.o.FS
	m.current = filepath.Join(m.o.IndexDir, "current")
	m.tmp = filepath.Join(m.current, ondisk.MigrateTempDir)
	locPath, ledPath := filepath.Join(m.current, "locations"), filepath.Join(m.current, "ledgers")
	m.res = &Result{LocationsPath: locPath, LedgersPath: ledPath,
		LocationsBackupPath: locPath + ondisk.RocksDBBackupSuffix, LedgersBackupPath: ledPath + ondisk.RocksDBBackupSuffix}

	locks, err := m.lockIndexes(locPath, ledPath)
	if err != nil {
		return nil, err
	}
	unlock := func() {
		for _, l := range locks {
			_ = l.Close()
		}
		locks = nil
	}
	defer unlock()

	ready, err := ondisk.ReadyMarker(fs, m.current)
	if err != nil {
		return nil, err
	}
	if ready {
		// A run crashed during the switch: finish it.
		unlock()
		m.res.Resumed = true
		return m.res, m.finish()
	}
	if err := m.removeUnfinished(); err != nil {
		return nil, err
	}
	locKind, err := ondisk.KindOf(fs, locPath)
	if err != nil {
		return nil, err
	}
	ledKind, err := ondisk.KindOf(fs, ledPath)
	if err != nil {
		return nil, err
	}
	switch {
	case locKind != ondisk.DirRocksDB && ledKind != ondisk.DirRocksDB:
		m.res.NothingToDo = true
		m.res.Reason = "no RocksDB index here"
		if locKind == ondisk.DirOurs || ledKind == ondisk.DirOurs {
			m.res.Reason = "already converted"
			if _, err := fs.Stat(m.res.LocationsBackupPath); err == nil {
				m.res.Reason += "; the RocksDB databases are at " + m.res.LocationsBackupPath + " and " + m.res.LedgersBackupPath
			}
		}
		m.res.Duration = time.Since(m.start)
		return m.res, nil
	case locKind != ondisk.DirRocksDB || ledKind != ondisk.DirRocksDB:
		return nil, errors.Newf("bookie: migrate: %s is %s but %s is %s: a BookKeeper directory has both RocksDB databases",
			locPath, locKind, ledPath, ledKind)
	}
	for _, p := range []string{m.res.LocationsBackupPath, m.res.LedgersBackupPath} {
		if _, err := fs.Stat(p); err == nil {
			return nil, errors.Newf("bookie: migrate: %s exists (an earlier migration's backup?): move it away first", p)
		}
	}
	if err := m.build(locPath, ledPath); err != nil {
		// Best effort: a leftover is removed by the next run anyway.
		_ = m.removeUnfinished()
		return nil, err
	}
	unlock()
	return m.res, m.finish()
}

// lockIndexes locks each existing database directory as its owner does,
// so that a running bookie (or a second migration) makes the run fail
// before anything changes: a RocksDB database with RocksDB's own lock
// (rocksdb.LockDir: a running BookKeeper holds it; lsm.LockDir's lock
// would not see it), one of this storage's with lsm.LockDir (a running
// bookie-index serve holds it). Neither writes to the RocksDB database.
func (m *migration) lockIndexes(paths ...string) ([]interface{ Close() error }, error) {
	var locks []interface{ Close() error }
	for _, p := range paths {
		if _, err := m.o.FS.Stat(p); err != nil {
			continue
		}
		isRocks, err := ondisk.IsRocksDBDir(m.o.FS, p)
		var l interface{ Close() error }
		if err == nil {
			if isRocks {
				l, err = rocksdb.LockDir(m.o.FS, p)
			} else {
				l, err = lsm.LockDir(m.o.FS, p)
			}
		}
		if err != nil {
			for _, held := range locks {
				_ = held.Close()
			}
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, errors.Wrapf(err, "bookie: migrate: %s is in use: stop the bookie (BookKeeper, or bookie-index serve) first", p)
			}
			return nil, errors.Wrapf(err, "bookie: migrate: cannot lock %s (is a bookie running on it? stop it first)", p)
		}
		locks = append(locks, l)
	}
	return locks, nil
}

func (m *migration) progress(phase string, ledgers int, locs, kept int64) {
	if m.o.Progress != nil {
		m.o.Progress(Progress{Phase: phase, Ledgers: ledgers, Locations: locs, Kept: kept, Elapsed: time.Since(m.start)})
	}
}

// sample is a location looked up in both databases by the verification.
type sample struct {
	key  [16]byte
	kept bool
}

// removeUnfinished removes what a run that did not write its marker left
// (no marker, or one whose text a crash lost): it is garbage.
func (m *migration) removeUnfinished() error {
	fs := m.o.FS
	removed := false
	for _, name := range []string{ondisk.MigrateTempDir, "locations" + ondisk.MigrateNewSuffix, "ledgers" + ondisk.MigrateNewSuffix, ondisk.MigrateMarker} {
		p := filepath.Join(m.current, name)
		if _, err := fs.Stat(p); err != nil {
			continue
		}
		if err := fs.RemoveAll(p); err != nil {
			return errors.Wrapf(err, "bookie: migrate: removing %s, left by an unfinished migration", p)
		}
		m.o.Logger.Info("removed what an unfinished migration left", "path", p)
		removed = true
	}
	if removed {
		return errors.Wrap(vfs.SyncDir(fs, m.current), "bookie: migrate")
	}
	return nil
}

// build converts both databases into the X.migrating indexes, verifies
// them and writes the marker (steps 1 to 3).
func (m *migration) build(locPath, ledPath string) error {
	fs := m.o.FS
	if err := fs.MkdirAll(m.tmp, 0o755); err != nil {
		return errors.Wrap(err, "bookie: migrate")
	}
	if err := vfs.SyncDir(fs, m.current); err != nil {
		return errors.Wrap(err, "bookie: migrate")
	}

	// The ledgers first: they say which locations to keep.
	m.progress("ledgers", 0, 0, 0)
	ledgers, err := m.readLedgers(ledPath)
	if err != nil {
		return err
	}
	m.progress("ledgers", len(ledgers), 0, 0)

	src, err := rocksdb.Open(fs, locPath)
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: opening the RocksDB database %s", locPath)
	}
	defer src.Close()
	m.noteTorn(src.Props())
	counts, samples, tables, err := m.convertLocations(src, ledgers)
	if err != nil {
		return err
	}
	newLoc := filepath.Join(m.current, "locations"+ondisk.MigrateNewSuffix)
	if err := ingestInto(newLoc, &m.engine, tables); err != nil {
		return err
	}
	m.res.Tables = len(tables)
	newLed := filepath.Join(m.current, "ledgers"+ondisk.MigrateNewSuffix)
	if err := m.writeLedgers(newLed, ledgers); err != nil {
		return err
	}

	m.progress("verify", len(ledgers), m.res.Entries, m.res.Entries)
	if err := m.verifyLocations(newLoc, src, counts, samples); err != nil {
		return err
	}
	if err := m.verifyLedgers(newLed, ledgers); err != nil {
		return err
	}

	// BookKeeper's files this storage rewrites once it runs, kept for a
	// roll back.
	m.res.BookKeeperFiles, err = backupBookKeeperFiles(fs, filepath.Join(m.o.LedgerDir, "current"))
	if err != nil {
		return err
	}

	// The marker: everything above is durable (the engine syncs its
	// files; the directory entries of the new indexes are synced with
	// the removal of the tables' directory).
	if err := fs.RemoveAll(m.tmp); err != nil {
		return errors.Wrap(err, "bookie: migrate")
	}
	if err := vfs.SyncDir(fs, m.current); err != nil {
		return errors.Wrap(err, "bookie: migrate")
	}
	p := filepath.Join(m.current, ondisk.MigrateMarker)
	f, err := fs.Create(p)
	if err != nil {
		return errors.Wrap(err, "bookie: migrate: writing the marker")
	}
	_, err = f.Write([]byte(ondisk.MigrateReadyContent))
	if err == nil {
		err = f.Sync()
	}
	err = errors.CombineErrors(err, f.Close())
	if err == nil {
		err = vfs.SyncDir(fs, m.current)
	}
	return errors.Wrapf(err, "bookie: migrate: writing the marker %s", p)
}

func (m *migration) noteTorn(p rocksdb.Props) {
	for _, t := range p.Torn {
		s := fmt.Sprintf("%s: %d bytes from offset %d ignored (a torn last record, as RocksDB ignores it)", t.File, t.Bytes, t.Offset)
		m.res.Torn = append(m.res.Torn, s)
		m.o.Logger.Warn("RocksDB log has a torn tail", "file", t.File, "offset", t.Offset, "bytes", t.Bytes)
	}
}

// readLedgers reads and converts the RocksDB ledgers database: the ledgers
// that exist (exists=false ones are dropped: their locations go with
// them). Ledgers in limbo are refused unless ClearLimbo.
func (m *migration) readLedgers(path string) (map[int64]ondisk.LedgerInfo, error) {
	db, err := rocksdb.Open(m.o.FS, path)
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: migrate: opening the RocksDB database %s", path)
	}
	defer db.Close()
	m.noteTorn(db.Props())
	ledgers := map[int64]ondisk.LedgerInfo{}
	var limbo []int64
	err = db.Scan(func(k, v []byte) error {
		// Upstream's ledger keys are this index's (the same encoding).
		id, err := ondisk.DecodeLedgerKey(k)
		if err != nil {
			return errors.Wrapf(err, "bookie: migrate: %s: key %x", path, k)
		}
		d, err := decodeUpstreamLedgerData(v)
		if err != nil {
			return errors.Wrapf(err, "bookie: migrate: %s: ledger %d (value %x)", path, id, v)
		}
		if !d.exists {
			m.res.DeletedLedgers++
			return nil
		}
		if d.limbo {
			limbo = append(limbo, id)
		}
		info := ondisk.LedgerInfo{Exists: true, Fenced: d.fenced}
		if len(d.masterKey) > 0 {
			info.MasterKey = slices.Clone(d.masterKey)
		}
		if d.explicitLAC != nil {
			info.ExplicitLAC = append([]byte{}, d.explicitLAC...)
		}
		ledgers[id] = info
		return nil
	})
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: migrate: reading %s", path)
	}
	if len(limbo) > 0 {
		if !m.o.ClearLimbo {
			return nil, errors.Wrapf(ErrLimboLedgers, "bookie: migrate: %s: %d ledgers in limbo (%s): this storage has no limbo state; let BookKeeper's data integrity check clear them, or migrate them as ordinary ledgers with --clear-limbo",
				path, len(limbo), idList(limbo))
		}
		m.res.LimboCleared = limbo
		m.o.Logger.Warn("ledgers in limbo migrated as ordinary ledgers", "count", len(limbo), "ledgers", idList(limbo))
	}
	m.res.Ledgers = len(ledgers)
	return ledgers, nil
}

func idList(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 10 {
			fmt.Fprintf(&b, ", ... %d more", len(ids)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, id)
	}
	return b.String()
}

const maxSkippedKeys = 20

// convertLocations writes the visible locations of the ledgers that exist
// into tables in m.tmp, in key order, and returns the locations per
// ledger, the verification's samples and the tables.
func (m *migration) convertLocations(src *rocksdb.DB, ledgers map[int64]ondisk.LedgerInfo) (map[int64]int64, []sample, []string, error) {
	counts := map[int64]int64{}
	purged := map[int64]bool{}
	rng := rand.New(rand.NewPCG(17, 3))
	var samples []sample
	var seen int64
	set := lsm.NewTableSet(m.o.FS, m.tmp, m.engine.TableOptions(), m.engine.TargetFileSizeBase)
	var read int64
	skip := func(k []byte, why string) {
		m.res.Skipped++
		if len(m.res.SkippedKeys) < maxSkippedKeys {
			m.res.SkippedKeys = append(m.res.SkippedKeys, fmt.Sprintf("%x: %s", k, why))
		}
		m.o.Logger.Warn("location not migrated", "key", fmt.Sprintf("%x", k), "why", why)
	}
	it := src.NewIter()
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		read++
		if read%(64<<10) == 0 {
			m.progress("locations", len(ledgers), read, m.res.Entries)
		}
		// Upstream's keys and values are this index's (the same encoding).
		ledgerID, entryID, kerr := entrylocation.DecodeKey(k)
		loc, verr := entrylocation.DecodeLocation(v)
		if kerr != nil || verr != nil {
			_ = it.Close()
			set.Abort()
			return nil, nil, nil, errors.Newf("bookie: migrate: %s: key %x (%d bytes) with value %x (%d bytes): want 16 and 8 bytes",
				m.res.LocationsPath, k, len(k), v, len(v))
		}
		switch {
		case ledgerID < 0 || entryID < 0:
			skip(k, "negative ledger or entry id (this index holds none)")
			continue
		case loc <= 0:
			skip(k, fmt.Sprintf("location %d (upstream reads 0 as no location)", loc))
			continue
		}
		var s sample
		copy(s.key[:], k)
		if _, ok := ledgers[ledgerID]; !ok {
			if !purged[ledgerID] {
				purged[ledgerID] = true
				m.res.PurgedLedgers++
			}
			m.res.PurgedEntries++
		} else {
			s.kept = true
			counts[ledgerID]++
			m.res.Entries++
			if err := set.Set(k, v); err != nil {
				_ = it.Close()
				set.Abort()
				return nil, nil, nil, errors.Wrap(err, "bookie: migrate")
			}
		}
		// Reservoir sampling over every valid location, kept or purged.
		seen++
		if len(samples) < m.o.Samples {
			samples = append(samples, s)
		} else if j := rng.Int64N(seen); j < int64(len(samples)) {
			samples[j] = s
		}
	}
	err := errors.CombineErrors(it.Err(), it.Close())
	if err != nil {
		set.Abort()
		return nil, nil, nil, errors.Wrapf(err, "bookie: migrate: reading %s", m.res.LocationsPath)
	}
	tables, err := set.Finish()
	if err != nil {
		return nil, nil, nil, errors.Wrap(err, "bookie: migrate")
	}
	m.progress("locations", len(ledgers), read, m.res.Entries)
	return counts, samples, tables, nil
}

// ingestInto creates the index at path and ingests tables into it.
func ingestInto(path string, opts *lsm.Options, tables []string) error {
	o := *opts
	db, err := lsm.Open(path, &o)
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: creating %s", path)
	}
	if len(tables) > 0 {
		if err := db.Ingest(tables); err != nil {
			_ = db.Close()
			return errors.Wrapf(err, "bookie: migrate: ingesting %d tables into %s", len(tables), path)
		}
	}
	return errors.Wrapf(db.Close(), "bookie: migrate: closing %s", path)
}

// writeLedgers writes the ledger records as one table and ingests it into
// a new ledgers index at path.
func (m *migration) writeLedgers(path string, ledgers map[int64]ondisk.LedgerInfo) error {
	var tables []string
	if len(ledgers) > 0 {
		ids := slices.Sorted(maps.Keys(ledgers))
		p := filepath.Join(m.tmp, "ledgers-000000.sst")
		w, err := lsm.CreateTable(m.o.FS, p, m.ledgersOpt.TableOptions())
		if err != nil {
			return errors.Wrap(err, "bookie: migrate")
		}
		for _, id := range ids {
			info := ledgers[id]
			if err := w.Set(ondisk.LedgerKey(id), ondisk.EncodeLedgerInfo(&info)); err != nil {
				_, _ = w.Close()
				return errors.Wrap(err, "bookie: migrate: writing the ledgers table")
			}
		}
		if _, err := w.Close(); err != nil {
			return errors.Wrap(err, "bookie: migrate: writing the ledgers table")
		}
		tables = append(tables, p)
	}
	return ingestInto(path, &m.ledgersOpt, tables)
}

// verifyLocations counts the new index's locations per ledger against
// what was converted, and looks the samples up in both databases.
func (m *migration) verifyLocations(path string, src *rocksdb.DB, counts map[int64]int64, samples []sample) error {
	got := map[int64]int64{}
	db, err := readBack(path, m.engine, func(key, _ []byte) error {
		ledgerID, _, err := entrylocation.DecodeKey(key)
		if err != nil {
			return errors.Newf("bookie: migrate: verify: %s holds key %x", path, key)
		}
		got[ledgerID]++
		return nil
	})
	if err != nil {
		return err
	}
	defer db.Close()
	for _, id := range sortedCountIDs(counts, got) {
		if counts[id] != got[id] {
			return errors.Newf("bookie: migrate: verify: ledger %d has %d locations in %s, %d were converted", id, got[id], path, counts[id])
		}
	}
	for _, s := range samples {
		want, werr := src.Get(s.key[:])
		have, herr := db.Get(s.key[:])
		switch {
		case werr != nil:
			return errors.Wrapf(werr, "bookie: migrate: verify: key %x in the RocksDB database", s.key)
		case !s.kept:
			if !errors.Is(herr, lsm.ErrNotFound) {
				return errors.Newf("bookie: migrate: verify: key %x of a purged ledger: %s gives %x, %v", s.key, path, have, herr)
			}
		case herr != nil:
			return errors.Wrapf(herr, "bookie: migrate: verify: key %x in %s", s.key, path)
		case !bytes.Equal(want, have):
			return errors.Newf("bookie: migrate: verify: key %x: RocksDB has %x, %s has %x", s.key, want, path, have)
		}
		m.res.Verified++
	}
	return nil
}

// readBack opens the database a migration built at path read-only, with
// engine options o, and calls f with each of its entries in order; the
// first error stops it. It returns the open database, for more reads.
func readBack(path string, o lsm.Options, f func(key, value []byte) error) (*lsm.DB, error) {
	o.ReadOnly = true
	db, err := lsm.Open(path, &o)
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: migrate: verify: opening %s", path)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		_ = db.Close()
		return nil, errors.Wrap(err, "bookie: migrate: verify")
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := f(it.Key(), it.Value()); err != nil {
			_ = it.Close()
			_ = db.Close()
			return nil, err
		}
	}
	if err := errors.CombineErrors(it.Error(), it.Close()); err != nil {
		_ = db.Close()
		return nil, errors.Wrapf(err, "bookie: migrate: verify: reading %s", path)
	}
	return db, nil
}

func sortedCountIDs(a, b map[int64]int64) []int64 {
	ids := make([]int64, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// verifyLedgers reads every record of the new ledgers index back.
func (m *migration) verifyLedgers(path string, ledgers map[int64]ondisk.LedgerInfo) error {
	n := 0
	db, err := readBack(path, m.ledgersOpt, func(key, value []byte) error {
		id, info, err := ondisk.DecodeLedgerRecord(key, value)
		if err == nil {
			want, ok := ledgers[id]
			if !ok || !equalLedgerInfo(&info, &want) {
				err = errors.Newf("ledger %d reads back as %+v, want %+v", id, info, want)
			}
		}
		n++
		return errors.Wrapf(err, "bookie: migrate: verify: %s", path)
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if n != len(ledgers) {
		return errors.Newf("bookie: migrate: verify: %s holds %d ledgers, %d were converted", path, n, len(ledgers))
	}
	return nil
}

func equalLedgerInfo(a, b *ondisk.LedgerInfo) bool {
	return a.Exists == b.Exists && a.Fenced == b.Fenced && a.PurgePending == b.PurgePending && a.Floor == b.Floor &&
		bytes.Equal(a.MasterKey, b.MasterKey) && bytes.Equal(a.ExplicitLAC, b.ExplicitLAC) &&
		(a.ExplicitLAC == nil) == (b.ExplicitLAC == nil)
}

// finish runs steps 4 and 5: the marker is durable, so every step here is
// redone or skipped by what the directory shows.
func (m *migration) finish() error {
	fs := m.o.FS
	m.progress("switch", m.res.Ledgers, m.res.Entries, m.res.Entries)
	for _, name := range []string{"ledgers", "locations"} {
		cur := filepath.Join(m.current, name)
		bak := cur + ondisk.RocksDBBackupSuffix
		built := cur + ondisk.MigrateNewSuffix
		if _, err := fs.Stat(built); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // switched before the crash
			}
			return errors.Wrap(err, "bookie: migrate: switch")
		}
		k, err := ondisk.KindOf(fs, cur)
		if err != nil {
			return err
		}
		switch k {
		case ondisk.DirRocksDB:
			if _, err := fs.Stat(bak); err == nil {
				return errors.Newf("bookie: migrate: switch: both %s and %s exist; move the older backup away and run again", cur, bak)
			}
			if err := fs.Rename(cur, bak); err != nil {
				return errors.Wrap(err, "bookie: migrate: switch")
			}
			if err := vfs.SyncDir(fs, m.current); err != nil {
				return errors.Wrap(err, "bookie: migrate: switch")
			}
		case ondisk.DirOurs:
			return errors.Newf("bookie: migrate: switch: %s is a bookie-index index, yet the migrated one is still at %s: was the storage started during the migration? Move one of them away and run again", cur, built)
		}
		if err := fs.Rename(built, cur); err != nil {
			return errors.Wrap(err, "bookie: migrate: switch")
		}
		if err := vfs.SyncDir(fs, m.current); err != nil {
			return errors.Wrap(err, "bookie: migrate: switch")
		}
		m.o.Logger.Info("switched to the migrated index", "index", cur, "rocksdb", bak)
	}
	marker := filepath.Join(m.current, ondisk.MigrateMarker)
	if err := fs.Remove(marker); err != nil {
		return errors.Wrapf(err, "bookie: migrate: removing %s", marker)
	}
	if err := vfs.SyncDir(fs, m.current); err != nil {
		return errors.Wrap(err, "bookie: migrate")
	}
	m.res.Duration = time.Since(m.start)
	return nil
}

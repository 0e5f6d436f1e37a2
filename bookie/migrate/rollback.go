package migrate

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// ErrRollBackUnsafe is the errors.Is target of a roll back refused because
// BookKeeper would not find, in the directories as they are, what its
// kept state names: an entry log its index points into, or the journal
// file its last log mark points into (RollBackOptions.Force overrides).
var ErrRollBackUnsafe = errors.New("roll back would lose data for BookKeeper")

// RollBackOptions configure RollBack.
type RollBackOptions struct {
	// IndexDir and LedgerDir are one pair of the configuration, as
	// migrated ("" LedgerDir: IndexDir).
	IndexDir, LedgerDir string
	// JournalDirs are the bookie's journal directories, in order: the
	// journal file each kept last log mark names must be in the one of
	// its index. None: not checked.
	JournalDirs []string
	// FS holds them. Default vfs.Default.
	FS vfs.FS
	// Samples is how many of the kept index's locations are read from the
	// entry logs before anything changes. Default DefaultSamples;
	// negative: none.
	Samples int
	// Force rolls back even when the checks find entries or a journal
	// file BookKeeper would miss (ErrRollBackUnsafe).
	Force  bool
	Logger *slog.Logger
}

// RollBackResult describes a roll back of one pair of directories.
type RollBackResult struct {
	// NothingToDo: the directory holds BookKeeper's RocksDB indexes and
	// no backup (never migrated, or rolled back already); Reason says
	// which.
	NothingToDo bool
	Reason      string
	// Resumed: a crashed roll back was finished (its checks had passed).
	Resumed bool
	// EntryLogs is how many of BookKeeper's entry logs the kept index
	// names (each checked to be there), Verified how many locations were
	// read from them; Problems what the checks found (with Force).
	EntryLogs, Verified int
	Problems            []string
	// MovedAside lists what was moved into the RolledBackDir of each
	// directory (this storage's indexes, entry logs, ledgers maps,
	// LAYOUT, and lastId or lastMark files BookKeeper had not written);
	// Restored the BookKeeper files put back from the migration's copy.
	MovedAside, Restored []string
	// Aside is the ledger directory's RolledBackDir.
	Aside    string
	Duration time.Duration
}

// RollBack undoes FromRocksDB on one pair of directories so that
// BookKeeper starts on them as they were when the migration switched
// (docs/migration.md, "Roll back"): this storage must be stopped, and
// whatever it accepted since is lost for BookKeeper (its entry logs are
// not BookKeeper's format; they are moved aside, not deleted).
//
// Before changing anything it checks (unless Force) that BookKeeper will
// find what its kept state names: every entry log its kept location
// index points into is still there, in BookKeeper's format (this
// storage's garbage collector removes the logs it compacts), Samples of
// those locations read back as their entries, and the journal file each
// kept last log mark names is in its journal directory (this storage's
// journal removes files its checkpoints passed, keeping
// journalMaxBackups). A failed check matches ErrRollBackUnsafe.
//
// Then, in order, each step durable before the next and each redone or
// skipped by what the directories show (a crash anywhere: run it again;
// the storage refuses the directory meanwhile):
//
//  1. the marker ondisk.RollBackMarker in IndexDir/current;
//  2. this storage's entry logs (BIEL), every ledgers map and LAYOUT
//     move into LedgerDir/current/ondisk.RolledBackDir (LAYOUT also
//     from IndexDir/current);
//  3. per index (ledgers, locations): this storage's moves into
//     IndexDir/current/ondisk.RolledBackDir, the RocksDB backup is
//     renamed back;
//  4. lastId, lastMark and lastMark.<i> are put back from the copies the
//     migration kept (<name>.bookkeeper); a lastMark without one (this
//     storage's: BookKeeper had none) is moved aside;
//  5. the marker is removed, then the copies.
//
// The journal directories are RollBackJournals' (once every pair is
// rolled back).
func RollBack(o RollBackOptions) (*RollBackResult, error) {
	start := time.Now()
	if err := ondisk.FillDirs("bookie: migrate: roll back", ondisk.IndexDirRequired, &o.LedgerDir, &o.IndexDir, &o.FS); err != nil {
		return nil, err
	}
	if o.Samples == 0 {
		o.Samples = DefaultSamples
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	fs := o.FS
	idxCur, ledCur := filepath.Join(o.IndexDir, "current"), filepath.Join(o.LedgerDir, "current")
	res := &RollBackResult{Aside: filepath.Join(ledCur, ondisk.RolledBackDir)}
	marker := filepath.Join(idxCur, ondisk.RollBackMarker)

	locks, err := lockForRollBack(fs, idxCur)
	defer func() {
		for _, l := range locks {
			_ = l.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	started, err := exists(fs, marker)
	if err != nil {
		return nil, err
	}
	res.Resumed = started
	if !started {
		done, err := checkRollBack(o, idxCur, ledCur, res)
		if err != nil || done {
			res.Duration = time.Since(start)
			return res, err
		}
		if err := vfs.ReplaceFile(fs, marker, marker+".tmp", []byte("bookie-index migrate --roll-back: in progress\n")); err != nil {
			return nil, errors.Wrapf(err, "bookie: migrate: roll back: writing %s", marker)
		}
	}

	// 2. This storage's files in the ledger directory, out of the way.
	ledAside := filepath.Join(ledCur, ondisk.RolledBackDir)
	idxAside := filepath.Join(idxCur, ondisk.RolledBackDir)
	for _, d := range slices.Compact([]string{ledAside, idxAside}) {
		if err := fs.MkdirAll(d, 0o755); err != nil {
			return nil, errors.Wrap(err, "bookie: migrate: roll back")
		}
		if err := vfs.SyncDir(fs, filepath.Dir(d)); err != nil {
			return nil, errors.Wrap(err, "bookie: migrate: roll back")
		}
	}
	moved, err := moveOursAside(fs, ledCur, ledAside)
	if err != nil {
		return nil, err
	}
	res.MovedAside = append(res.MovedAside, moved...)
	if idxCur != ledCur {
		if ok, err := exists(fs, filepath.Join(idxCur, "LAYOUT")); err != nil {
			return nil, err
		} else if ok {
			if err := moveInto(fs, idxCur, idxAside, []string{"LAYOUT"}); err != nil {
				return nil, err
			}
			res.MovedAside = append(res.MovedAside, filepath.Join(idxCur, "LAYOUT"))
		}
	}

	// 3. The indexes: this storage's renamed X.rolled-back, BookKeeper's
	// back in place (renames within the directory: each atomic).
	for _, name := range []string{"ledgers", "locations"} {
		cur := filepath.Join(idxCur, name)
		bak := cur + ondisk.RocksDBBackupSuffix
		if ok, err := exists(fs, bak); err != nil {
			return nil, err
		} else if !ok {
			continue // switched back before a crash
		}
		k, err := ondisk.KindOf(fs, cur)
		if err != nil {
			return nil, err
		}
		switch k {
		case ondisk.DirOurs:
			if err := fs.Rename(cur, cur+ondisk.RolledBackSuffix); err != nil {
				return nil, errors.Wrap(err, "bookie: migrate: roll back")
			}
			if err := vfs.SyncDir(fs, idxCur); err != nil {
				return nil, errors.Wrap(err, "bookie: migrate: roll back")
			}
			res.MovedAside = append(res.MovedAside, cur)
		case ondisk.DirRocksDB:
			return nil, errors.Newf("bookie: migrate: roll back: both %s and %s are RocksDB databases: which one is BookKeeper's? Move one away and run again", cur, bak)
		}
		if err := fs.Rename(bak, cur); err != nil {
			return nil, errors.Wrap(err, "bookie: migrate: roll back")
		}
		if err := vfs.SyncDir(fs, idxCur); err != nil {
			return nil, errors.Wrap(err, "bookie: migrate: roll back")
		}
	}

	// 4. BookKeeper's lastId and lastMark files as they were.
	restored, movedFiles, err := restoreBookKeeperFiles(fs, ledCur, ledAside)
	if err != nil {
		return nil, err
	}
	res.Restored = restored
	for _, m := range movedFiles {
		res.MovedAside = append(res.MovedAside, filepath.Join(ledCur, m))
	}

	// 5. Done; the copies of BookKeeper's files go last.
	if err := fs.Remove(marker); err != nil {
		return nil, errors.Wrapf(err, "bookie: migrate: roll back: removing %s", marker)
	}
	if err := vfs.SyncDir(fs, idxCur); err != nil {
		return nil, errors.Wrap(err, "bookie: migrate: roll back")
	}
	if err := removeBookKeeperCopies(fs, ledCur); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// lockForRollBack locks the databases of idxCur as their owners do:
// this storage's indexes (a running serve holds them), BookKeeper's
// RocksDB databases and backups (a running BookKeeper holds them).
func lockForRollBack(fs vfs.FS, idxCur string) ([]interface{ Close() error }, error) {
	var locks []interface{ Close() error }
	for _, name := range []string{"locations", "ledgers", "locations" + ondisk.RocksDBBackupSuffix, "ledgers" + ondisk.RocksDBBackupSuffix} {
		p := filepath.Join(idxCur, name)
		k, err := ondisk.KindOf(fs, p)
		if err != nil {
			return locks, err
		}
		var l interface{ Close() error }
		switch k {
		case ondisk.DirMissing:
			continue
		case ondisk.DirRocksDB:
			l, err = rocksdb.LockDir(fs, p)
		default:
			l, err = lsm.LockDir(fs, p)
		}
		if err != nil {
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return locks, errors.Wrapf(err, "bookie: migrate: roll back: %s is in use: stop the bookie (bookie-index serve, or BookKeeper) first", p)
			}
			return locks, errors.Wrapf(err, "bookie: migrate: roll back: cannot lock %s", p)
		}
		locks = append(locks, l)
	}
	return locks, nil
}

// checkRollBack checks a roll back that has not started: the directories
// are a migration's (or report NothingToDo), and BookKeeper will find
// what its kept state names (unless Force). It changes nothing.
func checkRollBack(o RollBackOptions, idxCur, ledCur string, res *RollBackResult) (done bool, err error) {
	fs := o.FS
	kinds := map[string]ondisk.DirKind{}
	for _, name := range []string{"locations", "ledgers", "locations" + ondisk.RocksDBBackupSuffix, "ledgers" + ondisk.RocksDBBackupSuffix} {
		if kinds[name], err = ondisk.KindOf(fs, filepath.Join(idxCur, name)); err != nil {
			return false, err
		}
	}
	locBak, ledBak := kinds["locations"+ondisk.RocksDBBackupSuffix], kinds["ledgers"+ondisk.RocksDBBackupSuffix]
	switch {
	case locBak == ondisk.DirMissing && ledBak == ondisk.DirMissing:
		if kinds["locations"] == ondisk.DirRocksDB && kinds["ledgers"] == ondisk.DirRocksDB {
			res.NothingToDo = true
			res.Reason = "BookKeeper's RocksDB indexes are in place (never migrated, or rolled back already)"
			// A roll back that crashed before it removed the copies of
			// BookKeeper's files: remove them now.
			if done, err := exists(fs, filepath.Join(ledCur, ondisk.RolledBackDir)); err != nil || !done {
				return true, err
			}
			return true, removeBookKeeperCopies(fs, ledCur)
		}
		return false, errors.Newf("bookie: migrate: roll back: %s has no RocksDB backups (%s, %s): nothing to roll back to (were they removed?)",
			idxCur, "locations"+ondisk.RocksDBBackupSuffix, "ledgers"+ondisk.RocksDBBackupSuffix)
	case locBak != ondisk.DirRocksDB || ledBak != ondisk.DirRocksDB:
		return false, errors.Newf("bookie: migrate: roll back: %s: the RocksDB backups are not both there (locations%s is %s, ledgers%s is %s)",
			idxCur, ondisk.RocksDBBackupSuffix, locBak, ondisk.RocksDBBackupSuffix, ledBak)
	}
	for _, name := range []string{"locations", "ledgers"} {
		if kinds[name] == ondisk.DirRocksDB {
			return false, errors.Newf("bookie: migrate: roll back: %s is a RocksDB database and %s%s too: which one is BookKeeper's? Move one away",
				filepath.Join(idxCur, name), name, ondisk.RocksDBBackupSuffix)
		}
	}
	for _, aside := range []string{filepath.Join(ledCur, ondisk.RolledBackDir), filepath.Join(idxCur, ondisk.RolledBackDir),
		filepath.Join(idxCur, "locations"+ondisk.RolledBackSuffix), filepath.Join(idxCur, "ledgers"+ondisk.RolledBackSuffix)} {
		if ok, err := exists(fs, aside); err != nil {
			return false, err
		} else if ok {
			return false, errors.Newf("bookie: migrate: roll back: %s exists (an earlier roll back's): move it away first", aside)
		}
	}
	if err := checkEntryLogs(o, idxCur, ledCur, res); err != nil {
		return false, err
	}
	if err := checkJournalMarks(o, ledCur, res); err != nil {
		return false, err
	}
	if len(res.Problems) > 0 {
		for _, p := range res.Problems {
			o.Logger.Warn("roll back check", "problem", p)
		}
		if !o.Force {
			return false, errors.Wrapf(ErrRollBackUnsafe, "bookie: migrate: roll back of %s: %s (--force rolls back all the same)",
				idxCur, strings.Join(res.Problems, "; "))
		}
	}
	return false, nil
}

// checkEntryLogs checks that every entry log BookKeeper's kept location
// index points into (for the ledgers its kept ledgers index holds) is in
// ledCur in BookKeeper's format, and reads Samples of the locations.
func checkEntryLogs(o RollBackOptions, idxCur, ledCur string, res *RollBackResult) error {
	fs := o.FS
	held := map[int64]bool{}
	ledPath := filepath.Join(idxCur, "ledgers"+ondisk.RocksDBBackupSuffix)
	led, err := rocksdb.Open(fs, ledPath)
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: roll back: opening %s", ledPath)
	}
	err = led.Scan(func(k, v []byte) error {
		id, err := ondisk.DecodeLedgerKey(k)
		if err != nil {
			return err
		}
		d, err := decodeUpstreamLedgerData(v)
		if err != nil {
			return errors.Wrapf(err, "ledger %d", id)
		}
		if d.exists {
			held[id] = true
		}
		return nil
	})
	err = errors.CombineErrors(err, led.Close())
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: roll back: reading %s", ledPath)
	}

	locPath := filepath.Join(idxCur, "locations"+ondisk.RocksDBBackupSuffix)
	loc, err := rocksdb.Open(fs, locPath)
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: roll back: opening %s", locPath)
	}
	type named struct{ ledger, entry, location int64 }
	perLog := map[int64]int64{}
	var samples []named
	var seen int64
	rng := rand.New(rand.NewPCG(17, 5))
	err = loc.Scan(func(k, v []byte) error {
		ledgerID, entryID, kerr := entrylocation.DecodeKey(k)
		location, verr := entrylocation.DecodeLocation(v)
		if kerr != nil || verr != nil || ledgerID < 0 || entryID < 0 || location <= 0 || !held[ledgerID] {
			return nil // not a location BookKeeper reads
		}
		perLog[entrylog.LocationLogID(location)]++
		seen++
		s := named{ledgerID, entryID, location}
		if len(samples) < o.Samples {
			samples = append(samples, s)
		} else if j := rng.Int64N(seen); j < int64(len(samples)) {
			samples[j] = s
		}
		return nil
	})
	err = errors.CombineErrors(err, loc.Close())
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: roll back: reading %s", locPath)
	}

	ids := slices.Sorted(maps.Keys(perLog))
	res.EntryLogs = len(ids)
	var gone []string
	for _, id := range ids {
		p := filepath.Join(ledCur, entrylog.LogFileName(id))
		if ok, err := exists(fs, p); err != nil {
			return err
		} else if !ok {
			gone = append(gone, fmt.Sprintf("%s (%d entries)", entrylog.LogFileName(id), perLog[id]))
			continue
		}
		f, err := entrylog.DetectFormat(fs, p)
		switch {
		case err != nil:
			gone = append(gone, fmt.Sprintf("%s (%d entries): %v", entrylog.LogFileName(id), perLog[id], err))
		case f != entrylog.FormatBKLO:
			gone = append(gone, fmt.Sprintf("%s (%d entries): now this storage's format (%s)", entrylog.LogFileName(id), perLog[id], f))
		}
	}
	if len(gone) > 0 {
		if len(gone) > 5 {
			gone = append(gone[:5], fmt.Sprintf("... %d more", len(gone)-5))
		}
		res.Problems = append(res.Problems, fmt.Sprintf("entry logs BookKeeper's index names are gone from %s (the garbage collector compacts logs into its own and removes them): %s",
			ledCur, strings.Join(gone, ", ")))
		return nil
	}
	if len(samples) == 0 {
		return nil
	}
	logs, err := entrylog.Open(ledCur, &entrylog.Options{FS: fs})
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: roll back: opening the entry logs of %s", ledCur)
	}
	defer logs.Close()
	bad := 0
	for _, s := range samples {
		if _, err := logs.ReadEntry(s.ledger, s.entry, s.location); err != nil {
			if bad == 0 {
				res.Problems = append(res.Problems, fmt.Sprintf("entry %d of ledger %d at %s does not read back: %v",
					s.entry, s.ledger, entrylog.FormatLocation(s.location), err))
			}
			bad++
			continue
		}
		res.Verified++
	}
	if bad > 1 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d of %d sampled entries do not read back", bad, len(samples)))
	}
	return nil
}

// checkJournalMarks checks that the journal file each kept last log mark
// (lastMark.bookkeeper, lastMark.<i>.bookkeeper in ledCur) names is in its
// journal directory: BookKeeper replays its journal from there, and
// entries only in that file (a bookie that was not stopped cleanly) would
// be lost without it.
func checkJournalMarks(o RollBackOptions, ledCur string, res *RollBackResult) error {
	if len(o.JournalDirs) == 0 {
		return nil
	}
	all, err := o.FS.List(ledCur)
	if err != nil {
		return errors.Wrapf(err, "bookie: migrate: roll back: listing %s", ledCur)
	}
	for _, copyName := range all {
		name, ok := strings.CutSuffix(copyName, LastMarkBackupSuffix)
		if !ok {
			continue
		}
		index := 0
		switch {
		case name == "lastMark":
		case strings.HasPrefix(name, "lastMark."):
			if index, err = strconv.Atoi(strings.TrimPrefix(name, "lastMark.")); err != nil {
				continue
			}
		default:
			continue
		}
		if index >= len(o.JournalDirs) {
			res.Problems = append(res.Problems, fmt.Sprintf("%s names journal %d, and %d journal directories are configured", name, index, len(o.JournalDirs)))
			continue
		}
		f, err := o.FS.Open(filepath.Join(ledCur, copyName))
		if err != nil {
			return errors.Wrap(err, "bookie: migrate: roll back")
		}
		var b [16]byte
		n, _ := f.ReadAt(b[:], 0)
		_ = f.Close()
		if n < len(b) {
			continue // BookKeeper skips a short mark too
		}
		fileID := int64(binary.BigEndian.Uint64(b[:8]))
		if fileID == 0 {
			continue
		}
		txn := filepath.Join(o.JournalDirs[index], "current", strconv.FormatInt(fileID, 16)+".txn")
		if ok, err := exists(o.FS, txn); err != nil {
			return err
		} else if !ok {
			res.Problems = append(res.Problems, fmt.Sprintf("BookKeeper's last log mark (%s) names journal file %s, which is gone (this storage's journal removes files its checkpoints passed, keeping journalMaxBackups): "+
				"entries BookKeeper had only in its journal would be lost", name, txn))
		}
	}
	return nil
}

// moveOursAside moves this storage's files out of ledCur into aside: its
// entry logs (BIEL), every ledgers map (*.ledgers: BookKeeper writes
// none) and LAYOUT. It returns their paths.
func moveOursAside(fs vfs.FS, ledCur, aside string) ([]string, error) {
	names, err := fs.List(ledCur)
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: migrate: roll back: listing %s", ledCur)
	}
	var ours, moved []string
	for _, name := range names {
		mine := name == "LAYOUT" || strings.HasSuffix(name, ".ledgers")
		if _, ok := entrylog.ParseLogFileName(name); ok {
			info, err := fs.Stat(filepath.Join(ledCur, name))
			if err != nil {
				return nil, errors.Wrap(err, "bookie: migrate: roll back")
			}
			if info.Size() > 0 {
				f, err := entrylog.DetectFormat(fs, filepath.Join(ledCur, name))
				mine = err == nil && f == entrylog.FormatBIEL
			}
		}
		if mine {
			ours = append(ours, name)
			moved = append(moved, filepath.Join(ledCur, name))
		}
	}
	return moved, moveInto(fs, ledCur, aside, ours)
}

// moveInto moves the files names from dir into aside (a directory this
// roll back created), durably: aside is synced before dir, so that a
// crash leaves each file in aside, or in both (one file under two
// names: a rerun then removes the name in dir), never in neither.
func moveInto(fs vfs.FS, dir, aside string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	for _, name := range names {
		src, dst := filepath.Join(dir, name), filepath.Join(aside, name)
		if ok, err := exists(fs, dst); err != nil {
			return err
		} else if ok {
			// Moved before a crash that kept the old name too.
			if err := fs.Remove(src); err != nil {
				return errors.Wrap(err, "bookie: migrate: roll back")
			}
			continue
		}
		if err := fs.Rename(src, dst); err != nil {
			return errors.Wrap(err, "bookie: migrate: roll back")
		}
	}
	if err := vfs.SyncDir(fs, aside); err != nil {
		return errors.Wrap(err, "bookie: migrate: roll back")
	}
	return errors.Wrap(vfs.SyncDir(fs, dir), "bookie: migrate: roll back")
}

// RollBackJournals moves this storage's journal files out of each journal
// directory's current/ into its ondisk.RolledBackDir: the files it wrote
// (those with a "<id>.synced" beside them; BookKeeper writes none) and
// the .synced files, so that BookKeeper replays its own journal from its
// own last mark and nothing this storage journaled since the migration.
// Run it once every pair is rolled back. It returns the paths moved.
func RollBackJournals(fs vfs.FS, journalDirs []string) ([]string, error) {
	if fs == nil {
		fs = vfs.Default
	}
	var moved []string
	for _, dir := range journalDirs {
		cur := filepath.Join(dir, "current")
		names, err := fs.List(cur)
		if err != nil {
			if ok, _ := exists(fs, cur); !ok {
				continue
			}
			return moved, errors.Wrapf(err, "bookie: migrate: roll back: listing %s", cur)
		}
		var ours []string
		for _, name := range names {
			id, ok := strings.CutSuffix(name, ".synced")
			if !ok {
				continue
			}
			ours = append(ours, name)
			if slices.Contains(names, id+".txn") {
				ours = append(ours, id+".txn")
			}
		}
		if len(ours) == 0 {
			continue
		}
		aside := filepath.Join(cur, ondisk.RolledBackDir)
		if err := fs.MkdirAll(aside, 0o755); err != nil {
			return moved, errors.Wrap(err, "bookie: migrate: roll back")
		}
		if err := vfs.SyncDir(fs, cur); err != nil {
			return moved, errors.Wrap(err, "bookie: migrate: roll back")
		}
		// The journal files before their .synced: a .synced left alone
		// by a crash still names its file for the rerun.
		var txns, synced []string
		for _, name := range ours {
			if strings.HasSuffix(name, ".synced") {
				synced = append(synced, name)
			} else {
				txns = append(txns, name)
			}
		}
		for _, batch := range [][]string{txns, synced} {
			if err := moveInto(fs, cur, aside, batch); err != nil {
				return moved, err
			}
			for _, name := range batch {
				moved = append(moved, filepath.Join(cur, name))
			}
		}
	}
	return moved, nil
}

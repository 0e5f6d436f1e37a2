package lsm

import (
	"fmt"
	"io"
	"os"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/batch"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/cockroachdb/errors"
)

// walEnd says how a WAL's replay ended.
type walEnd struct {
	path string
	num  uint64
	// size is the file's length; validEnd where its last complete,
	// decodable record ends (the replayed prefix).
	size, validEnd int64
	// synced is the WAL's synced-length mark, if syncedKnown. A WAL
	// followed by newer ones was synced in full before the next one took
	// a write, whatever its mark says: fullySynced.
	synced      int64
	syncedKnown bool
	fullySynced bool
	// problem describes the damage at validEnd; empty if the WAL replays
	// to its end (possibly followed by zeros).
	problem string
	// corruption is set when the damage lies within synced bytes, or is
	// followed by a valid record, or is a record that does not decode: no
	// crash explains it. Otherwise a damaged end is a torn tail.
	corruption bool
}

// damaged reports whether the WAL does not replay to its end.
func (e *walEnd) damaged() bool { return e.problem != "" }

// tornTail reports whether the damage is a torn tail: bytes no completed
// sync covered, provably (the synced length is known).
func (e *walEnd) tornTail() bool { return e.damaged() && !e.corruption && e.syncedKnown }

// syncState describes what is known of the synced bytes, for messages.
func (e *walEnd) syncState() string {
	switch {
	case e.fullySynced:
		return "the WAL was synced in full before a newer one took writes"
	case !e.syncedKnown:
		return fmt.Sprintf("synced length unknown: %s is missing or damaged",
			manifest.FileName(manifest.FileKindSyncedLength, e.num))
	case e.validEnd < e.synced:
		return fmt.Sprintf("within the %d bytes a completed sync covered", e.synced)
	}
	return fmt.Sprintf("beyond the %d bytes a completed sync covered", e.synced)
}

// describe is the one-line account of a damaged WAL used by Open's errors
// and WARNs and by Check.
func (e *walEnd) describe() string {
	return fmt.Sprintf("WAL %s does not replay to its end: damage at offset %d (%s; %d bytes from there to the end of the file): %s",
		e.path, e.validEnd, e.syncState(), e.size-e.validEnd, e.problem)
}

// readWAL reads WAL num from its start, handing each record and its batch
// to apply (nil: decode only), and says how it ended. newest is false for a
// WAL followed by newer WALs. Only an I/O error or an error of apply is
// returned as an error.
func (d *DB) readWAL(num uint64, newest bool, apply func(rec []byte, br *batch.Reader) error) (walEnd, error) {
	e := walEnd{num: num, path: manifest.FilePath(d.dir, manifest.FileKindLog, num), fullySynced: !newest}
	var err error
	e.synced, e.syncedKnown, err = manifest.ReadSyncedLength(d.fs, d.dir, num)
	if err != nil {
		return e, err
	}
	f, err := d.fs.Open(e.path)
	if err != nil {
		return e, errors.Wrapf(err, "lsm: opening WAL %s", e.path)
	}
	defer f.Close()
	if e.size, err = f.Size(); err != nil {
		return e, errors.Wrapf(err, "lsm: WAL %s", e.path)
	}
	r := record.NewReader(io.NewSectionReader(f, 0, e.size))
	for {
		start := r.Offset()
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if !errors.Is(err, base.ErrCorruption) {
				return e, errors.Wrapf(err, "lsm: replaying WAL %s", e.path)
			}
			// A valid chunk follows the damage: later records would be
			// lost, and a process crash never tears a log in its middle.
			// A power loss can, beyond the last completed sync (unsynced
			// pages reach the disk in any order): damage at or past a
			// known synced length is a torn tail even then.
			e.validEnd, e.problem = r.Offset(), err.Error()
			e.corruption = e.fullySynced || !e.syncedKnown || e.validEnd < e.synced
			return e, nil
		}
		br, err := decodeWholeBatch(rec)
		if err != nil {
			// The record's checksum held: bytes we wrote do not decode.
			e.validEnd, e.problem, e.corruption = start, err.Error(), true
			return e, nil
		}
		if apply != nil {
			if err := apply(rec, &br); err != nil {
				return e, errors.Wrapf(err, "lsm: replaying WAL %s", e.path)
			}
		}
	}
	e.validEnd = r.Offset()
	switch {
	case r.TornTail():
		e.problem = r.TornTailProblem()
	case e.syncedKnown && e.validEnd < e.synced:
		e.problem = fmt.Sprintf("the log ends at offset %d (followed by %d zero bytes)", e.validEnd, e.size-e.validEnd)
	}
	if e.damaged() {
		e.corruption = e.fullySynced || (e.syncedKnown && e.validEnd < e.synced)
	}
	return e, nil
}

// newestWrittenWAL returns the index in nums (ascending WAL numbers) of
// the newest WAL that holds any bytes (0 when none does). The rule "a WAL
// followed by a newer one was synced in full" holds only for a newer WAL
// that took writes: Open creates its new WAL before recording it, so a
// crash or a failure there leaves an empty newer WAL behind a WAL whose
// torn tail was tolerated, and that must stay tolerated.
func (d *DB) newestWrittenWAL(nums []uint64) int {
	for i := len(nums) - 1; i > 0; i-- {
		fi, err := d.fs.Stat(manifest.FilePath(d.dir, manifest.FileKindLog, nums[i]))
		if err != nil || fi.Size() > 0 {
			return i
		}
	}
	return 0
}

// decodeWholeBatch decodes every entry of the batch rec, so that a batch is
// applied whole or not at all, and returns a reader at its first entry.
func decodeWholeBatch(rec []byte) (batch.Reader, error) {
	br, err := batch.Decode(rec)
	for err == nil {
		var ok bool
		if _, _, _, ok, err = br.Next(); !ok {
			break
		}
	}
	if err != nil {
		return batch.Reader{}, err
	}
	return batch.Decode(rec)
}

// replayWALs replays the WALs nums (in order; the last is the newest) into
// memtables, and returns the names of the files to keep in lost/: WALs that
// did not replay to their end for a reason other than a proven torn tail,
// with their synced-length files. Damage within synced bytes fails it
// unless Options.WALRecoveryMode is WALRecoveryPointInTime, which stops at
// the damage and skips every later WAL.
func (d *DB) replayWALs(nums []uint64, mem *memTable, recovered *[]*memTable, maxSeq base.SeqNum) (_ *memTable, _ base.SeqNum, keep []string, _ error) {
	apply := func(rec []byte, br *batch.Reader) error {
		size := int64(len(rec)) + int64(br.Count())*memEntryOverhead
		if mem.charged+size > mem.budget && mem.charged > 0 {
			*recovered = append(*recovered, mem)
			mem = d.newMemTable(max(size, d.opts.WriteBufferSize), 0)
		} else if mem.charged == 0 && size > mem.budget {
			mem = d.newMemTable(size, 0)
		}
		mem.charged += size
		seq := br.SeqNum()
		for {
			kind, key, value, ok, err := br.Next()
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if kind == base.KindMerge && d.opts.MergeOperator == nil {
				return errors.Wrapf(errMergeNoOperator, "key %q", key)
			}
			if err := mem.add(seq, kind, key, value); err != nil {
				return err
			}
			maxSeq = max(maxSeq, seq)
			seq++
		}
	}
	keepWAL := func(num uint64) {
		keep = append(keep, manifest.FileName(manifest.FileKindLog, num), manifest.FileName(manifest.FileKindSyncedLength, num))
	}
	newest := d.newestWrittenWAL(nums)
	for i, num := range nums {
		e, err := d.readWAL(num, i >= newest, apply)
		if err != nil {
			return nil, 0, nil, err
		}
		switch {
		case !e.damaged():
		case e.tornTail():
			d.opts.Logger.Warn("lsm: dropped the torn tail of a WAL (bytes after its last completed sync: writes never acknowledged as synced)",
				"wal", e.path, "offset", e.validEnd, "bytes", e.size-e.validEnd, "syncedLength", e.synced, "damage", e.problem)
		case !e.corruption:
			d.opts.Logger.Warn("lsm: dropped the damaged tail of a WAL whose synced length is unknown; it may have held acknowledged writes, the WAL is kept in lost/",
				"wal", e.path, "offset", e.validEnd, "bytes", e.size-e.validEnd, "damage", e.problem,
				"kept", manifest.LostPath(d.dir, manifest.FileName(manifest.FileKindLog, num)))
			keepWAL(num)
		case d.opts.WALRecoveryMode == WALRecoveryPointInTime:
			var later []string
			for _, n := range nums[i:] {
				keepWAL(n)
				if n != num {
					later = append(later, manifest.FilePath(d.dir, manifest.FileKindLog, n))
				}
			}
			d.opts.Logger.Warn("lsm: point-in-time WAL recovery: recovered the writes before the damage and dropped the rest, acknowledged writes included; the WALs are kept in lost/",
				"wal", e.path, "offset", e.validEnd, "bytesLost", e.size-e.validEnd, "laterWALsDropped", later,
				"damage", e.describe())
			return mem, maxSeq, keep, nil
		default:
			return nil, 0, nil, base.CorruptionErrorf("lsm: %s; Open refuses to drop it (see WALRecoveryMode)", e.describe())
		}
	}
	return mem, maxSeq, keep, nil
}

// logManifestRecovery logs what manifest recovery dropped or set aside.
func (d *DB) logManifestRecovery(info manifest.RecoveryInfo) {
	log := d.opts.Logger
	if info.TailBytes > 0 {
		if info.SyncedLengthKnown {
			log.Warn("lsm: dropped the torn tail of the manifest (bytes after its last completed sync: an edit that never took effect)",
				"manifest", info.Manifest, "offset", info.ValidLength, "bytes", info.TailBytes, "syncedLength", info.SyncedLength, "damage", info.TailProblem)
		} else {
			log.Warn("lsm: dropped the damaged tail of the manifest, whose synced length is unknown; tables it may have named are kept in lost/",
				"manifest", info.Manifest, "offset", info.ValidLength, "bytes", info.TailBytes, "damage", info.TailProblem)
		}
	}
	for _, num := range info.LostTables {
		log.Warn("lsm: moved a table no version references to lost/ (the manifest cannot prove it obsolete)",
			"table", manifest.FileName(manifest.FileKindTable, num),
			"kept", manifest.LostPath(d.dir, manifest.FileName(manifest.FileKindTable, num)))
	}
	if lost, err := manifest.ListLost(d.fs, d.dir); err == nil && len(lost) > 0 {
		log.Warn("lsm: the database directory holds files set aside in lost/; see the operations guide",
			"dir", manifest.LostPath(d.dir, ""), "files", len(lost))
	}
}

// isNotExist reports whether err says a file is missing.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

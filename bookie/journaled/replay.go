package journaled

import (
	"log/slog"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/cockroachdb/errors"
)

// ReplayStats counts what a replay did with the records it read.
type ReplayStats struct {
	// Records counts the records read (padding aside).
	Records int64
	// EntriesAdded counts the entries written to the storage;
	// EntriesHeld those it held already with the same bytes.
	EntriesAdded, EntriesHeld int64
	// MetaEntries counts the master keys, fences and explicit LACs
	// applied.
	MetaEntries int64
	// DeletedLedgerRecords counts the records skipped because their
	// ledger is deleted; UnknownLedgerRecords the entries, fences and
	// explicit LACs skipped because the storage does not know their
	// ledger (upstream's NoLedgerException); UnknownMetaEntries the
	// meta-entries of a kind this version does not know.
	DeletedLedgerRecords, UnknownLedgerRecords, UnknownMetaEntries int64
}

// Replayer applies a journal's records to a ledger storage by upstream's
// rules (BookieImpl.readJournal); see the package documentation. Open uses
// one; so does a migration that replays a BookKeeper bookie's journal.
type Replayer struct {
	s     *bookie.Storage
	log   *slog.Logger
	stats ReplayStats
}

// NewReplayer returns a Replayer into s; log receives a warning per
// unknown meta-entry (nil: discard).
func NewReplayer(s *bookie.Storage, log *slog.Logger) *Replayer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Replayer{s: s, log: log}
}

// Apply applies one record (journal.Open's and journal.Replay's callback).
func (r *Replayer) Apply(rec *journal.Record) error { return r.apply(rec) }

// Stats returns what the replay did so far.
func (r *Replayer) Stats() ReplayStats { return r.stats }

func (r *Replayer) apply(rec *journal.Record) error {
	r.stats.Records++
	if rec.Kind == journal.KindUnknownMeta {
		r.stats.UnknownMetaEntries++
		r.log.Warn("journal replay: skipping a meta-entry of an unknown kind", "ledgerId", rec.LedgerID, "entryId", rec.EntryID, "at", rec.Pos.String())
		return nil
	}
	info, known, err := r.s.LedgerInfo(rec.LedgerID)
	if err != nil {
		return errors.Wrapf(err, "journaled: replaying the %s record of ledger %d at %s", rec.Kind, rec.LedgerID, rec.Pos)
	}
	if known && !info.Exists {
		r.stats.DeletedLedgerRecords++
		return nil
	}
	if !known && rec.Kind != journal.KindMasterKey {
		// Upstream's rule: no master key for it, in the storage or earlier
		// in the replay (which would have made it known).
		r.stats.UnknownLedgerRecords++
		return nil
	}
	switch rec.Kind {
	case journal.KindEntry:
		var added bool
		added, err = r.s.ReplayEntry(rec.LedgerID, rec.EntryID, rec.Payload)
		if added {
			r.stats.EntriesAdded++
		} else if err == nil {
			r.stats.EntriesHeld++
		}
	case journal.KindMasterKey:
		err = r.s.ReplayMasterKey(rec.LedgerID, rec.Payload)
		r.stats.MetaEntries++
	case journal.KindFence:
		err = r.s.ReplayFence(rec.LedgerID)
		r.stats.MetaEntries++
	case journal.KindExplicitLAC:
		err = r.s.ReplayExplicitLAC(rec.LedgerID, rec.Payload)
		r.stats.MetaEntries++
	}
	if err != nil {
		return errors.Wrapf(err, "journaled: replaying the %s record of ledger %d at %s", rec.Kind, rec.LedgerID, rec.Pos)
	}
	return nil
}

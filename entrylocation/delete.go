package entrylocation

import (
	"slices"
	"time"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// Delete marks ledgerID deleted: from now on GetLastEntryInLedger reports
// it has no entry, while GetLocation still finds its locations until
// RemoveOffsetFromDeletedLedgers removes them. It does no I/O; the mark
// lives in memory only, as upstream's.
func (ix *Index) Delete(ledgerID int64) error {
	if err := ix.enter("Delete"); err != nil {
		return err
	}
	defer ix.exit()
	if err := checkLedgerID(ledgerID); err != nil {
		return err
	}
	ix.deletedMu.Lock()
	ix.deleted[ledgerID] = struct{}{}
	ix.numDeleted.Store(int64(len(ix.deleted)))
	ix.deletedMu.Unlock()
	return nil
}

func (ix *Index) isMarkedDeleted(ledgerID int64) bool {
	if ix.numDeleted.Load() == 0 {
		return false // the common case, without the lock's shared write
	}
	ix.deletedMu.RLock()
	_, ok := ix.deleted[ledgerID]
	ix.deletedMu.RUnlock()
	return ok
}

// markedLedgers returns the ledgers marked deleted, in ascending order.
func (ix *Index) markedLedgers() []int64 {
	ix.deletedMu.RLock()
	ledgers := make([]int64, 0, len(ix.deleted))
	for l := range ix.deleted {
		ledgers = append(ledgers, l)
	}
	ix.deletedMu.RUnlock()
	slices.Sort(ledgers)
	return ledgers
}

// RemoveOffsetFromDeletedLedgers deletes the locations of every ledger
// marked deleted when it starts, including locations added after the
// Delete: one range deletion [(L, 0), (L+1, 0)) per ledger, all in one
// synced batch (committed in chunks of Options.MaxBatchOps ledgers, as
// upstream). The ledgers are unmarked only once everything is committed;
// on failure they stay marked and the next call retries them. The range
// holds every key of the ledger: entry MaxInt64 and the negative entry
// ids (stored after it), which upstream's [(L, 0), (L, MaxInt64)) leaves
// behind (a deleted ledger's entry MaxInt64 then comes back when the
// ledger is written again).
func (ix *Index) RemoveOffsetFromDeletedLedgers() error {
	if err := ix.enter("RemoveOffsetFromDeletedLedgers"); err != nil {
		return err
	}
	defer ix.exit()
	ix.purgeMu.Lock()
	defer ix.purgeMu.Unlock()

	ledgers := ix.markedLedgers()
	if len(ledgers) == 0 {
		return nil
	}
	ix.logger.Info("Deleting indexes for ledgers", "ledgers", ledgers)
	start := time.Now()
	var b lsm.Batch
	for _, l := range ledgers {
		first, end := ledgerRange(l)
		b.DeleteRange(first[:], end[:])
		if b.Count() >= ix.opts.MaxBatchOps {
			if err := ix.commit(&b, "RemoveOffsetFromDeletedLedgers"); err != nil {
				return ix.purgeFailed(ledgers, err)
			}
			b.Reset()
		}
	}
	if err := ix.commit(&b, "RemoveOffsetFromDeletedLedgers"); err != nil {
		return ix.purgeFailed(ledgers, err)
	}

	ix.deletedMu.Lock()
	for _, l := range ledgers {
		delete(ix.deleted, l)
	}
	ix.numDeleted.Store(int64(len(ix.deleted)))
	ix.deletedMu.Unlock()
	ix.logger.Info("Deleted indexes from ledgers", "count", len(ledgers), "duration", time.Since(start))
	return nil
}

func (ix *Index) purgeFailed(ledgers []int64, err error) error {
	ix.logger.Warn("Failed to delete indexes of deleted ledgers; they stay marked for the next attempt",
		"count", len(ledgers), "err", err)
	return errors.Wrapf(err, "entrylocation: deleting the locations of %d ledgers", len(ledgers))
}

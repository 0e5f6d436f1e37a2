package bookie

import (
	"math"
	"slices"
)

// ActiveLedgersInRange returns, in ascending order, the ledgers of every
// directory that exist with first <= id < last (upstream's
// getActiveLedgersInRange). As upstream, first <= 0 with last MaxInt64
// lists every ledger, MaxInt64 included.
func (s *Storage) ActiveLedgersInRange(first, last int64) ([]int64, error) {
	all := first <= 0 && last == math.MaxInt64
	var ids []int64
	for _, d := range s.dirs {
		if err := d.enter("ActiveLedgersInRange"); err != nil {
			return nil, err
		}
		d.ledgers.each(func(id int64, exists bool) {
			if exists && (all || first <= id && id < last) {
				ids = append(ids, id)
			}
		})
		d.exit()
	}
	slices.Sort(ids)
	return ids, nil
}

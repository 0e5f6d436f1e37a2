package bookie

import (
	"github.com/cockroachdb/errors"
)

// Routing: which directory holds a ledger. Under ondisk.RouteModulo (a
// list that never changed) ledger L is in directory L mod n, computed.
// Under ondisk.RouteRecorded (after an expansion) the ledgers indexes are
// the record: routes maps every ledger one of them holds to its
// directory, built at open; a ledger none holds goes to L mod n. The map
// never changes while the storage is open: a new ledger's directory is L
// mod n both now and after a restart (when its directory's ledgers index
// holds it), and a ledger purged meanwhile keeps its directory until the
// restart, where it has none to keep.

// buildRoutes maps every ledger the directories' ledgers indexes hold to
// its directory. A ledger that exists in two directories is an error; a
// deleted one awaiting its purge yields to one that exists.
func buildRoutes(dirs []*DirStorage) (map[int64]int32, error) {
	routes := map[int64]int32{}
	exists := map[int64]bool{}
	for i, d := range dirs {
		var err error
		d.ledgers.each(func(id int64, e bool) {
			j, seen := routes[id]
			switch {
			case !seen || (e && !exists[id]):
				routes[id], exists[id] = int32(i), e
			case e && exists[id] && err == nil:
				err = errors.Newf("bookie: ledger %d exists in two directories, %s and %s: refusing to guess which holds it",
					id, dirs[j].ledgerDir, d.ledgerDir)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return routes, nil
}

// misplacedLedger returns the smallest ledger whose directory is not the
// one modulo routing gives it: proof that the directory list changed while
// the storage routed by modulo (before the layout was recorded).
func misplacedLedger(dirs []*DirStorage) (ledgerID int64, in, want int, found bool) {
	n := int64(len(dirs))
	for i, d := range dirs {
		d.ledgers.each(func(id int64, _ bool) {
			if id%n != int64(i) && (!found || id < ledgerID) {
				ledgerID, in, want, found = id, i, int(id%n), true
			}
		})
	}
	return ledgerID, in, want, found
}

// each calls fn for every ledger the index holds, with whether it exists.
func (li *ledgerIndex) each(fn func(id int64, exists bool)) {
	li.mu.RLock()
	defer li.mu.RUnlock()
	for id, info := range li.ledgers {
		fn(id, info.Exists)
	}
}

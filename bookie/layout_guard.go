package bookie

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cockroachdb/errors"
)

// The directory layout guard (upstream's cookies, checkDirectoryStructure).
// At the first start the storage records the directory list, an instance
// id and the routing in current/LAYOUT of every ledger and index
// directory. At each start it compares the configured list with the
// recorded one:
//
//   - the same list: it opens. A directory whose LAYOUT is missing must be
//     empty (a first start interrupted while the copies were written);
//     one that holds data without it was wiped or swapped: refused.
//   - only index directories changed (a moved index, a checkpoint restored
//     elsewhere): accepted and recorded with a note; routing depends on the
//     ledger directories and on what each ledgers index holds. An index
//     directory without its LAYOUT is accepted for the same reason.
//   - a changed list of ledger directories: refused, naming both lists and
//     allowStorageExpansion, unless AllowStorageExpansion is set; then
//     every recorded ledger directory must still be configured (removing
//     one loses its ledgers), and the new ones must be empty. The routing becomes routeRecorded:
//     existing ledgers stay where their ledgers index is, new ledgers go
//     to L mod the new count, so they use the new directories too.
//
// Copies of another instance, or that do not decode, are refused. Of
// copies of different generations (a crash while an expansion rewrote
// them), the highest is the truth and the others are rewritten.
//
// A storage that predates the layout records (no LAYOUT anywhere) records
// its current list at its first start with this version: its data was
// placed by L mod n, which Open verifies against the ledgers indexes
// (checkModuloRouting), so a list changed before then is caught too.

// layoutPlan is what checkLayout decided: the layout to open with, and
// the directories whose LAYOUT must be (re)written.
type layoutPlan struct {
	layout *layout
	write  []string
	// prev is the layout before an expansion, restored by undo if the
	// open fails (so that a failed start leaves the recorded list as it
	// was); nil otherwise.
	prev *layout
	// first: no directory had a layout; undo removes the copies written.
	first bool
	// note, if not empty, is logged once the storage is open.
	note string
}

// configuredPairs returns the configured directory pairs, absolute.
func configuredPairs(r *resolved) ([]dirPair, error) {
	pairs := make([]dirPair, len(r.LedgerDirs))
	for i := range r.LedgerDirs {
		l, err := filepath.Abs(r.LedgerDirs[i])
		if err != nil {
			return nil, errors.Wrapf(err, "bookie: ledger directory %s", r.LedgerDirs[i])
		}
		x, err := filepath.Abs(r.IndexDirs[i])
		if err != nil {
			return nil, errors.Wrapf(err, "bookie: index directory %s", r.IndexDirs[i])
		}
		pairs[i] = dirPair{ledger: l, index: x}
	}
	return pairs, nil
}

// layoutDirs returns where a pair's LAYOUT copies go: its ledger and its
// index directory's current/ (one when they are the same).
func (p dirPair) layoutDirs() []string {
	l, x := filepath.Join(p.ledger, "current"), filepath.Join(p.index, "current")
	if l == x {
		return []string{l}
	}
	return []string{l, x}
}

func formatPairs(pairs []dirPair) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.ledger)
		if p.index != p.ledger {
			fmt.Fprintf(&b, " (index %s)", p.index)
		}
	}
	return "[" + b.String() + "]"
}

// checkLayout reads the LAYOUT copies of the configured directories and
// decides, by the rules above, whether the storage may open.
func checkLayout(r *resolved) (*layoutPlan, error) {
	pairs, err := configuredPairs(r)
	if err != nil {
		return nil, err
	}
	type copyOf struct {
		dir string
		l   *layout
	}
	var found []copyOf
	var missing []string
	for _, p := range pairs {
		for _, dir := range p.layoutDirs() {
			l, err := readLayout(r.FS, dir)
			if err != nil {
				return nil, errors.Wrap(err, "bookie: refusing to open: restore the file from a copy in another directory of this bookie (every directory holds the same)")
			}
			if l == nil {
				missing = append(missing, dir)
			} else {
				found = append(found, copyOf{dir, l})
			}
		}
	}
	if len(found) == 0 {
		l := &layout{generation: 1, routing: routeModulo, dirs: pairs}
		if _, err := rand.Read(l.instance[:]); err != nil {
			return nil, errors.Wrap(err, "bookie: choosing an instance id")
		}
		return &layoutPlan{layout: l, write: missing, first: true, note: "recorded the directory layout (first start)"}, nil
	}
	rec := found[0].l
	for _, c := range found[1:] {
		if c.l.instance != found[0].l.instance {
			return nil, errors.Newf("bookie: refusing to open: %s belongs to another bookie instance (%x) than %s (%x): "+
				"a directory of another bookie was configured or mounted here", c.dir, c.l.instance, found[0].dir, found[0].l.instance)
		}
		if c.l.generation > rec.generation {
			rec = c.l
		}
	}
	plan := &layoutPlan{layout: rec}
	for _, c := range found {
		if c.l.generation != rec.generation {
			plan.write = append(plan.write, c.dir) // an expansion interrupted while it rewrote the copies
		}
	}
	// A recorded ledger directory without its copy must be empty. An index
	// directory without one is a restored checkpoint or a moved index
	// (docs/operations.md, "Backup and restore"): its copy is written.
	var recordedLedgerDirs []string
	for _, p := range rec.dirs {
		recordedLedgerDirs = append(recordedLedgerDirs, p.layoutDirs()[0])
	}
	for _, dir := range missing {
		if !slices.Contains(recordedLedgerDirs, dir) {
			if !slices.ContainsFunc(pairs, func(p dirPair) bool { return p.layoutDirs()[0] == dir }) {
				plan.write = append(plan.write, dir) // an index directory
			}
			continue
		}
		empty, err := isEmptyDir(r, dir)
		if err != nil {
			return nil, err
		}
		if !empty {
			return nil, errors.Newf("bookie: refusing to open: %s holds data but no %s, while the other directories of this bookie have one: "+
				"was it wiped, replaced or swapped? Its ledgers would read as missing", dir, layoutFileName)
		}
		plan.write = append(plan.write, dir)
	}
	if slices.Equal(pairs, rec.dirs) {
		return plan, nil
	}
	if slices.Equal(ledgerDirs(pairs), ledgerDirs(rec.dirs)) {
		// Only index directories changed: routing depends on the ledger
		// directories and on what each ledgers index holds, so a moved
		// index, or a checkpoint restored elsewhere, keeps every ledger
		// where it is. Recorded, with a note naming the change.
		var moved []string
		for i, p := range pairs {
			if p.index != rec.dirs[i].index {
				moved = append(moved, fmt.Sprintf("%s: %s -> %s", p.ledger, rec.dirs[i].index, p.index))
			}
		}
		next := *rec
		next.generation++
		next.dirs = pairs
		plan = &layoutPlan{layout: &next, prev: rec,
			note: "index directories changed (a moved index or a restored checkpoint; each must be its ledger directory's): " + strings.Join(moved, ", ")}
		for _, p := range pairs {
			plan.write = append(plan.write, p.layoutDirs()...)
		}
		return plan, nil
	}

	// A changed list.
	if !r.AllowStorageExpansion {
		return nil, errors.Newf("bookie: refusing to open: the directories changed: %s were recorded at the first start, %s are configured. "+
			"Restore the recorded list (ledgerDirectories, indexDirectories), or, to add empty directories, set allowStorageExpansion=true: "+
			"existing ledgers stay where they are, new ones use every directory", formatPairs(rec.dirs), formatPairs(pairs))
	}
	configured := ledgerDirs(pairs)
	for _, old := range rec.dirs {
		if !slices.Contains(configured, old.ledger) {
			return nil, errors.Newf("bookie: refusing to open: recorded directory %s is no longer configured (%s): "+
				"allowStorageExpansion only adds directories; removing one would lose its ledgers", formatPairs([]dirPair{old}), formatPairs(pairs))
		}
	}
	recorded := ledgerDirs(rec.dirs)
	var added []dirPair
	for _, p := range pairs {
		if slices.Contains(recorded, p.ledger) {
			continue
		}
		added = append(added, p)
		for _, dir := range p.layoutDirs() {
			if l, _ := readLayout(r.FS, dir); l != nil {
				return nil, errors.Newf("bookie: refusing to open: new directory %s already has a %s of this bookie for another list: "+
					"a new directory must be empty", dir, layoutFileName)
			}
			empty, err := isEmptyDir(r, dir)
			if err != nil {
				return nil, err
			}
			if !empty {
				return nil, errors.Newf("bookie: refusing to open: new directory %s is not empty: allowStorageExpansion adds only empty directories", dir)
			}
		}
	}
	next := &layout{instance: rec.instance, generation: rec.generation + 1, routing: routeRecorded, dirs: pairs}
	plan = &layoutPlan{layout: next, prev: rec, note: fmt.Sprintf("storage expanded (allowStorageExpansion): added %s; existing ledgers stay in their directories, new ledgers use all %d",
		formatPairs(added), len(pairs))}
	for _, p := range pairs {
		plan.write = append(plan.write, p.layoutDirs()...)
	}
	return plan, nil
}

// ledgerDirs returns the ledger directories of pairs.
func ledgerDirs(pairs []dirPair) []string {
	dirs := make([]string, len(pairs))
	for i, p := range pairs {
		dirs[i] = p.ledger
	}
	return dirs
}

// isEmptyDir reports whether dir is missing or holds nothing but a
// temporary LAYOUT of an interrupted write.
func isEmptyDir(r *resolved, dir string) (bool, error) {
	names, err := r.FS.List(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, errors.Wrapf(err, "bookie: listing %s", dir)
	}
	for _, n := range names {
		if n != layoutFileName+".tmp" {
			return false, nil
		}
	}
	return true, nil
}

// writeLayouts writes the plan's layout into the directories it lists.
func (p *layoutPlan) writeLayouts(r *resolved) error {
	for _, dir := range p.write {
		if err := writeLayout(r.FS, dir, p.layout); err != nil {
			return err
		}
	}
	return nil
}

// undo restores, after a failed open, what writeLayouts changed for a
// first start or an expansion: the previous copies in the recorded
// directories, none elsewhere. So a refused first start (ledgers outside
// their modulo directory) records nothing. Best effort: a crash before it
// leaves the new list recorded, which the next start with it accepts.
func (p *layoutPlan) undo(r *resolved) {
	if p.first {
		for _, dir := range p.write {
			_ = r.FS.Remove(filepath.Join(dir, layoutFileName))
		}
		return
	}
	if p.prev == nil {
		return
	}
	var recorded []string
	for _, d := range p.prev.dirs {
		recorded = append(recorded, d.layoutDirs()...)
	}
	for _, dir := range p.write {
		if slices.Contains(recorded, dir) {
			_ = writeLayout(r.FS, dir, p.prev)
		} else {
			_ = r.FS.Remove(filepath.Join(dir, layoutFileName))
		}
	}
}

// recordRouting switches a storage whose ledgers are not where modulo
// routing puts them (its list changed before the layout was recorded) to
// routing by its ledgers indexes, and records that in every directory.
func (p *layoutPlan) recordRouting(r *resolved) error {
	next := *p.layout
	next.generation++
	next.routing = routeRecorded
	p.layout = &next
	p.write = nil
	for _, d := range next.dirs {
		p.write = append(p.write, d.layoutDirs()...)
	}
	p.note = "ledgers found outside their modulo directory (the list changed before it was recorded): routing by the ledgers indexes from now on (allowStorageExpansion)"
	return p.writeLayouts(r)
}

package bookie

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
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
//     one loses its ledgers), and the new ones must be empty. The routing becomes RouteRecorded:
//     existing ledgers stay where their ledgers index is, new ledgers go
//     to L mod the new count, so they use the new directories too.
//
// Copies of another instance, or that do not decode, are refused. Of
// copies of different generations (a crash while an expansion rewrote
// them), the highest is the truth and the others are rewritten.
//
// Each copy records its own place (format version 2: its pair's position
// and its role, ledger or index directory). A copy configured at another
// place (two directories swapped) is refused whatever the lists say; when
// every ledger directory is at a new path but proves its place, the
// refusal says to run bookie-index relocate (bookie/relocate), which
// records the new paths. Copies of format version 1 are read and
// rewritten with their place once the list matches.
//
// A storage that predates the layout records (no LAYOUT anywhere) records
// its current list at its first start with this version: its data was
// placed by L mod n, which Open verifies against the ledgers indexes
// (checkModuloRouting), so a list changed before then is caught too.

// layoutPlan is what checkLayout decided: the layout to open with, and
// the directories whose LAYOUT must be (re)written.
type layoutPlan struct {
	layout *ondisk.Layout
	write  []string
	// prev is the layout before an expansion, restored by undo if the
	// open fails (so that a failed start leaves the recorded list as it
	// was); nil otherwise.
	prev *ondisk.Layout
	// first: no directory had a layout; undo removes the copies written.
	first bool
	// note, if not empty, is logged once the storage is open.
	note string
}

// unreadableLayout is the refusal of a LAYOUT copy that could not be
// read (err names the file, and the offset where it does not decode). A
// copy cannot be replaced by another directory's: each records the place
// of the directory that holds it (pair and role), which the guard checks.
// An index directory separate from its ledger directory may lose its copy
// (the start writes it again, as for a restored checkpoint); a ledger
// directory's is the proof that its data is this bookie's at that place.
func unreadableLayout(err error, place ondisk.Identity) error {
	if !errors.Is(err, ondisk.ErrLayoutCorrupt) {
		return errors.Wrap(err, "bookie: refusing to open")
	}
	if place.Role == ondisk.RoleIndex {
		return errors.Wrapf(err, "bookie: refusing to open: the %s of %s does not decode: remove it and start again "+
			"(the start writes a new one, as for a restored checkpoint)", ondisk.LayoutFileName, place)
	}
	return errors.Wrapf(err, "bookie: refusing to open: the %s of %s does not decode: restore it from a backup of this directory "+
		"(a copy from another directory records that directory's place and is refused)", ondisk.LayoutFileName, place)
}

// configuredPairs returns the configured directory pairs, absolute.
func configuredPairs(r *resolved) ([]ondisk.DirPair, error) {
	pairs := make([]ondisk.DirPair, len(r.LedgerDirs))
	for i := range r.LedgerDirs {
		l, err := filepath.Abs(r.LedgerDirs[i])
		if err != nil {
			return nil, errors.Wrapf(err, "bookie: ledger directory %s", r.LedgerDirs[i])
		}
		x, err := filepath.Abs(r.IndexDirs[i])
		if err != nil {
			return nil, errors.Wrapf(err, "bookie: index directory %s", r.IndexDirs[i])
		}
		pairs[i] = ondisk.DirPair{Ledger: l, Index: x}
	}
	return pairs, nil
}

// copyOf is the LAYOUT copy read in a configured directory.
type copyOf struct {
	dir string
	l   *ondisk.Layout
}

// checkLayout reads the LAYOUT copies of the configured directories and
// decides, by the rules above, whether the storage may open.
func checkLayout(r *resolved) (*layoutPlan, error) {
	pairs, err := configuredPairs(r)
	if err != nil {
		return nil, err
	}
	configured := ondisk.Identities(pairs)
	var found []copyOf
	var missing []string
	for _, p := range pairs {
		for _, dir := range p.LayoutDirs() {
			l, err := ondisk.ReadLayout(r.FS, dir)
			if err != nil {
				return nil, unreadableLayout(err, configured[dir])
			}
			if l == nil {
				missing = append(missing, dir)
			} else {
				found = append(found, copyOf{dir, l})
			}
		}
	}
	if len(found) == 0 {
		l := &ondisk.Layout{Generation: 1, Routing: ondisk.RouteModulo, Dirs: pairs}
		if _, err := rand.Read(l.Instance[:]); err != nil {
			return nil, errors.Wrap(err, "bookie: choosing an instance id")
		}
		return &layoutPlan{layout: l, write: missing, first: true, note: "recorded the directory layout (first start)"}, nil
	}
	rec := found[0].l
	for _, c := range found[1:] {
		if c.l.Instance != found[0].l.Instance {
			return nil, errors.Newf("bookie: refusing to open: %s belongs to another bookie instance (%x) than %s (%x): "+
				"a directory of another bookie was configured or mounted here", c.dir, c.l.Instance, found[0].dir, found[0].l.Instance)
		}
		if c.l.Generation > rec.Generation {
			rec = c.l
		}
	}
	// Each copy that records its place must be configured there: two
	// directories swapped (or an index directory given to another pair)
	// keep their paths' look but not their places.
	for _, c := range found {
		if err := ondisk.CheckPlace(c.dir, c.l, configured[c.dir]); err != nil {
			return nil, errors.Wrap(err, "bookie: refusing to open")
		}
	}
	plan := &layoutPlan{layout: rec}
	for _, c := range found {
		if c.l.Generation != rec.Generation || c.l.Self.Role == ondisk.RoleUnknown {
			// An expansion interrupted while it rewrote the copies, or a
			// copy of format version 1, rewritten with its place.
			plan.write = append(plan.write, c.dir)
		}
	}
	// A recorded ledger directory without its copy must be empty. An index
	// directory without one is a restored checkpoint or a moved index
	// (docs/operations.md, "Backup and restore"): its copy is written.
	var recordedLedgerDirs []string
	for _, p := range rec.Dirs {
		recordedLedgerDirs = append(recordedLedgerDirs, p.LayoutDirs()[0])
	}
	for _, dir := range missing {
		if !slices.Contains(recordedLedgerDirs, dir) {
			if !slices.ContainsFunc(pairs, func(p ondisk.DirPair) bool { return p.LayoutDirs()[0] == dir }) {
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
				"was it wiped, replaced or swapped? Its ledgers would read as missing", dir, ondisk.LayoutFileName)
		}
		plan.write = append(plan.write, dir)
	}
	if slices.Equal(pairs, rec.Dirs) {
		return plan, nil
	}
	if slices.Equal(ledgerDirs(pairs), ledgerDirs(rec.Dirs)) {
		// Only index directories changed: routing depends on the ledger
		// directories and on what each ledgers index holds, so a moved
		// index, or a checkpoint restored elsewhere, keeps every ledger
		// where it is. Recorded, with a note naming the change.
		var moved []string
		for i, p := range pairs {
			if p.Index != rec.Dirs[i].Index {
				moved = append(moved, fmt.Sprintf("%s: %s -> %s", p.Ledger, rec.Dirs[i].Index, p.Index))
			}
		}
		next := *rec
		next.Generation++
		next.Dirs = pairs
		plan = &layoutPlan{layout: &next, prev: rec,
			note: "index directories changed (a moved index or a restored checkpoint; each must be its ledger directory's): " + strings.Join(moved, ", ")}
		for _, p := range pairs {
			plan.write = append(plan.write, p.LayoutDirs()...)
		}
		return plan, nil
	}

	// Moved: as many pairs as recorded, and every configured ledger
	// directory's copy proves it is the one recorded at its place.
	if len(pairs) == len(rec.Dirs) && provesEveryLedgerDir(pairs, found, configured) {
		return nil, errors.Newf("bookie: refusing to open: the directories moved: %s were recorded, %s are configured, and each configured ledger "+
			"directory holds this bookie's %s for its place. If they were moved on purpose (a backup restored elsewhere, a new mount point), "+
			"record the new paths with `%s` while the bookie is stopped; otherwise configure the recorded paths",
			ondisk.FormatPairs(rec.Dirs), ondisk.FormatPairs(pairs), ondisk.LayoutFileName, r.RelocateCommand)
	}

	// A changed list.
	if !r.AllowStorageExpansion {
		return nil, errors.Newf("bookie: refusing to open: the directories changed: %s were recorded at the first start, %s are configured. "+
			"Restore the recorded list (ledgerDirectories, indexDirectories), or, to add empty directories, set allowStorageExpansion=true: "+
			"existing ledgers stay where they are, new ones use every directory (directories moved to new paths are recorded by "+
			"`%s`)", ondisk.FormatPairs(rec.Dirs), ondisk.FormatPairs(pairs), r.RelocateCommand)
	}
	configuredLedgerDirs := ledgerDirs(pairs)
	for _, old := range rec.Dirs {
		if !slices.Contains(configuredLedgerDirs, old.Ledger) {
			return nil, errors.Newf("bookie: refusing to open: recorded directory %s is no longer configured (%s): "+
				"allowStorageExpansion only adds directories; removing one would lose its ledgers", ondisk.FormatPairs([]ondisk.DirPair{old}), ondisk.FormatPairs(pairs))
		}
	}
	recorded := ledgerDirs(rec.Dirs)
	var added []ondisk.DirPair
	for _, p := range pairs {
		if slices.Contains(recorded, p.Ledger) {
			continue
		}
		added = append(added, p)
		for _, dir := range p.LayoutDirs() {
			if l, _ := ondisk.ReadLayout(r.FS, dir); l != nil {
				return nil, errors.Newf("bookie: refusing to open: new directory %s already has a %s of this bookie for another list: "+
					"a new directory must be empty", dir, ondisk.LayoutFileName)
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
	next := &ondisk.Layout{Instance: rec.Instance, Generation: rec.Generation + 1, Routing: ondisk.RouteRecorded, Dirs: pairs}
	plan = &layoutPlan{layout: next, prev: rec, note: fmt.Sprintf("storage expanded (allowStorageExpansion): added %s; existing ledgers stay in their directories, new ledgers use all %d",
		ondisk.FormatPairs(added), len(pairs))}
	for _, p := range pairs {
		plan.write = append(plan.write, p.LayoutDirs()...)
	}
	return plan, nil
}

// provesEveryLedgerDir reports whether every configured ledger directory
// has a copy that records its place (format version 2), which is its
// configured place (CheckPlace has checked that).
func provesEveryLedgerDir(pairs []ondisk.DirPair, found []copyOf, configured map[string]ondisk.Identity) bool {
	for _, p := range pairs {
		dir := p.LayoutDirs()[0]
		if !slices.ContainsFunc(found, func(c copyOf) bool { return c.dir == dir && c.l.Self.Role != ondisk.RoleUnknown }) {
			return false
		}
	}
	return true
}

// ledgerDirs returns the ledger directories of pairs.
func ledgerDirs(pairs []ondisk.DirPair) []string {
	dirs := make([]string, len(pairs))
	for i, p := range pairs {
		dirs[i] = p.Ledger
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
		if n != ondisk.LayoutFileName+".tmp" {
			return false, nil
		}
	}
	return true, nil
}

// writeLayouts writes the plan's layout into the directories it lists.
func (p *layoutPlan) writeLayouts(r *resolved) error {
	for _, dir := range p.write {
		if err := ondisk.WriteLayout(r.FS, dir, p.layout); err != nil {
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
			_ = r.FS.Remove(filepath.Join(dir, ondisk.LayoutFileName))
		}
		return
	}
	if p.prev == nil {
		return
	}
	var recorded []string
	for _, d := range p.prev.Dirs {
		recorded = append(recorded, d.LayoutDirs()...)
	}
	for _, dir := range p.write {
		if slices.Contains(recorded, dir) {
			_ = ondisk.WriteLayout(r.FS, dir, p.prev)
		} else {
			_ = r.FS.Remove(filepath.Join(dir, ondisk.LayoutFileName))
		}
	}
}

// recordRouting switches a storage whose ledgers are not where modulo
// routing puts them (its list changed before the layout was recorded) to
// routing by its ledgers indexes, and records that in every directory.
func (p *layoutPlan) recordRouting(r *resolved) error {
	next := *p.layout
	next.Generation++
	next.Routing = ondisk.RouteRecorded
	p.layout = &next
	p.write = nil
	for _, d := range next.Dirs {
		p.write = append(p.write, d.LayoutDirs()...)
	}
	p.note = "ledgers found outside their modulo directory (the list changed before it was recorded): routing by the ledgers indexes from now on (allowStorageExpansion)"
	return p.writeLayouts(r)
}

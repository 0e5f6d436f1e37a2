package ondisk

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Layout is the directory layout record (upstream's cookie): the list of
// (ledger, index) directory pairs the storage was last opened with, an
// instance id shared by all of them, and how ledgers are routed to
// directories. Every directory holds a copy in current/LAYOUT, so that a
// changed list (a directory added, removed, reordered, or swapped for
// another bookie's) is noticed before a ledger is looked up in the wrong
// place. The storage's layout guard (package bookie, layout_guard.go) has
// the rules; docs/format.md the bytes.
type Layout struct {
	// Instance is chosen at random at the first start.
	Instance [16]byte
	// Generation is 1 at the first start and grows by one at each change
	// of the list (an expansion): of copies that disagree after a crash
	// in the middle of rewriting them, the highest is the truth.
	Generation uint64
	Routing    Routing
	Dirs       []DirPair
	// Self is the copy's own place in Dirs (format version 2): which
	// directory of which pair holds it, whatever path it is mounted at
	// now. A version 1 copy does not say (Role RoleUnknown).
	Self Identity
}

// Identity is a LAYOUT copy's own place in its list: the position of its
// pair and its role in the pair. With the instance id it proves which
// directory of which bookie a directory is, without trusting its path:
// the layout guard refuses a directory whose copy names another place
// (two directories swapped, another pair's index directory), and
// relocate records new paths only for directories that prove their place.
type Identity struct {
	Position int
	Role     Role
}

// Role says which directory of its pair holds a copy.
type Role byte

const (
	// RoleUnknown: a version 1 copy, which does not record its place.
	RoleUnknown Role = 0
	// RoleLedger: the pair's ledger directory (its index directory is
	// another).
	RoleLedger Role = 1
	// RoleIndex: the pair's index directory.
	RoleIndex Role = 2
	// RoleLedgerAndIndex: the pair's one directory, ledger and index.
	RoleLedgerAndIndex Role = 3
)

// String describes an identity as messages name it: "the ledger
// directory of pair 2".
func (id Identity) String() string {
	role := "a directory (version 1 copy: its place is not recorded)"
	switch id.Role {
	case RoleLedger:
		role = "the ledger directory"
	case RoleIndex:
		role = "the index directory"
	case RoleLedgerAndIndex:
		role = "the ledger and index directory"
	}
	if id.Role == RoleUnknown {
		return role
	}
	return fmt.Sprintf("%s of pair %d", role, id.Position+1)
}

// Identities returns the place of every LAYOUT copy of pairs, by the
// directory that holds it (a pair's current/ directories).
func Identities(pairs []DirPair) map[string]Identity {
	ids := make(map[string]Identity, 2*len(pairs))
	for i, p := range pairs {
		dirs := p.LayoutDirs()
		if len(dirs) == 1 {
			ids[dirs[0]] = Identity{Position: i, Role: RoleLedgerAndIndex}
			continue
		}
		ids[dirs[0]] = Identity{Position: i, Role: RoleLedger}
		ids[dirs[1]] = Identity{Position: i, Role: RoleIndex}
	}
	return ids
}

// DirPair is a ledger directory and its index directory, as configured,
// made absolute.
type DirPair struct {
	Ledger, Index string
}

// LayoutDirs returns where a pair's LAYOUT copies go: its ledger and its
// index directory's current/ (one when they are the same).
func (p DirPair) LayoutDirs() []string {
	l, x := filepath.Join(p.Ledger, "current"), filepath.Join(p.Index, "current")
	if l == x {
		return []string{l}
	}
	return []string{l, x}
}

// FormatPairs prints a directory list as the layout guard's messages
// name it: "[/a, /b (index /x)]".
func FormatPairs(pairs []DirPair) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Ledger)
		if p.Index != p.Ledger {
			fmt.Fprintf(&b, " (index %s)", p.Index)
		}
	}
	return "[" + b.String() + "]"
}

// Routing says how a ledger's directory is found.
type Routing byte

const (
	// RouteModulo: ledger L is in directory L mod n. The list has never
	// changed since the first start (or since the version that did not
	// record it): every ledger was placed so.
	RouteModulo Routing = 0
	// RouteRecorded: ledger L is in the directory whose ledgers index
	// holds it; a ledger none holds (a new one) goes to L mod n. Set by
	// the first expansion.
	RouteRecorded Routing = 1
)

// Record layout of current/LAYOUT (persisted, do not change):
//
//	+----------+---------+-------------+------------+---------+---------+-------------------+----------+------+---------+
//	| magic    | version | instance id | generation | routing | count   | count dir pairs   | position | role | crc32c  |
//	| 8 bytes  | 1 byte  | 16 bytes    | BE uint64  | 1 byte  | uvarint | (see below)       | uvarint  | 1 B  | BE u32  |
//	+----------+---------+-------------+------------+---------+---------+-------------------+----------+------+---------+
//	dir pair: | uvarint len | ledger directory | uvarint len | index directory |
//
// Version 2 added position and role (Layout.Self); a version 1 copy ends
// after the pairs and is still read. The CRC-32C (Castagnoli) covers every
// byte before it.
const (
	// LayoutFileName is the record's file in a directory's current/.
	LayoutFileName = "LAYOUT"
	layoutMagic    = "BKLAYOUT"
	// layoutVersion is what EncodeLayout writes for a copy that knows its
	// place; layoutVersionNoSelf the version before (read, and written
	// only for a Layout whose Self is unknown: tests, fuzzing).
	layoutVersion       = 2
	layoutVersionNoSelf = 1
	// layoutMaxSize bounds what DecodeLayout accepts (a corrupt length
	// must not make it allocate gigabytes).
	layoutMaxSize = 1 << 20
)

var layoutCRC = crc32.MakeTable(crc32.Castagnoli)

// EncodeLayout returns the bytes of a LAYOUT file: version 2, or version
// 1 when l.Self is unknown.
func EncodeLayout(l *Layout) []byte {
	version := byte(layoutVersion)
	if l.Self.Role == RoleUnknown {
		version = layoutVersionNoSelf
	}
	b := append([]byte(layoutMagic), version)
	b = append(b, l.Instance[:]...)
	b = binary.BigEndian.AppendUint64(b, l.Generation)
	b = append(b, byte(l.Routing))
	b = binary.AppendUvarint(b, uint64(len(l.Dirs)))
	for _, d := range l.Dirs {
		b = binary.AppendUvarint(b, uint64(len(d.Ledger)))
		b = append(b, d.Ledger...)
		b = binary.AppendUvarint(b, uint64(len(d.Index)))
		b = append(b, d.Index...)
	}
	if version == layoutVersion {
		b = binary.AppendUvarint(b, uint64(l.Self.Position))
		b = append(b, byte(l.Self.Role))
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, layoutCRC))
}

// DecodeLayout parses a LAYOUT file's bytes; its errors say what is wrong
// and at which offset.
func DecodeLayout(b []byte) (*Layout, error) {
	const fixed = len(layoutMagic) + 1 + 16 + 8 + 1
	if len(b) < fixed+1+4 {
		return nil, errors.Newf("%d bytes, too short for a layout record", len(b))
	}
	if len(b) > layoutMaxSize {
		return nil, errors.Newf("%d bytes, more than a layout record may hold (%d)", len(b), layoutMaxSize)
	}
	if string(b[:len(layoutMagic)]) != layoutMagic {
		return nil, errors.Newf("offset 0: magic %q, want %q", b[:len(layoutMagic)], layoutMagic)
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if got := crc32.Checksum(body, layoutCRC); got != sum {
		return nil, errors.Newf("offset %d: checksum %#08x, the bytes before it sum to %#08x", len(body), sum, got)
	}
	version := b[len(layoutMagic)]
	if version != layoutVersion && version != layoutVersionNoSelf {
		return nil, errors.Newf("offset %d: version %d, this build reads %d and %d", len(layoutMagic), version, layoutVersionNoSelf, layoutVersion)
	}
	l := &Layout{}
	off := len(layoutMagic) + 1
	copy(l.Instance[:], b[off:off+16])
	off += 16
	l.Generation = binary.BigEndian.Uint64(b[off:])
	off += 8
	l.Routing = Routing(b[off])
	if l.Routing != RouteModulo && l.Routing != RouteRecorded {
		return nil, errors.Newf("offset %d: unknown routing %d", off, b[off])
	}
	off++
	uvarint := func(what string) (uint64, error) {
		n, k := binary.Uvarint(body[off:])
		if k <= 0 {
			return 0, errors.Newf("offset %d: bad %s", off, what)
		}
		off += k
		return n, nil
	}
	str := func(what string) (string, error) {
		n, err := uvarint(what + " length")
		if err != nil {
			return "", err
		}
		if n == 0 || n > uint64(len(body)-off) {
			return "", errors.Newf("offset %d: %s length %d, %d bytes left", off, what, n, len(body)-off)
		}
		s := string(body[off : off+int(n)])
		off += int(n)
		return s, nil
	}
	count, err := uvarint("directory count")
	if err != nil {
		return nil, err
	}
	if count == 0 || count > uint64(len(body)-off)/4 {
		return nil, errors.Newf("offset %d: directory count %d does not fit %d bytes", off, count, len(body)-off)
	}
	for range count {
		var d DirPair
		if d.Ledger, err = str("ledger directory"); err != nil {
			return nil, err
		}
		if d.Index, err = str("index directory"); err != nil {
			return nil, err
		}
		l.Dirs = append(l.Dirs, d)
	}
	if version == layoutVersion {
		at := off
		pos, err := uvarint("position")
		if err != nil {
			return nil, err
		}
		if pos >= count {
			return nil, errors.Newf("offset %d: position %d, but there are %d directory pairs", at, pos, count)
		}
		if off >= len(body) {
			return nil, errors.Newf("offset %d: no role", off)
		}
		l.Self = Identity{Position: int(pos), Role: Role(body[off])}
		same := l.Dirs[pos].Ledger == l.Dirs[pos].Index
		switch l.Self.Role {
		case RoleLedger, RoleIndex:
			if same {
				return nil, errors.Newf("offset %d: role %d, but pair %d has one directory (role %d)", off, body[off], pos, RoleLedgerAndIndex)
			}
		case RoleLedgerAndIndex:
			if !same {
				return nil, errors.Newf("offset %d: role %d, but pair %d has two directories", off, body[off], pos)
			}
		default:
			return nil, errors.Newf("offset %d: unknown role %d", off, body[off])
		}
		off++
	}
	if off != len(body) {
		return nil, errors.Newf("offset %d: %d bytes after the last directory", off, len(body)-off)
	}
	return l, nil
}

// ReadLayout reads dir/LAYOUT; (nil, nil) if there is none. A file that
// does not decode is an error matching ErrLayoutCorrupt.
func ReadLayout(fs vfs.FS, dir string) (*Layout, error) {
	path := filepath.Join(dir, LayoutFileName)
	data, err := vfs.ReadFile(fs, path, layoutMaxSize)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, vfs.ErrFileTooLarge):
		return nil, errors.Wrapf(ErrLayoutCorrupt, "bookie: directory layout %v, more than a layout record may hold", err)
	case err != nil:
		return nil, errors.Wrapf(err, "bookie: reading the directory layout %s", path)
	}
	l, err := DecodeLayout(data)
	if err != nil {
		return nil, errors.Wrapf(ErrLayoutCorrupt, "bookie: directory layout %s: %v", path, err)
	}
	return l, nil
}

// ErrLayoutCorrupt marks a LAYOUT file that does not decode.
var ErrLayoutCorrupt = errors.New("corrupt directory layout")

// WriteLayout replaces dir/LAYOUT durably: a temporary file, synced,
// renamed over it, the directory synced. The copy records dir's place in
// l.Dirs as its Self (dir must be one of them).
func WriteLayout(fs vfs.FS, dir string, l *Layout) error {
	path := filepath.Join(dir, LayoutFileName)
	self, ok := Identities(l.Dirs)[dir]
	if !ok {
		return errors.Newf("bookie: writing the directory layout %s: %s is not a directory of %s", path, dir, FormatPairs(l.Dirs))
	}
	copied := *l
	copied.Self = self
	l = &copied
	err := fs.MkdirAll(dir, 0o755)
	if err == nil {
		err = vfs.ReplaceFile(fs, path, path+".tmp", EncodeLayout(l))
	}
	return errors.Wrapf(err, "bookie: writing the directory layout %s", path)
}

// fits reports whether a copy recorded at id may be configured at want:
// the same pair, and a directory that held that pair's ledger data if it
// is configured as its ledger directory (else its index data). A pair's
// index may move out of its ledger directory or into it (a checkpoint
// restored elsewhere, docs/operations.md): its ledger directory stays the
// ledger directory.
func (id Identity) fits(want Identity) bool {
	if id.Position != want.Position {
		return false
	}
	if want.Role&RoleLedger != 0 {
		return id.Role&RoleLedger != 0
	}
	return id.Role&RoleIndex != 0
}

// CheckPlace checks that the copy l read in dir records dir's configured
// place (want: its entry in Identities of the configured pairs), or one
// that fits it (Identity.fits). A copy of
// format version 1 records none and passes. The error names the
// directory, where the copy says it belongs and what it was recorded as.
func CheckPlace(dir string, l *Layout, want Identity) error {
	if l.Self.Role == RoleUnknown || l.Self.fits(want) {
		return nil
	}
	recordedAt := "?"
	if l.Self.Position < len(l.Dirs) {
		for d, id := range Identities(l.Dirs) {
			if id == l.Self {
				recordedAt = d
			}
		}
	}
	configuredAs := want.String()
	if want.Role == RoleUnknown {
		configuredAs = "none of this list's directories"
	}
	return errors.Wrapf(ErrMisplaced, "%s is %s of this bookie (recorded at %s), but it is configured as %s: "+
		"two directories swapped, or one mounted where another belongs? Configure each directory at its place",
		dir, l.Self, recordedAt, configuredAs)
}

// ErrMisplaced marks a directory whose LAYOUT copy records another place
// than the one it is configured at.
var ErrMisplaced = errors.New("directory configured at another directory's place")

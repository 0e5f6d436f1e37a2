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
//	+----------+---------+-------------+------------+---------+---------+-------------------+---------+
//	| magic    | version | instance id | generation | routing | count   | count dir pairs   | crc32c  |
//	| 8 bytes  | 1 byte  | 16 bytes    | BE uint64  | 1 byte  | uvarint | (see below)       | BE u32  |
//	+----------+---------+-------------+------------+---------+---------+-------------------+---------+
//	dir pair: | uvarint len | ledger directory | uvarint len | index directory |
//
// The CRC-32C (Castagnoli) covers every byte before it.
const (
	// LayoutFileName is the record's file in a directory's current/.
	LayoutFileName = "LAYOUT"
	layoutMagic    = "BKLAYOUT"
	layoutVersion  = 1
	// layoutMaxSize bounds what DecodeLayout accepts (a corrupt length
	// must not make it allocate gigabytes).
	layoutMaxSize = 1 << 20
)

var layoutCRC = crc32.MakeTable(crc32.Castagnoli)

// EncodeLayout returns the bytes of a LAYOUT file.
func EncodeLayout(l *Layout) []byte {
	b := append([]byte(layoutMagic), layoutVersion)
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
	if v := b[len(layoutMagic)]; v != layoutVersion {
		return nil, errors.Newf("offset %d: version %d, this build reads %d", len(layoutMagic), v, layoutVersion)
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
	if off != len(body) {
		return nil, errors.Newf("offset %d: %d bytes after the last directory", off, len(body)-off)
	}
	return l, nil
}

// ReadLayout reads dir/LAYOUT; (nil, nil) if there is none. A file that
// does not decode is an error matching ErrLayoutCorrupt.
func ReadLayout(fs vfs.FS, dir string) (*Layout, error) {
	path := filepath.Join(dir, LayoutFileName)
	f, err := fs.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, errors.Wrapf(err, "bookie: reading the directory layout %s", path)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, errors.Wrapf(err, "bookie: reading the directory layout %s", path)
	}
	if size > layoutMaxSize {
		return nil, errors.Newf("bookie: directory layout %s: %d bytes, more than a layout record may hold", path, size)
	}
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); n != len(data) {
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
// renamed over it, the directory synced.
func WriteLayout(fs vfs.FS, dir string, l *Layout) error {
	path := filepath.Join(dir, LayoutFileName)
	err := fs.MkdirAll(dir, 0o755)
	if err == nil {
		err = vfs.ReplaceFile(fs, path, path+".tmp", EncodeLayout(l))
	}
	return errors.Wrapf(err, "bookie: writing the directory layout %s", path)
}

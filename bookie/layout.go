package bookie

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// layout is the directory layout record (upstream's cookie): the list of
// (ledger, index) directory pairs the storage was last opened with, an
// instance id shared by all of them, and how ledgers are routed to
// directories. Every directory holds a copy in current/LAYOUT, so that a
// changed list (a directory added, removed, reordered, or swapped for
// another bookie's) is noticed before a ledger is looked up in the wrong
// place. See layout_guard.go for the rules, docs/format.md for the bytes.
type layout struct {
	// instance is chosen at random at the first start.
	instance [16]byte
	// generation is 1 at the first start and grows by one at each change
	// of the list (an expansion): of copies that disagree after a crash
	// in the middle of rewriting them, the highest is the truth.
	generation uint64
	routing    routing
	dirs       []dirPair
}

// dirPair is a ledger directory and its index directory, as configured,
// made absolute.
type dirPair struct {
	ledger, index string
}

// routing says how a ledger's directory is found.
type routing byte

const (
	// routeModulo: ledger L is in directory L mod n. The list has never
	// changed since the first start (or since the version that did not
	// record it): every ledger was placed so.
	routeModulo routing = 0
	// routeRecorded: ledger L is in the directory whose ledgers index
	// holds it; a ledger none holds (a new one) goes to L mod n. Set by
	// the first expansion.
	routeRecorded routing = 1
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
	layoutFileName = "LAYOUT"
	layoutMagic    = "BKLAYOUT"
	layoutVersion  = 1
	// layoutMaxSize bounds what decodeLayout accepts (a corrupt length
	// must not make it allocate gigabytes).
	layoutMaxSize = 1 << 20
)

var layoutCRC = crc32.MakeTable(crc32.Castagnoli)

func encodeLayout(l *layout) []byte {
	b := append([]byte(layoutMagic), layoutVersion)
	b = append(b, l.instance[:]...)
	b = binary.BigEndian.AppendUint64(b, l.generation)
	b = append(b, byte(l.routing))
	b = binary.AppendUvarint(b, uint64(len(l.dirs)))
	for _, d := range l.dirs {
		b = binary.AppendUvarint(b, uint64(len(d.ledger)))
		b = append(b, d.ledger...)
		b = binary.AppendUvarint(b, uint64(len(d.index)))
		b = append(b, d.index...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, layoutCRC))
}

// decodeLayout parses a LAYOUT file's bytes; its errors say what is wrong
// and at which offset.
func decodeLayout(b []byte) (*layout, error) {
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
	l := &layout{}
	off := len(layoutMagic) + 1
	copy(l.instance[:], b[off:off+16])
	off += 16
	l.generation = binary.BigEndian.Uint64(b[off:])
	off += 8
	l.routing = routing(b[off])
	if l.routing != routeModulo && l.routing != routeRecorded {
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
		var d dirPair
		if d.ledger, err = str("ledger directory"); err != nil {
			return nil, err
		}
		if d.index, err = str("index directory"); err != nil {
			return nil, err
		}
		l.dirs = append(l.dirs, d)
	}
	if off != len(body) {
		return nil, errors.Newf("offset %d: %d bytes after the last directory", off, len(body)-off)
	}
	return l, nil
}

// readLayout reads dir/LAYOUT; (nil, nil) if there is none.
func readLayout(fs vfs.FS, dir string) (*layout, error) {
	path := filepath.Join(dir, layoutFileName)
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
	l, err := decodeLayout(data)
	if err != nil {
		return nil, errors.Wrapf(errLayoutCorrupt, "bookie: directory layout %s: %v", path, err)
	}
	return l, nil
}

// errLayoutCorrupt marks a LAYOUT file that does not decode.
var errLayoutCorrupt = errors.New("corrupt directory layout")

// writeLayout replaces dir/LAYOUT durably: a temporary file, synced,
// renamed over it, the directory synced.
func writeLayout(fs vfs.FS, dir string, l *layout) error {
	path := filepath.Join(dir, layoutFileName)
	tmp := path + ".tmp"
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return errors.Wrapf(err, "bookie: writing the directory layout %s", path)
	}
	f, err := fs.Create(tmp)
	if err != nil {
		return errors.Wrapf(err, "bookie: writing the directory layout %s", path)
	}
	_, err = f.Write(encodeLayout(l))
	if err == nil {
		err = f.Sync()
	}
	err = errors.CombineErrors(err, f.Close())
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(fs, dir)
	}
	return errors.Wrapf(err, "bookie: writing the directory layout %s", path)
}

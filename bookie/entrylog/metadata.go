package entrylog

import (
	"cmp"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Persisted constants of the ledgers map (do not change).
const (
	// metadataMagic opens every ledgers map.
	metadataMagic = "BIEM"
	// metadataVersion is the map's version field.
	metadataVersion = 1
	// metadataFixedSize is the map without its ledgers: magic, version,
	// log id, log size, count and CRC.
	metadataFixedSize = 4 + 4 + 8 + 8 + 4 + 4
	// metadataLedgerSize is one ledger's part: id and bytes.
	metadataLedgerSize = 16
	// metadataSuffix names a log's ledgers map: "1f.log" has
	// "1f.ledgers".
	metadataSuffix = ".ledgers"
)

// LedgerUsage is what one ledger occupies in one log: the bytes of its
// records (RecordOverhead included).
type LedgerUsage struct {
	LedgerID int64
	Bytes    int64
}

// Metadata is the usage of one log (upstream's EntryLogMetadata): the
// ledgers it holds and the bytes of each. The garbage collector keeps
// the ledgers that still exist; their bytes are the log's live part.
type Metadata struct {
	// LogID is the log's id.
	LogID int64
	// Size is the log's size the map covers (the end of its last record,
	// the header included).
	Size int64
	// Ledgers are ascending by id, each with at least one byte.
	Ledgers []LedgerUsage
}

// RemainingBytes returns the bytes of the ledgers in the map.
func (m *Metadata) RemainingBytes() int64 {
	var n int64
	for _, u := range m.Ledgers {
		n += u.Bytes
	}
	return n
}

// Usage returns the live fraction of the log: its ledgers' bytes over the
// bytes of all its records (upstream's getUsage). A log with no records
// has usage 0.
func (m *Metadata) Usage() float64 {
	total := m.Size - HeaderSize
	if total <= 0 {
		return 0
	}
	return float64(m.RemainingBytes()) / float64(total)
}

// MetadataFileName returns the file name of log id's ledgers map.
func MetadataFileName(id int64) string {
	return strings.TrimSuffix(LogFileName(id), ".log") + metadataSuffix
}

// metadataFromUsage builds a log's Metadata from per-ledger byte counts.
func metadataFromUsage(id, size int64, usage map[int64]int64) *Metadata {
	m := &Metadata{LogID: id, Size: size, Ledgers: make([]LedgerUsage, 0, len(usage))}
	for ledger, n := range usage {
		m.Ledgers = append(m.Ledgers, LedgerUsage{LedgerID: ledger, Bytes: n})
	}
	slices.SortFunc(m.Ledgers, func(a, b LedgerUsage) int { return cmp.Compare(a.LedgerID, b.LedgerID) })
	return m
}

// EncodeMetadata returns the persisted ledgers map of m (docs/format.md):
//
//	magic "BIEM" | version u32 | log id u64 | log size u64 | count u32 |
//	count × (ledger id i64, bytes u64) | CRC-32C u32 of all before it
func EncodeMetadata(m *Metadata) []byte {
	b := make([]byte, 0, metadataFixedSize+metadataLedgerSize*len(m.Ledgers))
	b = append(b, metadataMagic...)
	b = binary.BigEndian.AppendUint32(b, metadataVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(m.LogID))
	b = binary.BigEndian.AppendUint64(b, uint64(m.Size))
	b = binary.BigEndian.AppendUint32(b, uint32(len(m.Ledgers)))
	for _, u := range m.Ledgers {
		b = binary.BigEndian.AppendUint64(b, uint64(u.LedgerID))
		b = binary.BigEndian.AppendUint64(b, uint64(u.Bytes))
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// DecodeMetadata decodes a ledgers map. Every inconsistency is an error
// matching ErrCorruption that names the offset: a bad magic, version or
// checksum, a count that does not match the length, ledger ids not
// ascending or negative, a ledger of no bytes, bytes past the log's size.
func DecodeMetadata(b []byte) (*Metadata, error) {
	if len(b) < metadataFixedSize {
		return nil, errors.Wrapf(ErrCorruption, "ledgers map of %d bytes, shorter than the %d of an empty one", len(b), metadataFixedSize)
	}
	if string(b[:4]) != metadataMagic {
		return nil, errors.Wrapf(ErrCorruption, "ledgers map: bad magic %q at offset 0, want %q", b[:4], metadataMagic)
	}
	body := b[:len(b)-4]
	if want, got := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(b[len(body):]); want != got {
		return nil, errors.Wrapf(ErrCorruption, "ledgers map: checksum %#08x at offset %d, want %#08x", got, len(body), want)
	}
	if v := binary.BigEndian.Uint32(b[4:]); v != metadataVersion {
		return nil, errors.Wrapf(ErrCorruption, "ledgers map: unknown version %d at offset 4 (this build reads %d)", v, metadataVersion)
	}
	m := &Metadata{LogID: int64(binary.BigEndian.Uint64(b[8:])), Size: int64(binary.BigEndian.Uint64(b[16:]))}
	if m.LogID < 0 || m.LogID > MaxLogID {
		return nil, errors.Wrapf(ErrCorruption, "ledgers map: log id %d at offset 8 out of range", m.LogID)
	}
	if m.Size < HeaderSize || m.Size > MaxLogSizeLimit+MaxPayloadSize+RecordOverhead {
		return nil, errors.Wrapf(ErrCorruption, "ledgers map: log size %d at offset 16 out of range", m.Size)
	}
	count := int64(binary.BigEndian.Uint32(b[24:]))
	if want := int64(len(b)-metadataFixedSize) / metadataLedgerSize; count != want || int64(len(b)-metadataFixedSize)%metadataLedgerSize != 0 {
		return nil, errors.Wrapf(ErrCorruption, "ledgers map: count %d at offset 24 does not match its %d bytes", count, len(b))
	}
	m.Ledgers = make([]LedgerUsage, count)
	total := int64(0)
	for i := range m.Ledgers {
		off := 28 + i*metadataLedgerSize
		u := LedgerUsage{LedgerID: int64(binary.BigEndian.Uint64(b[off:])), Bytes: int64(binary.BigEndian.Uint64(b[off+8:]))}
		if u.LedgerID < 0 || i > 0 && u.LedgerID <= m.Ledgers[i-1].LedgerID {
			return nil, errors.Wrapf(ErrCorruption, "ledgers map: ledger id %d at offset %d is negative or not ascending", u.LedgerID, off)
		}
		if u.Bytes < minRecordSize || u.Bytes > m.Size-HeaderSize-total {
			return nil, errors.Wrapf(ErrCorruption, "ledgers map: ledger %d has %d bytes at offset %d, out of range for a log of %d", u.LedgerID, u.Bytes, off+8, m.Size)
		}
		total += u.Bytes
		m.Ledgers[i] = u
	}
	return m, nil
}

// writeMetadata persists a log's ledgers map. A failure is only logged:
// the garbage collector rebuilds a missing map by scanning.
func (l *Logger) writeMetadata(m *Metadata) {
	if l.opts.ReadOnly {
		return
	}
	path := filepath.Join(l.dir, MetadataFileName(m.LogID))
	if err := replaceFile(l.fs, path, EncodeMetadata(m)); err != nil {
		l.log.Warn("writing the ledgers map of an entry log failed; garbage collection will scan the log instead", "id", m.LogID, "path", path, "err", err)
	}
}

// Metadata returns the usage of log id, which must not be the log being
// written: for a log rotated by this Logger, what it counted while
// writing (the ledgers map is persisted now, off the write path); else
// from the ledgers map, or, when the map is missing or does not decode,
// by scanning the log (then the map is written for next time). A scan
// stops at a torn tail; the map covers the records before it. Damage that
// no interrupted write explains (ExamineTail) is an error matching
// ErrCorruption: what follows it cannot be counted. The caller owns the
// result.
func (l *Logger) Metadata(id int64) (*Metadata, error) {
	l.mu.Lock()
	if cur := l.mu.cur; cur != nil && cur.id == id {
		l.mu.Unlock()
		return nil, errors.Wrapf(ErrInvalidArgument, "entrylog: log %#x is being written; it has no metadata yet", id)
	}
	m, ok := l.mu.rotated[id]
	delete(l.mu.rotated, id)
	l.mu.Unlock()
	if ok {
		l.writeMetadata(m)
		return m, nil
	}
	path := filepath.Join(l.dir, MetadataFileName(id))
	m, err := ReadMetadata(l.fs, path)
	if err == nil && m.LogID == id {
		return m, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		l.log.Warn("ledgers map of an entry log is unreadable; scanning the log", "id", id, "path", path, "err", err)
	} else if err == nil {
		l.log.Warn("ledgers map names another log; scanning the log", "id", id, "path", path, "names", m.LogID)
	}
	if m, ok := l.bkMetadata(id); ok {
		l.writeMetadata(m)
		return m, nil
	}
	usage := map[int64]int64{}
	res, err := Scan(l.fs, l.LogPath(id), func(rec *Record) error {
		usage[rec.LedgerID] += rec.Size // either format's record
		return nil
	})
	if err != nil {
		return nil, errors.Wrapf(err, "entrylog: rebuilding the ledgers map of log %#x", id)
	}
	if res.Tail != nil {
		// Records after damage are not counted: a map without their
		// ledgers would let the collector remove a log the index still
		// reads from. Only a tail an interrupted write explains (a
		// record cut short, zeros) is known to hold no record.
		shape, why, err := ExamineTail(l.fs, l.LogPath(id), res.ValidEnd)
		if err != nil {
			return nil, errors.Wrapf(err, "entrylog: rebuilding the ledgers map of log %#x", id)
		}
		if shape == TailDamaged {
			return nil, errors.Wrapf(ErrCorruption, "entrylog: %s: the ledgers after offset %d cannot be counted: %s", l.LogPath(id), res.ValidEnd, why)
		}
	}
	m = metadataFromUsage(id, res.ValidEnd, usage)
	l.writeMetadata(m)
	return m, nil
}

// ReadMetadata reads and decodes the ledgers map at path (a missing file
// is an error matching os.ErrNotExist; one that does not decode, an error
// matching ErrCorruption naming the file and the offset).
func ReadMetadata(fs vfs.FS, path string) (*Metadata, error) {
	b, err := vfs.ReadFile(fs, path, metadataFixedSize+metadataLedgerSize*int64(MaxLogSizeLimit/RecordOverhead))
	if errors.Is(err, vfs.ErrFileTooLarge) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.Wrapf(ErrCorruption, "entrylog: ledgers map %v", err)
	}
	if err != nil {
		return nil, errors.Wrap(err, "entrylog")
	}
	m, err := DecodeMetadata(b)
	if err != nil {
		return nil, errors.Wrapf(err, "entrylog: %s", path)
	}
	return m, nil
}

// RemoveLog removes log id and its ledgers map, durably (the directory is
// synced). It refuses the log being written and logs not yet created.
// Reads of the log in progress finish first; later reads of it fail with
// an error matching ErrBadLocation, which a reader answers by looking the
// entry up again (the garbage collector removes a log only once the index
// names none of its records).
func (l *Logger) RemoveLog(id int64) error {
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return errors.Wrap(ErrClosed, "entrylog: RemoveLog")
	}
	if cur := l.mu.cur; cur != nil && cur.id == id || id >= l.mu.nextID {
		l.mu.Unlock()
		return errors.Wrapf(ErrInvalidArgument, "entrylog: log %#x is being written or does not exist yet; it cannot be removed", id)
	}
	delete(l.mu.rotated, id)
	l.mu.Unlock()

	// Under readMu, so that no reader opens the file again meanwhile.
	l.readMu.Lock()
	defer l.readMu.Unlock()
	if r, ok := l.readers[id]; ok {
		delete(l.readers, id)
		r.mu.Lock()
		r.removed = true
		_ = r.f.Close()
		r.mu.Unlock()
	}
	path := l.LogPath(id)
	if err := l.fs.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Wrapf(err, "entrylog: removing %s", path)
	}
	meta := filepath.Join(l.dir, MetadataFileName(id))
	if err := l.fs.Remove(meta); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Wrapf(err, "entrylog: removing %s", meta)
	}
	if err := vfs.SyncDir(l.fs, l.dir); err != nil {
		return errors.Wrap(err, "entrylog")
	}
	l.log.Info("removed entry log", "id", id, "path", path)
	return nil
}

// RemoveOrphanMetadata removes the ledgers maps whose log is gone (a
// crash between the removal of a log and that of its map).
func (l *Logger) RemoveOrphanMetadata() error {
	if l.opts.ReadOnly {
		return errors.Wrap(ErrInvalidArgument, "entrylog: RemoveOrphanMetadata on logs open read-only")
	}
	names, err := l.fs.List(l.dir)
	if err != nil {
		return errors.Wrapf(err, "entrylog: listing %s", l.dir)
	}
	logs := map[string]bool{}
	for _, name := range names {
		if _, ok := ParseLogFileName(name); ok {
			logs[strings.TrimSuffix(name, ".log")] = true
		}
	}
	for _, name := range names {
		base, ok := strings.CutSuffix(name, metadataSuffix)
		if !ok || logs[base] {
			continue
		}
		if _, ok := ParseLogFileName(base + ".log"); !ok {
			continue
		}
		if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return errors.Wrapf(err, "entrylog: removing the orphan ledgers map %s", name)
		}
	}
	return nil
}

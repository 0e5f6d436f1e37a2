package entrylog

import (
	"encoding/binary"
	"io"
	"path/filepath"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Format is the format of one entry log, told by its header's magic.
type Format int

const (
	// FormatBIEL is this package's format ("BIEL"): every new log.
	FormatBIEL Format = iota + 1
	// FormatBKLO is upstream BookKeeper's DefaultEntryLogger format
	// ("BKLO"): logs a BookKeeper bookie wrote, read but never written.
	FormatBKLO
)

func (f Format) String() string {
	switch f {
	case FormatBIEL:
		return "BIEL"
	case FormatBKLO:
		return "BKLO"
	}
	return "unknown"
}

// BookKeeper's DefaultEntryLogger format (persisted by upstream; see
// docs/format.md). All integers are big-endian.
const (
	bkMagic = "BKLO"
	// bkHeaderV0 logs have no ledgers map; bkHeaderV1 logs may have one.
	bkHeaderV0 = 0
	bkHeaderV1 = 1
	// bkHeaderUsed is the header's content: magic, version, ledgers-map
	// offset (i64), ledgers count (i32); zeros follow up to HeaderSize.
	bkHeaderUsed = 20
	// BKEntryHeaderSize is the start of a BookKeeper entry: its ledger id
	// and entry id. A read returns the bytes after it.
	BKEntryHeaderSize = 16
	// bkLedgersMapLedgerID and bkLedgersMapEntryID mark the records of
	// the ledgers map.
	bkLedgersMapLedgerID = -1
	bkLedgersMapEntryID  = -2
	// bkLedgersMapBatchHeader is what a ledgers-map record holds before its
	// pairs: ledger id -1, entry id -2, the batch's count (i32).
	bkLedgersMapBatchHeader = 20
	// bkLedgersMapPairSize is one (ledger id, bytes) pair.
	bkLedgersMapPairSize = 16
	// BKLedgersMapMaxBatch is the most pairs upstream writes in one
	// ledgers-map record.
	BKLedgersMapMaxBatch = 10000
)

// ErrNoLedgersMap: a BookKeeper log without a usable ledgers map (a header
// of version 0, a log that was current when its bookie stopped, a map of
// no ledger): its ledgers are found by scanning it, as upstream does.
var ErrNoLedgersMap = errors.New("entry log has no ledgers map")

// BKHeader is the decoded header of a BookKeeper entry log. BookKeeper's
// header does not name its log: the id is the file name's.
type BKHeader struct {
	Version int32
	// LedgersMapOffset is where the ledgers map starts; 0 when the log
	// has none (it was not rotated).
	LedgersMapOffset int64
	// LedgersCount is the number of ledgers in the map.
	LedgersCount int32
}

func decodeBKHeader(h []byte) (BKHeader, error) {
	if len(h) < bkHeaderUsed {
		return BKHeader{}, errors.Wrapf(ErrCorruption, "header of %d bytes, want %d", len(h), HeaderSize)
	}
	if string(h[:4]) != bkMagic {
		return BKHeader{}, errors.Wrapf(ErrCorruption, "bad magic %q, want %q", h[:4], bkMagic)
	}
	hd := BKHeader{
		Version:          int32(binary.BigEndian.Uint32(h[4:])),
		LedgersMapOffset: int64(binary.BigEndian.Uint64(h[8:])),
		LedgersCount:     int32(binary.BigEndian.Uint32(h[16:])),
	}
	if hd.Version != bkHeaderV0 && hd.Version != bkHeaderV1 {
		return hd, errors.Wrapf(ErrCorruption, "unknown BookKeeper header version %d (this build reads %d and %d)", hd.Version, bkHeaderV0, bkHeaderV1)
	}
	return hd, nil
}

// detectFormat reads the header of the log at path, open as f, and
// returns its format. id is the log's id from its file name; a BIEL
// header must name the same. A header that is neither is an error
// matching ErrCorruption.
func detectFormat(f io.ReaderAt, path string, id int64) (Format, error) {
	h := make([]byte, headerUsed)
	if err := readFull(f, h, 0); err != nil {
		return 0, errors.Wrapf(err, "entrylog: %s: reading the header", path)
	}
	switch string(h[:4]) {
	case bkMagic:
		if _, err := decodeBKHeader(h); err != nil {
			return 0, errors.Wrapf(err, "entrylog: %s", path)
		}
		return FormatBKLO, nil
	case headerMagic:
		got, err := decodeHeader(h)
		if err != nil {
			return 0, errors.Wrapf(err, "entrylog: %s", path)
		}
		if id >= 0 && got != id {
			return 0, errors.Wrapf(ErrCorruption, "entrylog: %s: the header names log %#x", path, got)
		}
		return FormatBIEL, nil
	}
	return 0, errors.Wrapf(ErrCorruption, "entrylog: %s: bad magic %q (neither bookie-index's %q nor BookKeeper's %q)", path, h[:4], headerMagic, bkMagic)
}

// DetectFormat returns the format of the log at path (nil fs: the
// operating system's).
func DetectFormat(fs vfs.FS, path string) (Format, error) {
	if fs == nil {
		fs = vfs.Default
	}
	f, err := fs.Open(path)
	if err != nil {
		return 0, errors.Wrapf(err, "entrylog: opening %s", path)
	}
	defer f.Close()
	id, ok := ParseLogFileName(filepath.Base(path))
	if !ok {
		id = -1
	}
	return detectFormat(f, path, id)
}

// BKLedgerSize is one pair of a BookKeeper ledgers map: the bytes a ledger
// has in the log, counting each record's size field (upstream's
// EntryLogMetadata).
type BKLedgerSize struct {
	LedgerID, Size int64
}

// ReadBKLedgersMap reads the ledgers map at the end of the BookKeeper log
// at path (nil fs: the operating system's), as upstream's
// extractEntryLogMetadataFromIndex: the pairs in file order, a ledger's
// sizes summed when it appears twice. A log without one gives an error
// matching ErrNoLedgersMap (scan it instead); a damaged map, one matching
// ErrCorruption naming the offset. Upstream writes the map, then the
// header's offset and count, without a sync between them, so a crash can
// leave a header naming a map that is not all there: like upstream, a
// caller scans the log after either error; the scan skips what there is of
// the map.
func ReadBKLedgersMap(fs vfs.FS, path string) ([]BKLedgerSize, error) {
	if fs == nil {
		fs = vfs.Default
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "entrylog: opening %s", path)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, errors.Wrapf(err, "entrylog: examining %s", path)
	}
	m, err := readBKLedgersMap(f, size)
	if err != nil {
		return nil, errors.Wrapf(err, "entrylog: %s: ledgers map", path)
	}
	return m, nil
}

func readBKLedgersMap(f io.ReaderAt, size int64) ([]BKLedgerSize, error) {
	h := make([]byte, bkHeaderUsed)
	if err := readFull(f, h, 0); err != nil {
		return nil, err
	}
	hd, err := decodeBKHeader(h)
	if err != nil {
		return nil, err
	}
	switch {
	case hd.Version < bkHeaderV1:
		return nil, errors.Wrapf(ErrNoLedgersMap, "header version %d", hd.Version)
	case hd.LedgersMapOffset == 0:
		return nil, errors.Wrap(ErrNoLedgersMap, "the header has no map offset (the log was not rotated)")
	case hd.LedgersCount == 0:
		return nil, errors.Wrap(ErrNoLedgersMap, "the header counts no ledger")
	case hd.LedgersMapOffset < HeaderSize || hd.LedgersMapOffset >= size:
		return nil, errors.Wrapf(ErrCorruption, "map offset %d outside the records [%d, %d)", hd.LedgersMapOffset, HeaderSize, size)
	case hd.LedgersCount < 0:
		return nil, errors.Wrapf(ErrCorruption, "ledgers count %d", hd.LedgersCount)
	}
	var out []BKLedgerSize
	index := map[int64]int{}
	var batch []byte
	// DirectEntryLogger pads its map to a 4 KiB boundary and may have
	// preallocated the log: its map ends at a size of 0 or less, as its
	// own reader (LogMetadata.read) takes it.
	direct := isDirectLog(f, size)
	for off := hd.LedgersMapOffset; off < size; {
		var sb [SizeFieldSize]byte
		if err := readFull(f, sb[:], off); err != nil {
			return nil, errors.Wrapf(err, "batch at offset %d", off)
		}
		n := int64(int32(binary.BigEndian.Uint32(sb[:])))
		if direct && n <= 0 {
			break
		}
		maxBatch := int64(bkLedgersMapBatchHeader + bkLedgersMapPairSize*BKLedgersMapMaxBatch)
		if n < bkLedgersMapBatchHeader || n > maxBatch || off+SizeFieldSize+n > size {
			return nil, errors.Wrapf(ErrCorruption, "batch at offset %d: size %d out of range [%d, %d] or past the end (%d)", off, n, bkLedgersMapBatchHeader, min(maxBatch, size-off-SizeFieldSize), size)
		}
		batch = append(batch[:0], make([]byte, n)...)
		if err := readFull(f, batch, off+SizeFieldSize); err != nil {
			return nil, errors.Wrapf(err, "batch at offset %d", off)
		}
		lid, eid := int64(binary.BigEndian.Uint64(batch)), int64(binary.BigEndian.Uint64(batch[8:]))
		count := int64(int32(binary.BigEndian.Uint32(batch[16:])))
		if lid != bkLedgersMapLedgerID || eid != bkLedgersMapEntryID {
			return nil, errors.Wrapf(ErrCorruption, "batch at offset %d: a record of ledger %d entry %d, not of the map (%d, %d)", off, lid, eid, bkLedgersMapLedgerID, bkLedgersMapEntryID)
		}
		if count < 0 || bkLedgersMapBatchHeader+bkLedgersMapPairSize*count != n {
			return nil, errors.Wrapf(ErrCorruption, "batch at offset %d: %d ledgers in a %d-byte record", off, count, n)
		}
		for p := batch[bkLedgersMapBatchHeader:]; len(p) > 0; p = p[bkLedgersMapPairSize:] {
			ls := BKLedgerSize{LedgerID: int64(binary.BigEndian.Uint64(p)), Size: int64(binary.BigEndian.Uint64(p[8:]))}
			if ls.LedgerID < 0 || ls.Size < 0 {
				return nil, errors.Wrapf(ErrCorruption, "batch at offset %d: ledger %d with %d bytes", off, ls.LedgerID, ls.Size)
			}
			if i, ok := index[ls.LedgerID]; ok {
				out[i].Size += ls.Size
				continue
			}
			index[ls.LedgerID] = len(out)
			out = append(out, ls)
		}
		off += SizeFieldSize + n
	}
	if int64(len(out)) != int64(hd.LedgersCount) {
		return nil, errors.Wrapf(ErrCorruption, "the header counts %d ledgers, the map from offset %d has %d", hd.LedgersCount, hd.LedgersMapOffset, len(out))
	}
	return out, nil
}

// minRecordSize is the smallest record of either format: a BookKeeper
// entry with nothing after its ids (ours take RecordOverhead).
const minRecordSize = SizeFieldSize + BKEntryHeaderSize

// bkMetadata returns the usage of BookKeeper log id from its ledgers map,
// as upstream's garbage collector reads it first; false when the log is
// not BookKeeper's or its map is missing or damaged (then it is scanned).
func (l *Logger) bkMetadata(id int64) (*Metadata, bool) {
	path := l.LogPath(id)
	if f, err := DetectFormat(l.fs, path); err != nil || f != FormatBKLO {
		return nil, false
	}
	pairs, err := ReadBKLedgersMap(l.fs, path)
	if err != nil {
		if !errors.Is(err, ErrNoLedgersMap) {
			l.log.Warn("ledgers map of a BookKeeper entry log is unreadable; scanning the log", "id", id, "err", err)
		}
		return nil, false
	}
	st, err := l.fs.Stat(path)
	if err != nil {
		return nil, false
	}
	usage := make(map[int64]int64, len(pairs))
	for _, p := range pairs {
		usage[p.LedgerID] = p.Size
	}
	return metadataFromUsage(id, st.Size(), usage), true
}

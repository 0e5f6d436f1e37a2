package rocksdb

// VersionEdit tags (db/version_edit.h).
const (
	tagComparator         = 1
	tagLogNumber          = 2
	tagNextFileNumber     = 3
	tagLastSequence       = 4
	tagCompactCursor      = 5
	tagDeletedFile        = 6
	tagNewFile            = 7
	tagPrevLogNumber      = 9
	tagMinLogNumberToKeep = 10
	tagNewFile2           = 100
	tagNewFile3           = 102
	tagNewFile4           = 103
	tagColumnFamily       = 200
	tagColumnFamilyAdd    = 201
	tagColumnFamilyDrop   = 202
	tagMaxColumnFamily    = 203
	tagInAtomicGroup      = 300
	tagBlobFileAddition   = 400
	tagBlobFileGarbage    = 401
	// tagSafeIgnoreMask marks tags from newer releases that a reader may
	// skip; their payload is one length-prefixed string (DB id, WAL
	// additions and deletions, full_history_ts_low).
	tagSafeIgnoreMask = 1 << 13
)

// Custom field tags of a kNewFile4 record.
const (
	fieldTerminate         = 1
	fieldNonSafeIgnoreMask = 1 << 6
	fieldPathID            = fieldNonSafeIgnoreMask + 1
	maxLevels              = 64
)

// fileMeta is a table as the MANIFEST describes it.
type fileMeta struct {
	level       int
	num         uint64
	size        uint64
	smallest    []byte // internal key
	largest     []byte // internal key
	smallestSeq uint64
	largestSeq  uint64
}

type deletedFile struct {
	level int
	num   uint64
}

// versionEdit is one decoded MANIFEST record. Fields with a has* flag are
// set only by edits that carry them.
type versionEdit struct {
	comparator                                             string
	hasComparator                                          bool
	logNumber, prevLogNumber, nextFileNumber, lastSequence uint64
	hasLogNumber, hasPrevLogNumber                         bool
	hasNextFileNumber, hasLastSequence                     bool
	cf                                                     uint32
	cfAdd                                                  string
	isCFAdd, isCFDrop                                      bool
	inAtomicGroup                                          bool
	remainingInGroup                                       uint32
	deleted                                                []deletedFile
	added                                                  []fileMeta
}

// decodeVersionEdit decodes one MANIFEST record; name and off locate it for
// errors.
func decodeVersionEdit(name string, off int64, data []byte) (*versionEdit, error) {
	e := &versionEdit{}
	d := decoder{b: data}
	for !d.empty() {
		tagOff := d.off
		tag := d.uvarint32()
		bad := func(what string) error {
			return corruptf("%s: offset %d: version edit: tag %d at byte %d: bad %s", name, off, tag, tagOff, what)
		}
		if !d.ok() {
			return nil, bad("tag varint")
		}
		switch tag {
		case tagComparator:
			e.comparator, e.hasComparator = string(d.slice()), true
		case tagLogNumber:
			e.logNumber, e.hasLogNumber = d.uvarint64(), true
		case tagPrevLogNumber:
			e.prevLogNumber, e.hasPrevLogNumber = d.uvarint64(), true
		case tagNextFileNumber:
			e.nextFileNumber, e.hasNextFileNumber = d.uvarint64(), true
		case tagLastSequence:
			e.lastSequence, e.hasLastSequence = d.uvarint64(), true
		case tagMinLogNumberToKeep:
			d.uvarint64() // for two-phase commit; the log number bounds our WALs
		case tagCompactCursor:
			d.uvarint32()
			d.slice()
		case tagDeletedFile:
			level := d.uvarint32()
			num := d.uvarint64()
			if d.ok() && level >= maxLevels {
				return nil, bad("level")
			}
			e.deleted = append(e.deleted, deletedFile{level: int(level), num: num})
		case tagNewFile, tagNewFile2, tagNewFile3, tagNewFile4:
			f, err := decodeNewFile(&d, tag)
			if err != nil {
				return nil, corruptf("%s: offset %d: version edit: new file at byte %d: %s", name, off, tagOff, err)
			}
			if f == nil {
				return nil, unsupportedf("%s: offset %d: version edit: table in another db_path", name, off)
			}
			e.added = append(e.added, *f)
		case tagColumnFamily:
			e.cf = d.uvarint32()
		case tagColumnFamilyAdd:
			e.cfAdd, e.isCFAdd = string(d.slice()), true
		case tagColumnFamilyDrop:
			e.isCFDrop = true
		case tagMaxColumnFamily:
			d.uvarint32()
		case tagInAtomicGroup:
			e.inAtomicGroup = true
			e.remainingInGroup = d.uvarint32()
		case tagBlobFileAddition, tagBlobFileGarbage:
			return nil, unsupportedf("%s: offset %d: version edit: blob files (BlobDB)", name, off)
		default:
			if tag&tagSafeIgnoreMask == 0 {
				return nil, corruptf("%s: offset %d: version edit: unknown tag %d at byte %d", name, off, tag, tagOff)
			}
			d.slice()
		}
		if !d.ok() {
			return nil, bad("value")
		}
	}
	return e, nil
}

// decodeNewFile decodes a new-file record of any of the four formats. It
// returns nil, nil for a table outside the DB directory (path id != 0).
func decodeNewFile(d *decoder, tag uint32) (*fileMeta, error) {
	level := d.uvarint32()
	f := &fileMeta{level: int(level), num: d.uvarint64()}
	pathID := uint32(0)
	if tag == tagNewFile3 {
		pathID = d.uvarint32()
	}
	f.size = d.uvarint64()
	f.smallest = d.slice()
	f.largest = d.slice()
	if tag != tagNewFile {
		f.smallestSeq = d.uvarint64()
		f.largestSeq = d.uvarint64()
	}
	if tag == tagNewFile4 {
		for {
			field := d.uvarint32()
			if !d.ok() || field == fieldTerminate {
				break
			}
			v := d.slice()
			switch {
			case field == fieldPathID:
				if len(v) != 1 {
					return nil, errorString("path id field")
				}
				pathID = uint32(v[0])
			case field&fieldNonSafeIgnoreMask != 0:
				return nil, errorString("unknown mandatory field")
			}
		}
	}
	if !d.ok() {
		return nil, errorString("truncated")
	}
	if level >= maxLevels {
		return nil, errorString("level")
	}
	if _, ok := parseInternalKey(f.smallest); !ok {
		return nil, errorString("smallest key")
	}
	if _, ok := parseInternalKey(f.largest); !ok {
		return nil, errorString("largest key")
	}
	if pathID != 0 {
		return nil, nil
	}
	return f, nil
}

// errorString is a plain message folded into a caller's named error.
type errorString string

func (e errorString) Error() string { return string(e) }

package record

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// Reader reads the records of a log from its first byte, one block at a
// time. The calls must match: Next* (until it returns an error), then
// TornTail and TornTailOffset.
//
// Next returns io.EOF at the end of the log: at a clean end (end of stream,
// possibly followed by zeros) or at a torn tail (a bad or incomplete chunk
// with no valid chunk anywhere after it). A bad chunk followed by a valid one
// is corruption: Next returns an error marked base.ErrCorruption. Errors and
// io.EOF are sticky.
type Reader struct {
	r io.Reader
	// block holds the current block; block[:n] are the bytes read.
	block []byte
	n     int
	// pos is the position of the next chunk in block.
	pos int
	// blockOffset is the stream offset of block[0].
	blockOffset int64
	// streamEnded is set once r reported the end of the stream, so block is
	// the last (possibly short or empty) block.
	streamEnded bool

	// rec assembles a record from first/middle/last chunks.
	rec []byte
	// validEnd is the offset just past the last chunk of the last complete
	// record returned.
	validEnd int64
	// tornTail is set when the log ended at damage rather than cleanly;
	// tailProblem then describes the first bad bytes.
	tornTail    bool
	tailProblem string
	// err is the sticky terminal result: io.EOF, corruption or an I/O error.
	err error
}

// NewReader returns a Reader of the log in r, which must start at offset 0
// of the log (a block boundary).
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, block: make([]byte, BlockSize)}
}

// Reset makes the Reader read a new log from src, keeping its buffers.
func (r *Reader) Reset(src io.Reader) {
	block := r.block
	if len(block) != BlockSize {
		block = make([]byte, BlockSize)
	}
	*r = Reader{r: src, block: block, rec: r.rec[:0]}
}

// Next returns the next record. The slice is valid until the next call to
// Next; copy it to keep it.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	inRecord := false // a first chunk was read and its last chunk was not
	var recordStart int64
	for {
		if r.n-r.pos < HeaderSize {
			if r.n == BlockSize || (r.n == 0 && !r.streamEnded) {
				// The zero trailer of a full block, or nothing read yet.
				if err := r.readBlock(); err != nil {
					return nil, r.fail(err)
				}
				continue
			}
			// The stream ended inside this block.
			if r.pos == r.n && !inRecord {
				return nil, r.fail(io.EOF)
			}
			return nil, r.damaged(inRecord, recordStart, statusShortHeader)
		}

		chunk := r.block[r.pos:r.n]
		if status := checkChunk(chunk, r.n == BlockSize); status != chunkValid {
			return nil, r.damaged(inRecord, recordStart, status)
		}
		length := int(binary.LittleEndian.Uint16(chunk[4:6]))
		typ := chunkType(chunk[6])
		payload := chunk[HeaderSize : HeaderSize+length]
		chunkOffset := r.blockOffset + int64(r.pos)
		r.pos += HeaderSize + length

		switch typ {
		case chunkFull, chunkFirst:
			if inRecord {
				return nil, r.fail(base.CorruptionErrorf(
					"record: corruption at offset %d: record is missing its last chunk (a %s chunk follows at offset %d)",
					recordStart, typ, chunkOffset))
			}
			if typ == chunkFull {
				r.validEnd = r.blockOffset + int64(r.pos)
				return payload, nil
			}
			inRecord = true
			recordStart = chunkOffset
			r.rec = append(r.rec[:0], payload...)
		case chunkMiddle, chunkLast:
			if !inRecord {
				return nil, r.fail(base.CorruptionErrorf(
					"record: corruption at offset %d: %s chunk without a first chunk", chunkOffset, typ))
			}
			r.rec = append(r.rec, payload...)
			if typ == chunkLast {
				r.validEnd = r.blockOffset + int64(r.pos)
				return r.rec, nil
			}
		}
	}
}

// TornTail reports whether the log ended at a torn tail: Next returned io.EOF
// after dropping an incomplete record or bytes other than zeros. It is false
// at a clean end, including one followed by zero fill.
func (r *Reader) TornTail() bool { return r.tornTail }

// TornTailProblem describes the first bad bytes of a torn tail, with their
// offset ("checksum mismatch (...) at offset 123"); empty unless TornTail.
func (r *Reader) TornTailProblem() string { return r.tailProblem }

// TornTailOffset returns the offset where the valid log ends: just past the
// last chunk of the last complete record. Truncating the file there (or
// continuing it with NewWriterAt) drops the torn tail. Meaningful once Next
// has returned io.EOF.
func (r *Reader) TornTailOffset() int64 { return r.validEnd }

// Offset returns the offset just past the last chunk of the last complete
// record Next returned (0 before the first): where the log's valid prefix
// ends so far. A record that fails to decode after Next returned it starts
// at or after this offset.
func (r *Reader) Offset() int64 { return r.validEnd }

// readBlock replaces the current block with the next one from the stream.
// At the end of the stream it leaves an empty block and sets streamEnded.
func (r *Reader) readBlock() error {
	if r.streamEnded {
		r.blockOffset += int64(r.n)
		r.n, r.pos = 0, 0
		return nil
	}
	r.blockOffset += int64(r.n)
	n, err := io.ReadFull(r.r, r.block)
	r.n, r.pos = n, 0
	switch err {
	case nil:
	case io.EOF, io.ErrUnexpectedEOF:
		r.streamEnded = true
	default:
		return errors.Wrapf(err, "record: reading block at offset %d", r.blockOffset)
	}
	return nil
}

// damaged handles a bad or incomplete chunk at r.pos: it scans the rest of
// the stream and decides between a torn tail and corruption. recordStart is
// the offset of the record being assembled, if inRecord.
func (r *Reader) damaged(inRecord bool, recordStart int64, status chunkStatus) error {
	badOffset := r.blockOffset + int64(r.pos)
	problem := describeChunk(status, r.block[r.pos:r.n])
	if inRecord {
		problem += fmt.Sprintf(" inside the record starting at offset %d", recordStart)
	}
	validOffset, allZero, err := r.findValidChunk()
	if err != nil {
		return r.fail(err)
	}
	if validOffset >= 0 {
		return r.fail(base.CorruptionErrorf(
			"record: corruption at offset %d: %s; a valid chunk follows at offset %d",
			badOffset, problem, validOffset))
	}
	// Nothing valid follows: the writer stopped before these bytes were
	// complete, and nothing after them was ever written. If they are all
	// zeros and no record was cut short, the log simply ends here.
	r.tornTail = inRecord || !allZero
	if r.tornTail {
		r.tailProblem = fmt.Sprintf("%s at offset %d", problem, badOffset)
	}
	return r.fail(io.EOF)
}

// findValidChunk looks for a valid chunk at any byte offset after r.pos, to
// the end of the stream. It returns the offset of the first one found or -1,
// and whether every byte from r.pos on is zero. Every offset is tried, not
// just chunk boundaries, because a damaged length field hides where the next
// chunk of the same block starts. It consumes the rest of the stream.
//
// Cost: zero-filled blocks are skipped after one pass; in random garbage
// about 1 offset in 64 passes the type check and needs a CRC, about 1.5 MB
// of CRC per 32 KiB block (well under a millisecond with hardware CRC).
func (r *Reader) findValidChunk() (offset int64, allZero bool, err error) {
	from := r.pos + 1
	allZero = isZero(r.block[r.pos:r.n])
	blockIsZero := allZero
	for {
		if !blockIsZero {
			fullBlock := r.n == BlockSize
			for o := from; o+HeaderSize <= r.n; o++ {
				// Inline the type test: it rejects ~98% of garbage offsets.
				if typ := chunkType(r.block[o+6]); typ < chunkFull || typ > chunkLast {
					continue
				}
				if checkChunk(r.block[o:r.n], fullBlock) == chunkValid {
					return r.blockOffset + int64(o), false, nil
				}
			}
		}
		if r.streamEnded {
			r.pos = r.n
			return -1, allZero, nil
		}
		if err := r.readBlock(); err != nil {
			return -1, allZero, err
		}
		from = 0
		blockIsZero = isZero(r.block[:r.n])
		allZero = allZero && blockIsZero
	}
}

// fail makes err the Reader's sticky result.
func (r *Reader) fail(err error) error {
	r.err = err
	return err
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

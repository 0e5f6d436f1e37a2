package record

import (
	"io"
	"slices"

	"github.com/cockroachdb/errors"
)

// autoFlushBytes bounds the Writer's buffer: once this much is pending,
// WriteRecord hands it to the underlying writer without waiting for Flush, so
// a long MANIFEST or a huge record does not sit in memory twice.
const autoFlushBytes = 8 * BlockSize

// Writer frames records into chunks and buffers the encoded bytes until
// Flush. The calls must match: (WriteRecord | Flush | Size)*.
//
// After any error from the underlying io.Writer the Writer is broken: that
// call and every later WriteRecord or Flush return the same error, because
// the bytes on disk no longer match what the Writer believes it wrote.
type Writer struct {
	// w receives the framed bytes; nil for a Writer made by
	// NewBufferWriterAt, whose owner takes them with TakeBuffered.
	w io.Writer
	// buf holds encoded bytes not yet handed to w.
	buf []byte
	// blockOffset is the position of the next byte within its block.
	blockOffset int
	// size is the logical length of the log: bytes handed to w plus bytes
	// still in buf (plus the starting offset).
	size int64
	// err is the first write error; sticky.
	err error
}

// NewWriter returns a Writer that starts a new log at the beginning of w.
func NewWriter(w io.Writer) *Writer {
	return NewWriterAt(w, 0)
}

// NewWriterAt returns a Writer that continues a log of which offset bytes
// already exist; w must append right after them. offset is usually a
// Reader's TornTailOffset (after truncating the file there) or the size of a
// log that ended cleanly. The Writer keeps the 32 KiB block alignment of the
// existing bytes.
func NewWriterAt(w io.Writer, offset int64) *Writer {
	if offset < 0 {
		offset = 0
	}
	return &Writer{
		w:           w,
		blockOffset: int(offset % BlockSize),
		size:        offset,
	}
}

// NewBufferWriterAt returns a Writer that continues a log of offset bytes,
// as NewWriterAt, but never writes: it frames records into its buffer and
// its owner takes the framed bytes with TakeBuffered and writes them to the
// log, in order. Flush does nothing. The WAL frames with it so that a
// record is copied once, from the caller's bytes into the bytes written to
// the file (a checkpoint's 2.7 MB batch was copied twice, framing then
// pending buffer, and a new pending buffer was grown for every commit).
func NewBufferWriterAt(offset int64) *Writer {
	return NewWriterAt(nil, offset)
}

// TakeBuffered returns the framed bytes not yet taken, which end at a
// record boundary, and continues buffering into spare (emptied; nil is
// fine). The caller owns the returned bytes. Only for a Writer made by
// NewBufferWriterAt.
func (w *Writer) TakeBuffered(spare []byte) []byte {
	b := w.buf
	w.buf = spare[:0]
	return b
}

// WriteRecord appends p as one record to the buffer and returns the offset
// of the record's first chunk header (after any block padding), which is
// where a Reader positioned at a block boundary would find it. p may be
// empty. The record reaches the underlying writer at the next Flush, or
// earlier when the buffer grows past a few blocks.
func (w *Writer) WriteRecord(p []byte) (offset int64, err error) {
	if w.err != nil {
		return 0, w.err
	}
	// Room for the payload and, per chunk, a header and a block trailer, so
	// a large record grows the buffer at most once.
	w.buf = slices.Grow(w.buf, len(p)+(len(p)/maxChunkPayload+2)*2*HeaderSize)
	first := true
	for {
		if left := BlockSize - w.blockOffset; left < HeaderSize {
			// Too small for a header: zero-fill and start the next block.
			// The zeros let a reader skip the trailer without checking it.
			w.padBlock(left)
		}
		if first {
			offset = w.size
		}
		n := min(len(p), BlockSize-w.blockOffset-HeaderSize)
		last := n == len(p)
		var typ chunkType
		switch {
		case first && last:
			typ = chunkFull
		case first:
			typ = chunkFirst
		case last:
			typ = chunkLast
		default:
			typ = chunkMiddle
		}
		w.appendChunk(typ, p[:n])
		p = p[n:]
		first = false
		if last {
			break
		}
	}
	if w.w != nil && len(w.buf) >= autoFlushBytes {
		if err := w.Flush(); err != nil {
			return 0, err
		}
	}
	return offset, nil
}

// appendChunk encodes one chunk into the buffer. The payload must fit in the
// current block.
func (w *Writer) appendChunk(typ chunkType, payload []byte) {
	start := len(w.buf)
	w.buf = append(w.buf, 0, 0, 0, 0, 0, 0, byte(typ))
	w.buf = append(w.buf, payload...)
	putHeader(w.buf[start:], w.buf[start+HeaderSize-1:])
	w.advance(HeaderSize + len(payload))
}

// padBlock appends n zero bytes, the trailer of the current block.
func (w *Writer) padBlock(n int) {
	w.buf = append(w.buf, make([]byte, n)...) // the compiler appends zeros without allocating
	w.advance(n)
}

func (w *Writer) advance(n int) {
	w.size += int64(n)
	w.blockOffset += n
	if w.blockOffset == BlockSize {
		w.blockOffset = 0
	}
}

// Flush hands every buffered byte to the underlying writer (a Writer made by
// NewBufferWriterAt keeps them for TakeBuffered). It does not sync:
// durability is the caller's business (the wal package, or the MANIFEST
// writer calling File.Sync).
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 || w.w == nil {
		return nil
	}
	n, err := w.w.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = errors.Wrapf(err, "record: writing %d bytes ending at log offset %d", len(w.buf), w.size)
		return w.err
	}
	w.buf = w.buf[:0]
	return nil
}

// Size returns the logical length of the log: every byte of every record
// written so far, flushed or not, including block padding and the starting
// offset given to NewWriterAt.
func (w *Writer) Size() int64 { return w.size }

// Buffered returns the number of bytes waiting for Flush.
func (w *Writer) Buffered() int { return len(w.buf) }

// Err returns the sticky write error, or nil while the Writer is healthy.
func (w *Writer) Err() error { return w.err }

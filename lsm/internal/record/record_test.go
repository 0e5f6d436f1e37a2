package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// testLog is an encoded log plus where each record starts and ends.
type testLog struct {
	data    []byte
	records [][]byte
	starts  []int64
	ends    []int64
}

func buildLog(t testing.TB, records [][]byte) testLog {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	l := testLog{records: records}
	for _, r := range records {
		off, err := w.WriteRecord(r)
		require.NoError(t, err)
		l.starts = append(l.starts, off)
		l.ends = append(l.ends, w.Size())
	}
	require.NoError(t, w.Flush())
	require.Equal(t, int64(buf.Len()), w.Size())
	l.data = buf.Bytes()
	return l
}

// readAll reads every record of data. It returns the records, the reader
// and the error that ended the log (nil for io.EOF).
func readAll(data []byte) ([][]byte, *Reader, error) {
	return readAllWith(NewReader(nil), data)
}

// readAllWith is readAll reusing r, so that exhaustive tests do not allocate
// a block per read.
func readAllWith(r *Reader, data []byte) ([][]byte, *Reader, error) {
	r.Reset(bytes.NewReader(data))
	var out [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			return out, r, err
		}
		out = append(out, append([]byte(nil), rec...))
	}
}

// payload returns n bytes derived from seed. Bytes are >= 0x10 so that a
// payload never looks like a chunk type: this keeps the reader's byte-wise
// scan of damaged tails cheap in the exhaustive tests.
func payload(seed, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(0x10 + (seed*131+i*7)%0xEF)
	}
	return p
}

// requireRecords compares record lists without printing their bytes.
func requireRecords(t *testing.T, want, got [][]byte, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got), msgAndArgs...)
	for i := range want {
		if !bytes.Equal(want[i], got[i]) {
			require.Failf(t, "record differs", "record %d: want %d bytes, got %d bytes; %v", i, len(want[i]), len(got[i]), msgAndArgs)
		}
	}
}

func randomPayload(rng *rand.Rand, n int) []byte {
	p := make([]byte, n)
	rng.Read(p)
	return p
}

func TestMaskedChecksum(t *testing.T) {
	// The mask formula is persisted; pin it against a direct computation.
	c := uint32(0xE3069283) // CRC-32C of "123456789", the standard check value.
	require.Equal(t, (c>>15|c<<17)+0xa282ead8, maskedChecksum([]byte("123456789")))
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var records [][]byte
	for i := 0; i < 300; i++ {
		var n int
		switch rng.Intn(4) {
		case 0:
			n = rng.Intn(100<<10 + 1) // up to 100 KiB: several blocks
		case 1:
			n = 0
		default:
			n = rng.Intn(200)
		}
		records = append(records, randomPayload(rng, n))
	}
	l := buildLog(t, records)
	got, r, err := readAll(l.data)
	require.NoError(t, err)
	require.Equal(t, len(records), len(got))
	for i := range records {
		require.True(t, bytes.Equal(records[i], got[i]), "record %d", i)
		// A record starts where a header fits in the block.
		require.LessOrEqual(t, l.starts[i]%BlockSize, int64(BlockSize-HeaderSize), "record %d", i)
	}
	require.False(t, r.TornTail())
	require.Equal(t, int64(len(l.data)), r.TornTailOffset())
}

// TestBlockBoundaries places a second record when 0, 1, 6, 7 and 8 bytes are
// left in the first block.
func TestBlockBoundaries(t *testing.T) {
	for _, left := range []int{0, 1, 6, 7, 8, 100} {
		for _, secondLen := range []int{0, 1, maxChunkPayload, maxChunkPayload + 1, 3 * BlockSize} {
			t.Run(fmt.Sprintf("left=%d/second=%d", left, secondLen), func(t *testing.T) {
				first := payload(1, BlockSize-HeaderSize-left)
				second := payload(2, secondLen)
				l := buildLog(t, [][]byte{first, second, payload(3, 10)})
				require.Equal(t, int64(BlockSize-left), l.ends[0])
				switch {
				case left < HeaderSize:
					// Zero trailer, next record at the next block.
					require.Equal(t, int64(BlockSize), l.starts[1])
					require.True(t, isZero(l.data[BlockSize-left:BlockSize]))
				case left == HeaderSize && secondLen > 0:
					// A first chunk with an empty payload fills the block.
					require.Equal(t, int64(BlockSize-HeaderSize), l.starts[1])
					require.Equal(t, byte(chunkFirst), l.data[BlockSize-1])
				default:
					require.Equal(t, int64(BlockSize-left), l.starts[1])
				}
				got, r, err := readAll(l.data)
				require.NoError(t, err)
				requireRecords(t, l.records, got)
				require.False(t, r.TornTail())
			})
		}
	}
}

func TestEmptyLog(t *testing.T) {
	got, r, err := readAll(nil)
	require.NoError(t, err)
	require.Empty(t, got)
	require.False(t, r.TornTail())
	require.Equal(t, int64(0), r.TornTailOffset())
}

func TestZeroLengthRecordIsOneFullChunk(t *testing.T) {
	l := buildLog(t, [][]byte{{}})
	require.Len(t, l.data, HeaderSize)
	require.Equal(t, byte(chunkFull), l.data[6])
	require.Equal(t, uint16(0), binary.LittleEndian.Uint16(l.data[4:6]))
	got, _, err := readAll(l.data)
	require.NoError(t, err)
	requireRecords(t, [][]byte{{}}, got)
}

// smallLog spans a block boundary with short chunks, so that every
// truncation point can be tried quickly.
func smallLog(t testing.TB) testLog {
	var records [][]byte
	size := 0
	for i := 0; size < BlockSize+3000; i++ {
		n := (i * 797) % 2000
		if i%7 == 0 {
			n = i % 3 // empty and tiny records too
		}
		records = append(records, payload(i, n))
		size += n + HeaderSize
	}
	return buildLog(t, records)
}

// expectPrefix checks a read of data[:cut] (or a damaged variant whose damage
// starts at cut) against the model: exactly the records that end at or
// before cut, and a torn tail iff anything but zeros follows the last one.
func expectPrefix(t *testing.T, l testLog, data []byte, cut int) {
	t.Helper()
	expectPrefixWith(t, NewReader(nil), l, data, cut)
}

func expectPrefixWith(t *testing.T, r *Reader, l testLog, data []byte, cut int) {
	t.Helper()
	got, r, err := readAllWith(r, data)
	require.NoError(t, err, "cut %d", cut)
	complete := 0
	for complete < len(l.ends) && l.ends[complete] <= int64(cut) {
		complete++
	}
	require.Len(t, got, complete, "cut %d", cut)
	for i := range got {
		require.True(t, bytes.Equal(l.records[i], got[i]), "cut %d record %d", cut, i)
	}
	lastEnd := int64(0)
	if complete > 0 {
		lastEnd = l.ends[complete-1]
	}
	require.Equal(t, lastEnd, r.TornTailOffset(), "cut %d", cut)
	require.Equal(t, !isZero(data[lastEnd:]), r.TornTail(), "cut %d", cut)
}

func TestEveryTruncationPoint(t *testing.T) {
	l := smallLog(t)
	require.Greater(t, len(l.data), BlockSize)
	r := NewReader(nil)
	for cut := 0; cut <= len(l.data); cut += exhaustiveStride {
		expectPrefixWith(t, r, l, l.data[:cut], cut)
	}
}

// TestTruncationLargeRecords cuts a log of multi-block records at every
// point near a chunk boundary and at a stride elsewhere.
func TestTruncationLargeRecords(t *testing.T) {
	l := buildLog(t, [][]byte{
		payload(1, 100), payload(2, 3*BlockSize+5), payload(3, 0), payload(4, BlockSize-HeaderSize),
		payload(5, 40000), payload(6, 17),
	})
	for cut := 0; cut <= len(l.data); cut++ {
		inBlock := cut % BlockSize
		nearBoundary := inBlock < 2*HeaderSize || inBlock > BlockSize-2*HeaderSize
		for _, e := range l.ends {
			if d := int64(cut) - e; d > -2*HeaderSize && d < 2*HeaderSize {
				nearBoundary = true
			}
		}
		if nearBoundary || cut%257 == 0 {
			expectPrefix(t, l, l.data[:cut], cut)
		}
	}
}

func TestZeroFilledTail(t *testing.T) {
	l := smallLog(t)
	// A clean log followed by preallocated zeros: a clean end.
	data := append(append([]byte(nil), l.data...), make([]byte, 100<<10)...)
	expectPrefix(t, l, data, len(l.data))
	// A record cut short, then zeros: a torn tail at the previous record.
	last := len(l.ends) - 1
	for l.ends[last]-l.starts[last] < 20 {
		last--
	}
	cut := int(l.starts[last]) + 10
	data = append(append([]byte(nil), l.data[:cut]...), make([]byte, 3*BlockSize)...)
	expectPrefix(t, l, data, cut)
}

func TestGarbageTail(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	l := smallLog(t)
	for _, n := range []int{1, 6, 7, 100, 2 * BlockSize} {
		for _, cut := range []int{int(l.ends[5]), int(l.ends[len(l.ends)-1]), int(l.ends[5]) + 3} {
			data := append(append([]byte(nil), l.data[:cut]...), randomPayload(rng, n)...)
			expectPrefix(t, l, data, cut)
		}
	}
}

// TestFlipInMiddleIsCorruption flips every byte of several records that have
// valid records after them.
func TestFlipInMiddleIsCorruption(t *testing.T) {
	l := buildLog(t, [][]byte{
		payload(1, 50), payload(2, 0), payload(3, 300), payload(4, 2*BlockSize), payload(5, 10), payload(6, 10),
	})
	for rec := 0; rec < len(l.records)-1; rec++ {
		for off := l.starts[rec]; off < l.ends[rec]; off += exhaustiveStride {
			if rec == 3 && off%97 != 0 && (off-l.starts[rec])%BlockSize > 2*HeaderSize {
				continue // sample the big record's payload
			}
			data := append([]byte(nil), l.data...)
			data[off] ^= 0x40
			got, _, err := readAll(data)
			require.Error(t, err, "record %d offset %d", rec, off)
			require.True(t, errors.Is(err, base.ErrCorruption), "record %d offset %d: %v", rec, off, err)
			require.Contains(t, err.Error(), "corruption at offset")
			require.LessOrEqual(t, len(got), rec)
			requireRecords(t, l.records[:len(got)], got)
		}
	}
}

// TestFlipInLastRecordIsTornTail flips every byte of the last chunk of the
// last record: nothing valid follows, so the record is dropped as a torn
// tail and the earlier ones are kept.
func TestFlipInLastRecordIsTornTail(t *testing.T) {
	for _, lastLen := range []int{0, 1, 200, 2 * BlockSize} {
		l := buildLog(t, [][]byte{payload(1, 50), payload(2, 3000), payload(3, lastLen)})
		last := len(l.records) - 1
		lastChunkStart := l.starts[last]
		if l.ends[last]/BlockSize > lastChunkStart/BlockSize {
			lastChunkStart = l.ends[last] / BlockSize * BlockSize
		}
		for off := lastChunkStart; off < l.ends[last]; off += exhaustiveStride {
			data := append([]byte(nil), l.data...)
			data[off] ^= 0x01
			got, r, err := readAll(data)
			require.NoError(t, err, "len %d offset %d", lastLen, off)
			requireRecords(t, l.records[:last], got)
			require.True(t, r.TornTail())
			require.Equal(t, l.ends[last-1], r.TornTailOffset())
		}
	}
}

// TestFlipInFirstChunkOfLastRecord documents the conservative rule: the
// record's later chunks are valid, so damage before them is corruption even
// though the record is the last one.
func TestFlipInFirstChunkOfLastRecord(t *testing.T) {
	l := buildLog(t, [][]byte{payload(1, 50), payload(3, 2*BlockSize)})
	data := append([]byte(nil), l.data...)
	data[l.starts[1]+HeaderSize+5] ^= 0x01
	_, _, err := readAll(data)
	require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
	require.Contains(t, err.Error(), "checksum mismatch")
}

// rawLog writes chunks of chosen types, for sequences the Writer never
// produces.
func rawLog(chunks ...chunkType) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i, typ := range chunks {
		w.appendChunk(typ, payload(i, 10))
	}
	_ = w.Flush()
	return buf.Bytes()
}

func TestBadChunkSequences(t *testing.T) {
	for _, tc := range []struct {
		chunks []chunkType
		want   string
		good   int
	}{
		{[]chunkType{chunkFull, chunkMiddle, chunkFull}, "middle chunk without a first chunk", 1},
		{[]chunkType{chunkLast}, "last chunk without a first chunk", 0},
		{[]chunkType{chunkFull, chunkFirst, chunkFull}, "missing its last chunk", 1},
		{[]chunkType{chunkFirst, chunkMiddle, chunkFirst, chunkLast}, "missing its last chunk", 0},
	} {
		got, _, err := readAll(rawLog(tc.chunks...))
		require.True(t, errors.Is(err, base.ErrCorruption), "%v: %v", tc.chunks, err)
		require.Contains(t, err.Error(), tc.want)
		require.Len(t, got, tc.good)
	}
	// A record whose last chunk never arrived, at the end: a torn tail.
	got, r, err := readAll(rawLog(chunkFull, chunkFirst, chunkMiddle))
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.True(t, r.TornTail())
	require.Equal(t, int64(HeaderSize+10), r.TornTailOffset())
}

func TestCorruptionMessages(t *testing.T) {
	l := buildLog(t, [][]byte{payload(1, 20), payload(2, 20)})
	for _, tc := range []struct {
		name   string
		damage func(b []byte)
		want   string
	}{
		{"type", func(b []byte) { b[6] = 9 }, "invalid chunk type 9"},
		{"length", func(b []byte) { binary.LittleEndian.PutUint16(b[4:6], 60000) }, "chunk length 60000"},
		{"checksum", func(b []byte) { b[0] ^= 1 }, "checksum mismatch"},
		{"zeroed", func(b []byte) { copy(b[:HeaderSize], make([]byte, HeaderSize)) }, "zeroed chunk header"},
	} {
		data := append([]byte(nil), l.data...)
		tc.damage(data)
		_, _, err := readAll(data)
		require.True(t, errors.Is(err, base.ErrCorruption), tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
		require.Contains(t, err.Error(), "corruption at offset 0", tc.name)
		require.Contains(t, err.Error(), fmt.Sprintf("valid chunk follows at offset %d", l.starts[1]), tc.name)
	}
}

// failingReader returns an I/O error after n bytes.
type failingReader struct {
	data []byte
	n    int
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	k := copy(p, f.data[:min(len(f.data), f.n)])
	f.data, f.n = f.data[k:], f.n-k
	return k, nil
}

func TestReaderIOErrorIsNotCorruption(t *testing.T) {
	l := smallLog(t)
	r := NewReader(&failingReader{data: l.data, n: BlockSize})
	var err error
	for err == nil {
		_, err = r.Next()
	}
	require.NotErrorIs(t, err, io.EOF)
	require.False(t, errors.Is(err, base.ErrCorruption))
	require.Contains(t, err.Error(), "disk on fire")
	_, err2 := r.Next()
	require.Equal(t, err, err2, "sticky")
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct {
	buf   bytes.Buffer
	limit int
}

var errInjected = errors.New("injected write failure")

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.limit {
		n := f.limit - f.buf.Len()
		f.buf.Write(p[:n])
		return n, errInjected
	}
	return f.buf.Write(p)
}

func TestWriterErrorIsSticky(t *testing.T) {
	fw := &failingWriter{limit: 100}
	w := NewWriter(fw)
	_, err := w.WriteRecord(payload(1, 50))
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	_, err = w.WriteRecord(payload(2, 80))
	require.NoError(t, err, "buffered, not yet written")
	err = w.Flush()
	require.ErrorIs(t, err, errInjected)
	require.Equal(t, err, w.Err())
	_, err2 := w.WriteRecord(nil)
	require.Equal(t, err, err2)
	require.Equal(t, err, w.Flush())
	// Auto-flush of a large record reports the error from WriteRecord.
	w = NewWriter(&failingWriter{limit: 10})
	_, err = w.WriteRecord(payload(3, autoFlushBytes))
	require.ErrorIs(t, err, errInjected)
}

func TestAutoFlushBoundsBuffer(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := 0; i < 100; i++ {
		_, err := w.WriteRecord(payload(i, 10000))
		require.NoError(t, err)
		require.Less(t, w.Buffered(), autoFlushBytes)
	}
	require.Equal(t, w.Size(), int64(buf.Len()+w.Buffered()))
}

// TestAppendAfterTornTail truncates a torn log at TornTailOffset and
// continues it with NewWriterAt.
func TestAppendAfterTornTail(t *testing.T) {
	l := smallLog(t)
	for _, cut := range []int{0, 3, int(l.ends[3]) + 5, BlockSize - 3, BlockSize + 100} {
		_, r, err := readAll(l.data[:cut])
		require.NoError(t, err)
		valid := r.TornTailOffset()
		buf := bytes.NewBuffer(append([]byte(nil), l.data[:valid]...))
		w := NewWriterAt(buf, valid)
		extra := [][]byte{payload(100, 5), payload(101, 3*BlockSize), {}}
		for _, e := range extra {
			_, err := w.WriteRecord(e)
			require.NoError(t, err)
		}
		require.NoError(t, w.Flush())
		require.Equal(t, int64(buf.Len()), w.Size())
		got, r, err := readAll(buf.Bytes())
		require.NoError(t, err)
		require.False(t, r.TornTail())
		n := 0
		for n < len(l.ends) && l.ends[n] <= valid {
			n++
		}
		requireRecords(t, append(append([][]byte(nil), l.records[:n]...), extra...), got, "cut %d", cut)
	}
}

func BenchmarkWriteRecord(b *testing.B) {
	p := payload(1, 100)
	w := NewWriter(io.Discard)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		_, _ = w.WriteRecord(p)
	}
}

func BenchmarkReadRecord(b *testing.B) {
	records := make([][]byte, 10000)
	for i := range records {
		records[i] = payload(i, 100)
	}
	l := buildLog(b, records)
	b.SetBytes(int64(len(l.data)))
	for b.Loop() {
		r := NewReader(bytes.NewReader(l.data))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

// BenchmarkScanGarbageTail measures the cost of deciding that 1 MiB of
// random garbage after a log is a torn tail.
func BenchmarkScanGarbageTail(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	l := buildLog(b, [][]byte{payload(1, 100)})
	data := append(append([]byte(nil), l.data...), randomPayload(rng, 1<<20)...)
	b.SetBytes(1 << 20)
	for b.Loop() {
		_, r, err := readAll(data)
		if err != nil || !r.TornTail() {
			b.Fatal("expected torn tail", err)
		}
	}
}

// TestBufferWriterMatchesWriter frames the same random records, from the
// same random starting offsets, with NewWriterAt and with
// NewBufferWriterAt taking its bytes at random record boundaries (into
// reused spares, as the WAL does): the bytes must be the same, and the
// buffer writer must never write on its own.
func TestBufferWriterMatchesWriter(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for round := 0; round < 20; round++ {
		offset := int64(0)
		if round > 0 {
			offset = rng.Int63n(3 * BlockSize)
		}
		var want bytes.Buffer
		ref := NewWriterAt(&want, offset)
		w := NewBufferWriterAt(offset)
		var got, spare []byte
		for i := 0; i < 50; i++ {
			n := rng.Intn(200)
			if rng.Intn(4) == 0 {
				n = rng.Intn(1 << 20) // up to 1 MiB: many blocks, past autoFlushBytes
			}
			p := randomPayload(rng, n)
			wantOff, err := ref.WriteRecord(p)
			require.NoError(t, err)
			gotOff, err := w.WriteRecord(p)
			require.NoError(t, err)
			require.Equal(t, wantOff, gotOff, "round %d record %d", round, i)
			require.NoError(t, w.Flush()) // keeps the bytes
			require.Equal(t, w.Size(), offset+int64(len(got)+w.Buffered()))
			if rng.Intn(3) == 0 {
				b := w.TakeBuffered(spare)
				got = append(got, b...)
				spare = b
			}
		}
		require.NoError(t, ref.Flush())
		got = append(got, w.TakeBuffered(nil)...)
		require.Equal(t, 0, w.Buffered())
		require.True(t, bytes.Equal(want.Bytes(), got), "round %d: framed bytes differ", round)
	}
}

package batch

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math/rand"
	"strings"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var long = flag.Bool("long", false, "run the randomized tests with many more iterations")

// op is the model of one batch operation.
type op struct {
	kind       base.Kind
	key, value []byte
}

// randomKey returns a key of a length chosen to cover the uvarint widths
// (1, 2 and 3 bytes) and the empty key.
func randomKey(rng *rand.Rand) []byte {
	var n int
	switch rng.Intn(10) {
	case 0:
		n = 0
	case 1:
		n = 100 + rng.Intn(300)
	case 2:
		if rng.Intn(20) == 0 {
			n = 16384 + rng.Intn(1000)
		}
	default:
		n = 1 + rng.Intn(20)
	}
	key := make([]byte, n)
	rng.Read(key)
	return key
}

func randomOps(rng *rand.Rand, n int) []op {
	ops := make([]op, 0, n)
	for len(ops) < n {
		switch rng.Intn(4) {
		case 3:
			ops = append(ops, op{kind: base.KindMerge, key: randomKey(rng), value: randomKey(rng)})
		case 0:
			ops = append(ops, op{kind: base.KindSet, key: randomKey(rng), value: randomKey(rng)})
		case 1:
			ops = append(ops, op{kind: base.KindDelete, key: randomKey(rng)})
		case 2:
			start, end := randomKey(rng), randomKey(rng)
			switch c := bytes.Compare(start, end); {
			case c == 0:
				continue
			case c > 0:
				start, end = end, start
			}
			ops = append(ops, op{kind: base.KindRangeDelete, key: start, value: end})
		}
	}
	return ops
}

func build(b *Batch, ops []op) {
	for _, o := range ops {
		switch o.kind {
		case base.KindSet:
			b.Set(o.key, o.value)
		case base.KindDelete:
			b.Delete(o.key)
		case base.KindRangeDelete:
			b.DeleteRange(o.key, o.value)
		case base.KindMerge:
			b.Merge(o.key, o.value)
		}
	}
}

// readAll returns every operation of r, copied, and the error that ended
// the iteration.
func readAll(r Reader) ([]op, error) {
	var ops []op
	for {
		kind, key, value, ok, err := r.Next()
		if err != nil || !ok {
			return ops, err
		}
		o := op{kind: kind, key: bytes.Clone(key)}
		if kind != base.KindDelete {
			o.value = bytes.Clone(value)
		}
		ops = append(ops, o)
	}
}

// normalize makes empty and nil slices compare equal.
func normalize(ops []op) []op {
	out := make([]op, len(ops))
	for i, o := range ops {
		out[i] = op{kind: o.kind, key: append([]byte{}, o.key...)}
		if o.kind != base.KindDelete {
			out[i].value = append([]byte{}, o.value...)
		}
	}
	return out
}

func TestGoldenEncoding(t *testing.T) {
	var b Batch
	b.Set([]byte("ab"), []byte("xyz"))
	b.Delete([]byte("c"))
	b.DeleteRange([]byte("d"), []byte("f"))
	b.Delete(nil)
	b.SetSeqNum(0x0102030405)
	want := []byte{
		0x05, 0x04, 0x03, 0x02, 0x01, 0, 0, 0, // seqnum
		4, 0, 0, 0, // count
		1, 2, 'a', 'b', 3, 'x', 'y', 'z', // Set ab=xyz
		0, 1, 'c', // Delete c
		2, 1, 'd', 1, 'f', // DeleteRange [d, f)
		0, 0, // Delete ""
	}
	require.Equal(t, want, b.Repr())
	require.Equal(t, len(want), b.Len())
	require.Equal(t, 4, b.Count())
	require.Equal(t, base.SeqNum(0x0102030405), b.SeqNum())
	require.NoError(t, b.Err())

	// A 200-byte value takes a two-byte length.
	b.Reset()
	b.Set([]byte("k"), bytes.Repeat([]byte{'v'}, 200))
	require.Equal(t, []byte{1, 1, 'k', 0xc8, 0x01, 'v'}, b.Repr()[HeaderSize:HeaderSize+6])
}

func TestZeroBatch(t *testing.T) {
	var b Batch
	require.True(t, b.Empty())
	require.Equal(t, 0, b.Count())
	require.Equal(t, HeaderSize, b.Len())
	require.Equal(t, make([]byte, HeaderSize), b.Repr())
	r, err := Decode(b.Repr())
	require.NoError(t, err)
	require.Equal(t, 0, r.Count())
	_, _, _, ok, err := r.Next()
	require.False(t, ok)
	require.NoError(t, err)

	var zero Reader
	_, _, _, ok, err = zero.Next()
	require.False(t, ok)
	require.NoError(t, err)
	fresh := (&Batch{}).Reader()
	_, _, _, ok, err = fresh.Next()
	require.False(t, ok)
	require.NoError(t, err)
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	iterations := 300
	if *long {
		iterations = 20000
	}
	var b Batch // reused across iterations: Reset must leave nothing behind
	for it := 0; it < iterations; it++ {
		ops := randomOps(rng, rng.Intn(40))
		seq := base.SeqNum(rng.Int63n(int64(base.SeqNumMax) - 100))
		b.Reset()
		build(&b, ops)
		b.SetSeqNum(seq)
		require.NoError(t, b.Err())
		require.Equal(t, len(ops), b.Count())
		require.Equal(t, len(ops) == 0, b.Empty())
		repr := b.Repr()
		require.Equal(t, len(repr), b.Len())

		r, err := Decode(repr)
		require.NoError(t, err)
		require.Equal(t, seq, r.SeqNum())
		require.Equal(t, len(ops), r.Count())
		got, err := readAll(r)
		require.NoError(t, err)
		require.Equal(t, normalize(ops), normalize(got))

		got, err = readAll(b.Reader())
		require.NoError(t, err)
		require.Equal(t, normalize(ops), normalize(got))
	}
}

func TestCopiesInput(t *testing.T) {
	var b Batch
	key, value := []byte("key"), []byte("value")
	b.Set(key, value)
	b.DeleteRange(key, value)
	copy(key, "XXX")
	copy(value, "YYYYY")
	got, err := readAll(b.Reader())
	require.NoError(t, err)
	require.Equal(t, []op{
		{kind: base.KindSet, key: []byte("key"), value: []byte("value")},
		{kind: base.KindRangeDelete, key: []byte("key"), value: []byte("value")},
	}, got)
}

func TestLimitsAccepted(t *testing.T) {
	var b Batch
	maxKey := bytes.Repeat([]byte{'k'}, MaxKeySize)
	maxValue := bytes.Repeat([]byte{'v'}, MaxValueSize)
	b.Set(maxKey, maxValue)
	b.Delete(maxKey)
	b.DeleteRange(maxKey[:MaxKeySize-1], maxKey)
	require.NoError(t, b.Err())
	r, err := Decode(b.Repr())
	require.NoError(t, err)
	got, err := readAll(r)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, maxValue, got[0].value)

	// Reset drops a buffer this large rather than keeping it.
	b.Reset()
	require.Nil(t, b.data)
	require.Equal(t, HeaderSize, b.Len())
}

func TestInvalidOps(t *testing.T) {
	tooLong := make([]byte, MaxKeySize+1)
	cases := []struct {
		name string
		op   func(b *Batch)
		want string
	}{
		{"set key", func(b *Batch) { b.Set(tooLong, nil) }, "Set (op 1): key of 65537 bytes exceeds MaxKeySize"},
		{"set value", func(b *Batch) { b.Set([]byte("k"), make([]byte, MaxValueSize+1)) }, "Set (op 1): value of 4194305 bytes"},
		{"merge key", func(b *Batch) { b.Merge(tooLong, nil) }, "Merge (op 1): key of 65537 bytes exceeds MaxKeySize"},
		{"merge operand", func(b *Batch) { b.Merge([]byte("k"), make([]byte, MaxValueSize+1)) }, "Merge (op 1): operand of 4194305 bytes exceeds MaxValueSize"},
		{"delete key", func(b *Batch) { b.Delete(tooLong) }, "Delete (op 1): key of 65537 bytes"},
		{"range start", func(b *Batch) { b.DeleteRange(tooLong, []byte("z")) }, "DeleteRange (op 1): start of 65537 bytes"},
		{"range end", func(b *Batch) { b.DeleteRange([]byte("a"), tooLong) }, "DeleteRange (op 1): end of 65537 bytes"},
		{"range reversed", func(b *Batch) { b.DeleteRange([]byte("n"), []byte("m")) }, `DeleteRange (op 1): end "m" is before start "n"`},
		{"range reversed from empty", func(b *Batch) { b.DeleteRange([]byte("a"), nil) }, `end "" is before start "a"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b Batch
			b.Set([]byte("first"), []byte("1"))
			c.op(&b)
			require.Error(t, b.Err())
			require.Contains(t, b.Err().Error(), c.want)
			require.False(t, errors.Is(b.Err(), base.ErrCorruption))
			require.Equal(t, 1, b.Count())
			require.False(t, b.HasMerge(), "a refused Merge is not counted")

			// Later operations are ignored and the first error is kept.
			first := b.Err()
			b.Set([]byte("later"), []byte("2"))
			b.DeleteRange([]byte("z"), []byte("a"))
			require.Equal(t, 1, b.Count())
			require.Equal(t, first, b.Err())

			// The bytes hold only the valid operation and decode cleanly.
			r, err := Decode(b.Repr())
			require.NoError(t, err)
			got, err := readAll(r)
			require.NoError(t, err)
			require.Equal(t, []op{{kind: base.KindSet, key: []byte("first"), value: []byte("1")}}, got)

			b.Reset()
			require.NoError(t, b.Err())
			require.True(t, b.Empty())
			b.Delete([]byte("x"))
			require.Equal(t, 1, b.Count())
		})
	}
}

// TestEmptyRangeDeletion checks that an empty range deletion is a no-op:
// not recorded, not an error, whatever surrounds it.
func TestEmptyRangeDeletion(t *testing.T) {
	var b Batch
	b.DeleteRange([]byte("m"), []byte("m"))
	b.DeleteRange(nil, nil)
	require.NoError(t, b.Err())
	require.True(t, b.Empty())
	require.Equal(t, HeaderSize, b.Len())

	b.Set([]byte("a"), []byte("1"))
	b.DeleteRange([]byte("k"), []byte("k"))
	b.DeleteRange([]byte("b"), []byte("c"))
	require.NoError(t, b.Err())
	require.Equal(t, 2, b.Count())
	r, err := Decode(b.Repr())
	require.NoError(t, err)
	got, err := readAll(r)
	require.NoError(t, err)
	require.Equal(t, []op{
		{kind: base.KindSet, key: []byte("a"), value: []byte("1")},
		{kind: base.KindRangeDelete, key: []byte("b"), value: []byte("c")},
	}, got)
}

// header builds a batch header.
func header(seq uint64, count uint32) []byte {
	h := binary.LittleEndian.AppendUint64(nil, seq)
	return binary.LittleEndian.AppendUint32(h, count)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDecodeErrors(t *testing.T) {
	set := []byte{1, 1, 'a', 1, 'v'}
	cases := []struct {
		name string
		repr []byte
		want string
	}{
		{"empty", nil, "0 bytes, shorter than the 12-byte header"},
		{"short header", header(1, 0)[:11], "11 bytes, shorter than the 12-byte header"},
		{"seqnum too large", header(uint64(base.SeqNumMax)+1, 0), "exceeds the largest seqnum"},
		{"seqnum range too large", cat(header(uint64(base.SeqNumMax), 2), set, set), "seqnum 72057594037927935 with 2 operations"},
		{"count beyond bytes", cat(header(1, 3), set), "header counts 3 operations but only 5 bytes follow"},
		{"huge count", header(1, 0xFFFFFFFF), "header counts 4294967295 operations"},
		{"missing op", cat(header(1, 3), set, set), "op 2 at offset 22: truncated before its kind byte"},
		{"unknown kind", cat(header(1, 2), set, []byte{7, 1, 'a'}), "op 1 at offset 17: unknown kind 7"},
		{"kind max", cat(header(1, 1), []byte{0xFF, 0, 0}), "op 0 at offset 12: unknown kind 255"},
		{"key length truncated", cat(header(1, 2), set, []byte{0, 0x80}), "op 1 (DEL) at offset 18: key length truncated"},
		{"key length overflow", cat(header(1, 1), []byte{0}, bytes.Repeat([]byte{0xFF}, 10), []byte{1}), "key length overflows 64 bits"},
		{"key length not minimal", cat(header(1, 1), []byte{0, 0x81, 0x00, 'a'}), "op 0 (DEL) at offset 13: key length is not minimally encoded"},
		{"key too long", cat(header(1, 1), []byte{0}, binary.AppendUvarint(nil, MaxKeySize+1)), "key length 65537 exceeds the limit 65536"},
		{"key past end", cat(header(1, 1), []byte{0, 5, 'a', 'b'}), "op 0 (DEL) at offset 13: key of 5 bytes runs past the end (2 bytes left)"},
		{"value missing", cat(header(1, 1), []byte{1, 1, 'a'}), "op 0 (SET) at offset 15: value length truncated"},
		{"value too long", cat(header(1, 1), []byte{1, 1, 'a'}, binary.AppendUvarint(nil, MaxValueSize+1)), "value length 4194305 exceeds the limit 4194304"},
		{"value past end", cat(header(1, 1), []byte{1, 1, 'a', 3, 'v'}), "value of 3 bytes runs past the end (1 bytes left)"},
		{"range end too long", cat(header(1, 1), []byte{2, 1, 'a'}, binary.AppendUvarint(nil, MaxKeySize+1)), "range end length 65537 exceeds the limit 65536"},
		{"range empty", cat(header(1, 2), set, []byte{2, 1, 'm', 1, 'm'}), `op 1 at offset 17: range deletion start "m" is not before end "m"`},
		{"range reversed", cat(header(1, 1), []byte{2, 1, 'n', 0}), `range deletion start "n" is not before end ""`},
		{"trailing bytes", cat(header(1, 1), set, []byte{0, 0}), "2 bytes after the last of 1 operations (offset 17)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Decode(c.repr)
			require.Error(t, err)
			require.True(t, errors.Is(err, base.ErrCorruption), "%v", err)
			require.Contains(t, err.Error(), c.want)
			require.Equal(t, 0, r.Count())
		})
	}
}

// TestDecodeAcceptsLimits checks the boundary values Decode must accept.
func TestDecodeAcceptsLimits(t *testing.T) {
	set := []byte{1, 1, 'a', 1, 'v'}
	for _, repr := range [][]byte{
		header(0, 0),
		header(uint64(base.SeqNumMax), 0),
		cat(header(uint64(base.SeqNumMax), 1), set),
		cat(header(uint64(base.SeqNumMax)-1, 2), set, set),
		cat(header(1, 1), []byte{0}, binary.AppendUvarint(nil, MaxKeySize), make([]byte, MaxKeySize)),
	} {
		require.True(t, checkDecode(t, repr))
	}
}

// TestReaderAfterModification checks that a Reader whose bytes change under
// it reports corruption instead of misreading or panicking.
func TestReaderAfterModification(t *testing.T) {
	var b Batch
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("b"), []byte("2"))
	repr := bytes.Clone(b.Repr())
	r, err := Decode(repr)
	require.NoError(t, err)
	_, _, _, ok, err := r.Next()
	require.True(t, ok)
	require.NoError(t, err)
	repr[len(repr)-2] = 50 // the second value's length now runs past the end
	_, _, _, ok, err = r.Next()
	require.False(t, ok)
	require.True(t, errors.Is(err, base.ErrCorruption))
	require.Contains(t, err.Error(), "op 1 (SET)")
	_, _, _, ok, err = r.Next()
	require.False(t, ok)
	require.NoError(t, err)
}

// checkDecode is the property every input must satisfy: Decode either
// reports corruption or returns a batch that reads back without error and
// re-encodes to exactly the input (the encoding is canonical). It returns
// whether the input decoded.
func checkDecode(t testing.TB, data []byte) bool {
	r, err := Decode(data)
	if err != nil {
		if !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("error not marked corruption: %v", err)
		}
		return false
	}
	ops, err := readAll(r)
	if err != nil {
		t.Fatalf("Decode accepted a batch whose op fails to read: %v", err)
	}
	if len(ops) != r.Count() {
		t.Fatalf("read %d ops, header counts %d", len(ops), r.Count())
	}
	var b Batch
	build(&b, ops)
	b.SetSeqNum(r.SeqNum())
	if b.Err() != nil {
		t.Fatalf("decoded ops rejected by Batch: %v", b.Err())
	}
	if !bytes.Equal(b.Repr(), data) {
		t.Fatalf("decoded batch re-encodes differently:\n in  %x\n out %x", data, b.Repr())
	}
	return true
}

func TestTruncations(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for it := 0; it < 20; it++ {
		var b Batch
		build(&b, randomOps(rng, 1+rng.Intn(10)))
		if b.Len() > 4<<10 {
			// Every prefix of a batch with a 16 KiB key adds little but time.
			it--
			continue
		}
		b.SetSeqNum(base.SeqNum(rng.Intn(1000)))
		repr := b.Repr()
		require.True(t, checkDecode(t, repr))
		for n := 0; n < len(repr); n++ {
			// Every prefix misses part of a counted operation.
			_, err := Decode(repr[:n])
			require.Error(t, err, "prefix of %d of %d bytes", n, len(repr))
			require.True(t, errors.Is(err, base.ErrCorruption))
		}
	}
}

func TestByteFlips(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	iterations := 20000
	if *long {
		iterations = 1000000
	}
	var valid, corrupt int
	var b Batch
	for it := 0; it < iterations; it++ {
		b.Reset()
		build(&b, randomOps(rng, 1+rng.Intn(6)))
		b.SetSeqNum(base.SeqNum(rng.Intn(1 << 20)))
		data := bytes.Clone(b.Repr())
		for flips := 1 + rng.Intn(3); flips > 0; flips-- {
			i := rng.Intn(len(data))
			if rng.Intn(2) == 0 {
				data[i] ^= 1 << rng.Intn(8)
			} else {
				data[i] = byte(rng.Intn(256))
			}
		}
		if checkDecode(t, data) {
			valid++
		} else {
			corrupt++
		}
	}
	// Flips in the seqnum or in key bytes leave a valid batch; flips in
	// lengths, kinds and counts mostly do not. Both outcomes must occur or
	// the test is not exercising what it claims.
	require.Greater(t, valid, iterations/20)
	require.Greater(t, corrupt, iterations/20)
	t.Logf("%d valid, %d corrupt", valid, corrupt)
}

func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	var b Batch
	ops := randomOps(rng, 50)
	build(&b, ops)
	repr := b.Repr()

	allocs := testing.AllocsPerRun(100, func() {
		r, err := Decode(repr)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, _, _, ok, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			n++
		}
		if n != len(ops) {
			t.Fatalf("read %d ops, want %d", n, len(ops))
		}
	})
	require.Zero(t, allocs, "Decode and Reader.Next")

	// Refilling a Reset batch reuses its buffer.
	allocs = testing.AllocsPerRun(100, func() {
		b.Reset()
		build(&b, ops)
		_ = b.Repr()
	})
	require.Zero(t, allocs, "refilling a reset Batch")
}

func TestErrorMessagesName(t *testing.T) {
	// The redactable form keeps op indexes and kinds readable.
	var b Batch
	b.DeleteRange([]byte("b"), []byte("a"))
	require.True(t, strings.HasPrefix(b.Err().Error(), "batch: DeleteRange (op 0)"), b.Err().Error())
}

func BenchmarkSet(b *testing.B) {
	key, value := make([]byte, 16), make([]byte, 8)
	var batch Batch
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			batch.Reset()
		}
		binary.BigEndian.PutUint64(key[8:], uint64(i))
		batch.Set(key, value)
	}
}

// BenchmarkSetReset builds batches of 100,000 operations, reset after
// each commit as entrylocation's checkpoint batch is (MaxBatchOps); it
// reports the CPU per Set, which varies less than wall time on a shared
// machine.
func BenchmarkSetReset(b *testing.B) {
	key, value := make([]byte, 16), make([]byte, 8)
	var batch Batch
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for i := 0; b.Loop(); i++ {
		if i%100_000 == 0 {
			batch.Reset()
		}
		binary.BigEndian.PutUint64(key[8:], uint64(i))
		batch.Set(key, value)
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSetLarge builds batches of 1M operations, as a checkpoint of
// a bookie with 1,000 active ledgers writes them (the bench's load).
func BenchmarkSetLarge(b *testing.B) {
	key, value := make([]byte, 16), make([]byte, 8)
	var batch Batch
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%(1<<20) == 0 {
			batch = Batch{}
		}
		binary.BigEndian.PutUint64(key[8:], uint64(i))
		batch.Set(key, value)
	}
}

func BenchmarkDecode(b *testing.B) {
	var batch Batch
	key, value := make([]byte, 16), make([]byte, 8)
	for i := 0; i < 1000; i++ {
		binary.BigEndian.PutUint64(key[8:], uint64(i))
		batch.Set(key, value)
	}
	repr := batch.Repr()
	b.SetBytes(int64(len(repr)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Decode(repr)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, _, _, ok, _ := r.Next()
			if !ok {
				break
			}
		}
	}
}

// TestResetRetainsCheckpointBuffers: Reset keeps the buffer of a batch the
// size of a checkpoint's commit (100,000 locations), so that the next
// commit does not grow it again, and drops a larger one.
func TestResetRetainsCheckpointBuffers(t *testing.T) {
	key, value := make([]byte, 16), make([]byte, 8)
	fill := func(b *Batch, n int) {
		for i := 0; i < n; i++ {
			binary.BigEndian.PutUint64(key[8:], uint64(i))
			b.Set(key, value)
		}
	}
	var b Batch
	fill(&b, 100_000)
	capBefore := cap(b.data)
	b.Reset()
	require.True(t, b.Empty())
	require.Equal(t, capBefore, cap(b.data), "a checkpoint's buffer is kept")
	fill(&b, 100_000)
	require.Equal(t, capBefore, cap(b.data), "and reused without growing")

	fill(&b, 300_000) // past maxRetainedSize
	require.Greater(t, cap(b.data), maxRetainedSize)
	b.Reset()
	require.Zero(t, cap(b.data), "an import's buffer is dropped")
}

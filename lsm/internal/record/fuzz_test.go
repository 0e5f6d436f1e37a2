package record

import (
	"bytes"
	"io"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
)

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic, must
// end with io.EOF, corruption or nothing else, and the records it returns
// must re-encode into a log that reads back identically and cleanly.
//
//	go test -run=^$ -fuzz=FuzzReader -fuzztime=30s ./lsm/internal/record/
func FuzzReader(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i, n := range []int{0, 10, 40000} {
		_, _ = w.WriteRecord(payload(i, n))
	}
	_ = w.Flush()
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:100])
	f.Add(rawLog(chunkFirst, chunkMiddle, chunkFull))

	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		var records [][]byte
		var err error
		for {
			var rec []byte
			rec, err = r.Next()
			if err != nil {
				break
			}
			records = append(records, append([]byte(nil), rec...))
		}
		if err != io.EOF && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if r.TornTailOffset() < 0 || r.TornTailOffset() > int64(len(data)) {
			t.Fatalf("TornTailOffset %d outside [0, %d]", r.TornTailOffset(), len(data))
		}
		if err == io.EOF && !r.TornTail() && !isZero(data[r.TornTailOffset():]) {
			t.Fatalf("clean end at %d but non-zero bytes follow", r.TornTailOffset())
		}
		var re bytes.Buffer
		w := NewWriter(&re)
		for _, rec := range records {
			if _, err := w.WriteRecord(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err == io.EOF && !r.TornTail() && !bytes.Equal(re.Bytes(), data[:r.TornTailOffset()]) {
			// A clean log has one encoding: the writer's.
			t.Fatalf("clean log does not re-encode to its own bytes")
		}
		got, r2, rerr := readAll(re.Bytes())
		if rerr != nil || r2.TornTail() || len(got) != len(records) {
			t.Fatalf("re-encoded log reads back %d of %d records, err %v", len(got), len(records), rerr)
		}
		for i := range got {
			if !bytes.Equal(got[i], records[i]) {
				t.Fatalf("record %d differs after re-encoding", i)
			}
		}
	})
}

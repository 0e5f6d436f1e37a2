package sstable

import (
	"encoding/binary"
	"io"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/stretchr/testify/require"
)

// discardFile is a table file that keeps nothing: the writer benchmarks
// measure encoding, not I/O.
type discardFile struct{ n int64 }

func (f *discardFile) Write(p []byte) (int, error)       { f.n += int64(len(p)); return len(p), nil }
func (f *discardFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (f *discardFile) Close() error                      { return nil }
func (f *discardFile) Sync() error                       { return nil }
func (f *discardFile) Datasync() error                   { return nil }
func (f *discardFile) WriteAt(p []byte, _ int64) (int, error) {
	return len(p), nil
}
func (f *discardFile) Size() (int64, error) { return f.n, nil }

// processCPU is the process's user and system CPU time in nanoseconds: on
// a shared machine, a benchmark's CPU per op varies less than its wall
// time per op.
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkWriterAdd writes entry-location tables with the default options:
// "flush" as a memtable flush writes them (every entry its own sequence
// number, as one batch assigns them), "bottom" as a compaction into the
// last level does (sequence number 0). A table holds one batch of the
// bench's load (1,000 entries of each of 1,000 ledgers); ns/op is per key.
func BenchmarkWriterAdd(b *testing.B) {
	const ledgers = 1000
	for _, shape := range []string{"flush", "bottom"} {
		b.Run(shape, func(b *testing.B) {
			var key [16]byte
			var val [8]byte
			var w *Writer
			f := &discardFile{}
			i := 0
			var raw, stored uint64
			cpu0 := processCPU()
			// The batch order of the bench: entries [k·1000, (k+1)·1000)
			// of every ledger, as consecutive keys.
			for n := 0; n < b.N; n++ {
				if w == nil {
					var err error
					f.n = 0
					w, err = NewWriter(f, "bench", WriterOptions{})
					require.NoError(b, err)
				}
				ledger, entry := uint64(i/1000%ledgers), uint64(i%1000+i/(1000*ledgers)*1000)
				binary.BigEndian.PutUint64(key[:8], ledger)
				binary.BigEndian.PutUint64(key[8:], entry)
				binary.BigEndian.PutUint64(val[:], 1<<32+uint64(i)*1028)
				seq := base.SeqNum(0)
				if shape == "flush" {
					seq = base.SeqNum(ledger*1000 + entry%1000 + 1)
				}
				if err := w.Add(base.MakeInternalKey(key[:], seq, base.KindSet), val[:]); err != nil {
					b.Fatal(err)
				}
				i++
				if i%(1000*ledgers) == 0 {
					props, err := w.Close()
					require.NoError(b, err)
					raw, stored = raw+props.DataBytes, stored+props.DataStoredBytes
					w = nil
				}
			}
			if w != nil {
				props, err := w.Close()
				require.NoError(b, err)
				raw, stored = raw+props.DataBytes, stored+props.DataStoredBytes
			}
			b.ReportMetric(float64(stored)/float64(raw), "stored/raw")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

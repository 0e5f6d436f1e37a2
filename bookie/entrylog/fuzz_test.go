package entrylog

import (
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
)

// FuzzScan feeds arbitrary bytes to the entry log scanner as a log file:
// it must stop with an error or a torn-tail report, never panic.
func FuzzScan(f *testing.F) {
	fs := vfs.NewMem()
	l, err := Open("seed", &Options{FS: fs})
	if err != nil {
		f.Fatal(err)
	}
	for e := int64(0); e < 3; e++ {
		if _, err := l.AddEntry(1, e, []byte("payload")); err != nil {
			f.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		f.Fatal(err)
	}
	seed := readAll(f, fs, l.LogPath(0))
	_ = l.Close()
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMem()
		if err := fs.MkdirAll("d", 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := fs.Create("d/0.log")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
		_, _ = Scan(fs, "d/0.log", func(*Record) error { return nil })
	})
}

func readAll(tb testing.TB, fs vfs.FS, path string) []byte {
	f, err := fs.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		tb.Fatal(err)
	}
	return b
}

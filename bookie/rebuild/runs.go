package rebuild

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"io"
	"slices"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// locationEntry is one location a rebuild found: entry (ledgerID,
// entryID) at location.
type locationEntry struct {
	ledgerID, entryID, location int64
}

// compareKeys orders entries as the index orders their keys: bytewise on
// the big-endian ids, so unsigned.
func compareKeys(a, b *locationEntry) int {
	if c := cmp.Compare(uint64(a.ledgerID), uint64(b.ledgerID)); c != 0 {
		return c
	}
	return cmp.Compare(uint64(a.entryID), uint64(b.entryID))
}

// sortRun sorts a run by key and keeps, of several copies of an entry, the
// one at the greatest location: the entry logs are scanned in ascending
// id and offset, so that is the copy written last ("a later log's copy
// wins", as upstream's rebuild).
func sortRun(run []locationEntry) []locationEntry {
	slices.SortFunc(run, func(a, b locationEntry) int {
		if c := compareKeys(&a, &b); c != 0 {
			return c
		}
		return cmp.Compare(a.location, b.location)
	})
	out := run[:0]
	for i := range run {
		if len(out) > 0 && compareKeys(&out[len(out)-1], &run[i]) == 0 {
			out[len(out)-1] = run[i]
			continue
		}
		out = append(out, run[i])
	}
	return out
}

// runRecordSize is the size of an entry in a spilled run file: three
// big-endian words (a temporary file, removed after the rebuild).
const runRecordSize = 24

// writeRun spills a sorted run to path on fs. It is not synced: a run
// lives only as long as the rebuild.
func writeRun(fs vfs.FS, path string, run []locationEntry) error {
	f, err := fs.Create(path)
	if err != nil {
		return errors.Wrap(err, "bookie: rebuild: creating a run file")
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var rec [runRecordSize]byte
	for i := range run {
		binary.BigEndian.PutUint64(rec[0:], uint64(run[i].ledgerID))
		binary.BigEndian.PutUint64(rec[8:], uint64(run[i].entryID))
		binary.BigEndian.PutUint64(rec[16:], uint64(run[i].location))
		if _, err := w.Write(rec[:]); err != nil {
			_ = f.Close()
			return errors.Wrapf(err, "bookie: rebuild: writing %s", path)
		}
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return errors.Wrapf(err, "bookie: rebuild: writing %s", path)
}

// runReader reads a spilled run.
type runReader struct {
	path string
	f    vfs.File
	r    *bufio.Reader
	cur  locationEntry
}

func openRun(fs vfs.FS, path string) (*runReader, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "bookie: rebuild: opening a run file")
	}
	size, err := f.Size()
	if err != nil {
		_ = f.Close()
		return nil, errors.Wrapf(err, "bookie: rebuild: opening %s", path)
	}
	return &runReader{path: path, f: f, r: bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10)}, nil
}

// next reads the next entry; false at the end.
func (r *runReader) next() (bool, error) {
	var rec [runRecordSize]byte
	if _, err := io.ReadFull(r.r, rec[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, errors.Wrapf(err, "bookie: rebuild: reading %s", r.path)
	}
	r.cur = locationEntry{
		ledgerID: int64(binary.BigEndian.Uint64(rec[0:])),
		entryID:  int64(binary.BigEndian.Uint64(rec[8:])),
		location: int64(binary.BigEndian.Uint64(rec[16:])),
	}
	return true, nil
}

// runHeap orders run readers by their current entry's key.
type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return compareKeys(&h[i].cur, &h[j].cur) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// mergeRuns merges the spilled runs in key order, keeping of the copies
// of an entry the one at the greatest location, and calls emit for each
// entry. Runs overlap in keys (every log holds entries of many ledgers):
// this merge is what makes the output tables disjoint.
func mergeRuns(fs vfs.FS, paths []string, emit func(e *locationEntry) error) error {
	h := make(runHeap, 0, len(paths))
	defer func() {
		for _, r := range h {
			_ = r.f.Close()
		}
	}()
	for _, p := range paths {
		r, err := openRun(fs, p)
		if err != nil {
			return err
		}
		ok, err := r.next()
		if err != nil || !ok {
			_ = r.f.Close()
			if err != nil {
				return err
			}
			continue
		}
		h = append(h, r)
	}
	heap.Init(&h)
	for h.Len() > 0 {
		best := h[0].cur
		for h.Len() > 0 && compareKeys(&h[0].cur, &best) == 0 {
			r := h[0]
			if r.cur.location > best.location {
				best.location = r.cur.location
			}
			ok, err := r.next()
			if err != nil {
				return err
			}
			if ok {
				heap.Fix(&h, 0)
			} else {
				_ = r.f.Close()
				heap.Pop(&h)
			}
		}
		if err := emit(&best); err != nil {
			return err
		}
	}
	return nil
}

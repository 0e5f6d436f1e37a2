package benchmark

import (
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
)

// diskLimits is what the disk under a directory does at most, measured in
// the same run as the storage phases, so that their MB/s read as a
// fraction of it.
type diskLimits struct {
	// WriteMBPerSec: one file written sequentially in 1 MiB writes and
	// fsynced once at the end, fsync included.
	WriteMBPerSec float64
	// ReadMBPerSec: that file read back sequentially in 1 MiB reads after
	// its pages were dropped from the page cache (posix_fadvise
	// DONTNEED); ReadCached says the drop failed and the number is the
	// page cache's.
	ReadMBPerSec float64
	ReadCached   bool
	// FsyncsPerSec: 4 KiB appends each followed by an fsync, for a
	// quarter of a second.
	FsyncsPerSec float64
}

// probeDisk measures diskLimits with a file of size bytes in dir, which
// it removes.
func probeDisk(dir string, size int64) (diskLimits, error) {
	var l diskLimits
	path := filepath.Join(dir, "disk-probe")
	defer os.Remove(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return l, errors.Wrap(err, "disk probe")
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8) // not all zeros: some file systems compress
	}
	start := time.Now()
	for written := int64(0); written < size; written += int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			return l, errors.Wrap(err, "disk probe: write")
		}
	}
	if err := f.Sync(); err != nil {
		return l, errors.Wrap(err, "disk probe: fsync")
	}
	l.WriteMBPerSec = float64(size) / time.Since(start).Seconds() / 1e6

	l.ReadCached = dropCachedPages(f) != nil
	if _, err := f.Seek(0, 0); err != nil {
		return l, errors.Wrap(err, "disk probe: seek")
	}
	start = time.Now()
	var read int64
	for read < size {
		n, err := f.Read(buf)
		read += int64(n)
		if err != nil {
			return l, errors.Wrap(err, "disk probe: read")
		}
	}
	l.ReadMBPerSec = float64(read) / time.Since(start).Seconds() / 1e6

	small := buf[:4096]
	start = time.Now()
	fsyncs := 0
	for time.Since(start) < 250*time.Millisecond {
		if _, err := f.Write(small); err != nil {
			return l, errors.Wrap(err, "disk probe: append")
		}
		if err := f.Sync(); err != nil {
			return l, errors.Wrap(err, "disk probe: fsync")
		}
		fsyncs++
	}
	l.FsyncsPerSec = float64(fsyncs) / time.Since(start).Seconds()
	return l, nil
}

// dropCachedPages asks the kernel to drop f's clean pages from the page
// cache (posix_fadvise(POSIX_FADV_DONTNEED) over the whole file).
func dropCachedPages(f *os.File) error {
	const fadvDontNeed = 4
	_, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// writeExtra is the add-entry row's extra fields: the storage's MB/s and,
// when the disk was measured, the disk's rates and the storage's fraction
// of its sequential write rate.
func (l diskLimits) writeExtra(mbPerSec float64) map[string]float64 {
	x := map[string]float64{"mb_per_sec": mbPerSec, "checkpointed": 1}
	if l.WriteMBPerSec > 0 {
		x["disk_write_mb_per_sec"] = l.WriteMBPerSec
		x["disk_fsyncs_per_sec"] = l.FsyncsPerSec
		x["fraction_of_disk_write"] = mbPerSec / l.WriteMBPerSec
	}
	return x
}

// readExtra is the read-entry row's: the payload MB/s read and, when the
// disk was measured, its sequential read rate and the storage's fraction
// of it (random 1 KiB reads, mostly from the page cache after add-entry,
// against a cold sequential read: above 1 is possible).
func (l diskLimits) readExtra(mbPerSec float64) map[string]float64 {
	x := map[string]float64{"mb_per_sec": mbPerSec}
	if l.ReadMBPerSec > 0 {
		x["disk_read_mb_per_sec"] = l.ReadMBPerSec
		x["fraction_of_disk_read"] = mbPerSec / l.ReadMBPerSec
		if l.ReadCached {
			x["disk_read_cached"] = 1
		}
	}
	return x
}

// directAlign is the alignment of O_DIRECT reads: offsets, lengths and
// buffers in multiples of it (the page size; file systems ask 512 or 4096).
const directAlign = 4096

// randomReads is the disk's random-read rate at one read size and
// concurrency, measured in the same run as the disk-bound read phases so
// that their ops/s read as a fraction of it.
type randomReads struct {
	// ReadSize is the bytes of each read: the data block size rounded up
	// to directAlign.
	ReadSize int
	// Threads is how many goroutines read at once (the phases' --threads).
	Threads int
	// ReadsPerSec and MBPerSec are the rates of all threads together.
	ReadsPerSec, MBPerSec float64
	// FileBytes is the size of the files read.
	FileBytes int64
	// CPUMicrosPerRead is the process's CPU (user and system, getrusage)
	// per read while the probe ran: what a read from the disk costs the
	// kernel without the page cache.
	CPUMicrosPerRead float64
}

// probeRandomReads measures random reads of readSize bytes (rounded up to
// directAlign) at aligned random offsets of the files, chosen in
// proportion to their sizes, from threads goroutines for d. The reads are
// O_DIRECT: they never touch the page cache, so they measure the disk (and
// whatever cache sits below the kernel, which the engines' reads go
// through too). Files smaller than one read are left out.
func probeRandomReads(files []storeFile, readSize, threads int, d time.Duration) (randomReads, error) {
	readSize = (readSize + directAlign - 1) / directAlign * directAlign
	res := randomReads{ReadSize: readSize, Threads: threads}
	var fds []*os.File
	var ends []int64 // cumulative usable bytes: file i covers [ends[i-1], ends[i])
	defer func() {
		for _, f := range fds {
			_ = f.Close()
		}
	}()
	for _, sf := range files {
		if sf.size < int64(readSize) {
			continue
		}
		f, err := os.OpenFile(sf.path, os.O_RDONLY|syscall.O_DIRECT, 0)
		if err != nil {
			return res, errors.Wrapf(err, "random-read probe: opening %s with O_DIRECT", sf.path)
		}
		fds = append(fds, f)
		usable := (sf.size - int64(readSize)) / directAlign * directAlign
		prev := int64(0)
		if len(ends) > 0 {
			prev = ends[len(ends)-1]
		}
		ends = append(ends, prev+usable+directAlign)
		res.FileBytes += sf.size
	}
	if len(fds) == 0 {
		return res, errors.Newf("random-read probe: no file of at least %d bytes", readSize)
	}
	total := ends[len(ends)-1]
	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			// An anonymous mapping is page-aligned, as O_DIRECT wants.
			buf, err := syscall.Mmap(-1, 0, readSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				errOnce.Do(func() { firstErr = errors.Wrap(err, "random-read probe: buffer") })
				stop.Store(true)
				return
			}
			defer func() { _ = syscall.Munmap(buf) }()
			rng := rand.New(rand.NewSource(seed))
			var n int64
			for !stop.Load() {
				pos := rng.Int63n(total) / directAlign * directAlign
				i := sort.Search(len(ends), func(i int) bool { return ends[i] > pos })
				off := pos
				if i > 0 {
					off -= ends[i-1]
				}
				if _, err := fds[i].ReadAt(buf, off); err != nil {
					errOnce.Do(func() {
						firstErr = errors.Wrapf(err, "random-read probe: %d bytes at %d of %s", readSize, off, fds[i].Name())
					})
					stop.Store(true)
					break
				}
				n++
			}
			reads.Add(n)
		}(int64(t) + 1)
	}
	start, cpu0 := time.Now(), sampleProcess().cpu
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	secs := time.Since(start).Seconds()
	res.CPUMicrosPerRead = float64((sampleProcess().cpu - cpu0).Microseconds()) / float64(max(reads.Load(), 1))
	res.ReadsPerSec = float64(reads.Load()) / secs
	res.MBPerSec = res.ReadsPerSec * float64(readSize) / 1e6
	return res, nil
}

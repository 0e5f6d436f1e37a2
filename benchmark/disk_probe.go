package benchmark

import (
	"os"
	"path/filepath"
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

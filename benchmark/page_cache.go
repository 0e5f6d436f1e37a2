package benchmark

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/cockroachdb/errors"
)

// storeFile is one regular file of a store's directory.
type storeFile struct {
	path string
	size int64
}

// storeFiles lists the regular files under dir (the store's tables, logs
// and manifests, whatever the engine keeps there).
func storeFiles(dir string) ([]storeFile, error) {
	var files []storeFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, storeFile{path: path, size: info.Size()})
		return nil
	})
	return files, errors.Wrapf(err, "listing %s", dir)
}

func totalSize(files []storeFile) int64 {
	var n int64
	for _, f := range files {
		n += f.size
	}
	return n
}

// dropFromPageCache writes back and then drops every page of the files
// from the page cache (fdatasync, posix_fadvise(POSIX_FADV_DONTNEED)), so
// that the next read of any of them goes to the disk. It works on any
// process's files: the pages belong to the file, not to who read them.
func dropFromPageCache(files []storeFile) error {
	for _, sf := range files {
		f, err := os.Open(sf.path)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return errors.Wrap(err, "dropping from the page cache")
		}
		_ = syscall.Fdatasync(int(f.Fd())) // dirty pages cannot be dropped
		err = dropCachedPages(f)
		_ = f.Close()
		if err != nil {
			return errors.Wrapf(err, "posix_fadvise(DONTNEED) %s", sf.path)
		}
	}
	return nil
}

// residentBytesOf is how many bytes of the files are in the page cache
// now, page by page from mincore(2) on a read-only mapping of each (the
// mapping faults nothing in).
func residentBytesOf(files []storeFile) (int64, error) {
	page := int64(os.Getpagesize())
	var resident int64
	var vec []byte
	for _, sf := range files {
		f, err := os.Open(sf.path)
		if err != nil {
			if os.IsNotExist(err) { // compacted away
				continue
			}
			return 0, errors.Wrap(err, "page cache residency")
		}
		info, err := f.Stat()
		if err != nil || info.Size() == 0 {
			_ = f.Close()
			continue
		}
		size := info.Size()
		m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		_ = f.Close()
		if err != nil {
			return 0, errors.Wrapf(err, "page cache residency: mmap %s", sf.path)
		}
		pages := (size + page - 1) / page
		if int64(cap(vec)) < pages {
			vec = make([]byte, pages)
		}
		vec = vec[:pages]
		_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0])))
		_ = syscall.Munmap(m)
		if errno != 0 {
			return 0, errors.Wrapf(errno, "page cache residency: mincore %s", sf.path)
		}
		for _, v := range vec {
			if v&1 != 0 {
				resident += page
			}
		}
	}
	return resident, nil
}

// residencySampler samples how much of a store's files is in the page
// cache every interval while a reader runs: the check that the disk-bound
// mode kept them out.
type residencySampler struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu                sync.Mutex
	samples, sumBytes int64
	maxBytes          int64
	err               error
}

func startResidencySampler(dir string, every time.Duration) *residencySampler {
	s := &residencySampler{stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample(dir)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *residencySampler) sample(dir string) {
	// The file list is taken each time: an engine may compact while it
	// reads (Pebble's table statistics, bookie-index's idle compaction).
	files, err := storeFiles(dir)
	var n int64
	if err == nil {
		n, err = residentBytesOf(files)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	s.samples++
	s.sumBytes += n
	s.maxBytes = max(s.maxBytes, n)
}

// finish stops sampling and returns the largest and the mean resident
// bytes over the samples.
func (s *residencySampler) finish() (maxBytes, meanBytes int64, err error) {
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxBytes, s.sumBytes / max(s.samples, 1), s.err
}

// pageCacheKeeper keeps a store's files out of the page cache while a
// reader runs: every interval it drops the pages of every file under the
// store's directory (posix_fadvise(DONTNEED), which drops clean pages
// whoever read them). A page a reader brings in stays at most one
// interval, so a lookup finds a block in the page cache only if a lookup
// read it within the interval before. The file list is read again every
// second (an engine may compact while it reads); files stay open between
// drops.
type pageCacheKeeper struct {
	dir  string
	stop chan struct{}
	done chan struct{}

	// Written by the keeper's goroutine, read after finish.
	files map[string]*os.File
	drops int64
	err   error
}

func startPageCacheKeeper(dir string, every time.Duration) *pageCacheKeeper {
	k := &pageCacheKeeper{dir: dir, stop: make(chan struct{}), done: make(chan struct{}), files: map[string]*os.File{}}
	go func() {
		defer close(k.done)
		t := time.NewTicker(every)
		defer t.Stop()
		listed := time.Time{}
		for {
			if time.Since(listed) >= time.Second {
				k.relist()
				listed = time.Now()
			}
			k.drop()
			select {
			case <-k.stop:
				return
			case <-t.C:
			}
		}
	}()
	return k
}

func (k *pageCacheKeeper) relist() {
	files, err := storeFiles(k.dir)
	if err != nil {
		k.fail(err)
		return
	}
	seen := map[string]bool{}
	for _, sf := range files {
		seen[sf.path] = true
		if k.files[sf.path] != nil {
			continue
		}
		f, err := os.Open(sf.path)
		if err != nil {
			if !os.IsNotExist(err) {
				k.fail(errors.Wrap(err, "keeping the store out of the page cache"))
			}
			continue
		}
		k.files[sf.path] = f
	}
	for path, f := range k.files {
		if !seen[path] { // deleted: let its space go
			_ = f.Close()
			delete(k.files, path)
		}
	}
}

func (k *pageCacheKeeper) drop() {
	for path, f := range k.files {
		if err := dropCachedPages(f); err != nil {
			k.fail(errors.Wrapf(err, "posix_fadvise(DONTNEED) %s", path))
		}
	}
	k.drops++
}

func (k *pageCacheKeeper) fail(err error) {
	if k.err == nil {
		k.err = err
	}
}

// finish stops the keeper, closes its files and says how many times it
// dropped them.
func (k *pageCacheKeeper) finish() (drops int64, err error) {
	close(k.stop)
	<-k.done
	for _, f := range k.files {
		_ = f.Close()
	}
	return k.drops, k.err
}

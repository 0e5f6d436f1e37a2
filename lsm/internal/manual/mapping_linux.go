//go:build linux

package manual

import (
	"syscall"

	"github.com/cockroachdb/errors"
)

// mapMemory returns size bytes of fresh anonymous memory, readable and
// writable or (rw false, for invariants builds) inaccessible until
// protect opens it.
func mapMemory(size int, rw bool) ([]byte, error) {
	prot := syscall.PROT_NONE
	if rw {
		prot = syscall.PROT_READ | syscall.PROT_WRITE
	}
	m, err := syscall.Mmap(-1, 0, size, prot, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, errors.Wrapf(err, "mmap of %d bytes", size)
	}
	return m, nil
}

// Map returns size bytes of fresh, zeroed memory outside the Go heap (an
// anonymous private mapping), for a user that manages one large buffer
// itself: a memtable's arena. Only the pages written become resident.
// Unmap gives it back; nothing may use it afterwards.
func Map(size int) ([]byte, error) { return mapMemory(size, true) }

// Unmap gives back memory from Map.
func Unmap(m []byte) { unmapMemory(m) }

// unmapMemory gives a mapping back to the system.
func unmapMemory(m []byte) {
	if err := syscall.Munmap(m); err != nil {
		// Only a bad address or length fails, which would be a bug here.
		panic(errors.AssertionFailedf("manual: munmap of %d bytes: %v", len(m), err))
	}
}

// protect makes whole pages readable and writable, or inaccessible (so that
// a stale read of freed memory faults). Used by invariants builds only,
// where every run is page-aligned.
func protect(b []byte, rw bool) {
	prot := syscall.PROT_NONE
	if rw {
		prot = syscall.PROT_READ | syscall.PROT_WRITE
	}
	if err := syscall.Mprotect(b, prot); err != nil {
		panic(errors.AssertionFailedf("manual: mprotect of %d bytes: %v", len(b), err))
	}
}

// poison fills freed memory with poisonByte.
func poison(b []byte) {
	for i := range b {
		b[i] = poisonByte
	}
}

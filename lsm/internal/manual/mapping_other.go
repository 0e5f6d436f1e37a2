//go:build !linux

package manual

// Elsewhere than Linux an arena is a byte slice on the Go heap. It holds
// no pointers, so the collector never scans it; freed buffers are reused
// by the allocator, so they are not garbage either. Only the page
// protection of invariants builds is missing.

// Map returns size bytes of zeroed memory for a user that manages one
// large buffer itself; here, a byte slice on the Go heap.
func Map(size int) ([]byte, error) { return mapMemory(size, true) }

// Unmap gives back memory from Map.
func Unmap(m []byte) { unmapMemory(m) }

func mapMemory(size int, rw bool) ([]byte, error) { return make([]byte, size), nil }

func unmapMemory(m []byte) {}

func protect(b []byte, rw bool) {}

func poison(b []byte) {
	for i := range b {
		b[i] = poisonByte
	}
}

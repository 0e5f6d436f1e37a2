//go:build !linux

package manual

// Elsewhere than Linux an arena is a byte slice on the Go heap. It holds
// no pointers, so the collector never scans it; freed buffers are reused
// by the allocator, so they are not garbage either. Only the page
// protection of invariants builds is missing.

func mapMemory(size int, rw bool) ([]byte, error) { return make([]byte, size), nil }

func unmapMemory(m []byte) {}

func protect(b []byte, rw bool) {}

func poison(b []byte) {
	for i := range b {
		b[i] = poisonByte
	}
}
